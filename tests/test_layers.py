"""The import graph of the package, read from the source: the layers import only downwards
(game < net < search < train < play), also inside functions, and no modules import each other
at their tops. Inside play/, the engine stands alone and its checks use only the engine."""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ("game", "net", "search", "train", "play")


def modules() -> dict[str, str]:
    """Module name -> file, for every module of the package."""
    found = {}
    for folder, _, files in os.walk(os.path.join(ROOT, "gomoku")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[module.removesuffix(".__init__")] = path
    return found


def imports(path: str, top_only: bool) -> set[str]:
    """The gomoku modules (or names in them) a file imports: at its top, or anywhere."""
    with open(path) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in tree.body if top_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.split(".")[0] == "gomoku"}


def layer(module: str):
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def test_no_layer_imports_from_a_layer_above_it():
    upward = []
    for module, path in modules().items():
        own = layer(module)
        for name in imports(path, top_only=False):
            if own is not None and layer(name) is not None and layer(name) > own:
                upward.append(f"{module} imports {name}")
    assert upward == []


def test_no_modules_import_each_other_at_their_tops():
    found = modules()
    graph = {m: {n for n in imports(p, top_only=True) if n in found and n != m} for m, p in found.items()}
    cycles, done = [], set()

    def visit(module, path):
        if module in path:
            cycles.append(path[path.index(module):] + [module])
            return
        if module in done:
            return
        for name in graph[module]:
            visit(name, path + [module])
        done.add(module)

    for module in graph:
        visit(module, [])
    assert cycles == []


def test_the_engine_stands_alone_and_its_checks_use_only_it():
    allowed = {"gomoku.play.engine": ("gomoku.play.engine.",),
               "gomoku.play.engine_check": ("gomoku.play.engine.", "gomoku.play.engine_check.")}
    wrong = []
    for module, path in modules().items():
        for package, inside in allowed.items():
            if module == package or module.startswith(package + "."):
                wrong += [f"{module} imports {name}" for name in imports(path, top_only=False)
                          if name.startswith("gomoku.play.") and not (name + ".").startswith(inside)]
    assert wrong == []


def test_the_layering_test_sees_an_upward_import(tmp_path):
    # The check itself: a lower layer's late import of play is found.
    source = tmp_path / "late.py"
    source.write_text("def f():\n    from gomoku.play.match import Match\n")
    assert "gomoku.play.match" in imports(str(source), top_only=False)
    assert "gomoku.play.match" not in imports(str(source), top_only=True)
    assert layer("gomoku.play.match") > layer("gomoku.search.players")

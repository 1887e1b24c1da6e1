"""The import graph of the package, read from the source: the layers import only downwards
(game < net < search < actors < train < play), the modules that serve them all (util, interrupt,
progress, processes) import none of them, and no modules import each other, at their tops or inside
functions. Inside play/, the engine stands alone; the developer tools (devtools/) stay outside the package."""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS = ("game", "net", "search", "actors", "train", "play")
BASE = ("gomoku", "gomoku.util", "gomoku.interrupt", "gomoku.progress", "gomoku.processes")  # below every layer


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


def imports(path: str, top_only: bool, package: str | None = "gomoku") -> set[str]:
    """The modules (or names in them) of ``package`` (None: of any) a file imports: at its top, or anywhere."""
    with open(path) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in tree.body if top_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if package is None or name.split(".")[0] == package}


def layer(module: str):
    """The module's layer (-1 for the modules under them all), None for the commands above them."""
    if module in BASE:
        return -1
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def import_graph(top_only: bool) -> dict[str, set[str]]:
    """Module -> the other gomoku modules it imports (a name imported from a module counts as the module)."""
    found = modules()
    return {m: {n for n in imports(p, top_only) if n in found and n != m} for m, p in found.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of a graph, each as the modules along it back to the first."""
    found, done = [], set()

    def visit(module, path):
        if module in path:
            found.append(path[path.index(module):] + [module])
            return
        if module in done:
            return
        for name in sorted(graph.get(module, ())):
            visit(name, path + [module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


def test_no_layer_imports_from_a_layer_above_it():
    upward = []
    for module, path in modules().items():
        own = layer(module)
        for name in imports(path, top_only=False):
            if own is not None and layer(name) is not None and layer(name) > own:
                upward.append(f"{module} imports {name}")
    assert upward == []


def test_no_modules_import_each_other_even_inside_functions():
    # A late import inside a function hides a cycle from Python's import machinery, not from this.
    assert cycles(import_graph(top_only=False)) == []


def test_the_engine_stands_alone():
    wrong = []
    for module, path in modules().items():
        if module == "gomoku.play.engine" or module.startswith("gomoku.play.engine."):
            wrong += [f"{module} imports {name}" for name in imports(path, top_only=False)
                      if name.startswith("gomoku.play.") and not name.startswith("gomoku.play.engine.")]
    assert wrong == []


def test_the_developer_tools_stand_apart():
    # The package never imports devtools/; the engine's checks use only the engine and its process from play/.
    upward = [f"{module} imports devtools" for module, path in modules().items()
              if any(name.split(".")[0] == "devtools" for name in imports(path, top_only=False, package=None))]
    wrong = []
    for folder, _, files in os.walk(os.path.join(ROOT, "devtools", "engine_check")):
        for name in files:
            if name.endswith(".py"):
                wrong += [f"{name} imports {imported}" for imported in imports(os.path.join(folder, name), top_only=False)
                          if imported.startswith("gomoku.play.") and not imported.startswith("gomoku.play.engine.")
                          and not imported.startswith("gomoku.play.engine_process")]
    assert upward == [] and wrong == []


def test_the_layering_test_sees_an_upward_import(tmp_path):
    # The check itself: a lower layer's late import of play is found.
    source = tmp_path / "late.py"
    source.write_text("def f():\n    from gomoku.play.match import Match\n")
    assert "gomoku.play.match" in imports(str(source), top_only=False)
    assert "gomoku.play.match" not in imports(str(source), top_only=True)
    assert layer("gomoku.play.match") > layer("gomoku.search.player_specs")


def test_the_cycle_test_sees_a_cycle_closed_inside_a_function(tmp_path):
    # The check itself: b imports a only inside a function, and the cycle is still found.
    (tmp_path / "a.py").write_text("from gomoku.x.b import f\n")
    (tmp_path / "b.py").write_text("def f():\n    from gomoku.x.a import g\n")
    graph = {f"gomoku.x.{name}": {n for n in imports(str(tmp_path / f"{name}.py"), top_only=False)
                                  if n in ("gomoku.x.a", "gomoku.x.b")} for name in "ab"}
    assert cycles(graph) == [["gomoku.x.a", "gomoku.x.b", "gomoku.x.a"]]
    assert cycles({"gomoku.x.a": {"gomoku.x.b"}, "gomoku.x.b": set()}) == []


def test_the_modules_under_the_layers_are_known():
    # util, interrupt, progress and processes are the bottom: the upward test holds them to it.
    assert set(BASE) <= set(modules())
    assert all(layer(m) == -1 for m in BASE) and layer("gomoku.game.board") == 0


def test_the_upper_layers_reach_the_actors_only_through_the_package_face():
    # ``from gomoku.actors import NAME``, NAME one of the package's PUBLIC names; never one of its modules.
    from gomoku.actors import PUBLIC

    found = modules()
    wrong = []
    for module, path in found.items():
        if module == "gomoku.actors" or module.startswith("gomoku.actors."):
            continue
        for name in imports(path, top_only=False):
            inside = name.startswith("gomoku.actors.")
            if inside and (name in found or name.removeprefix("gomoku.actors.") not in PUBLIC):
                wrong.append(f"{module} imports {name}")
    assert wrong == []


def test_the_actors_face_names_what_its_modules_define_and_a_worker_start_imports_nothing_through_it():
    import subprocess
    import sys

    import gomoku.actors as actors

    assert all(getattr(actors, name) is not None for name in actors.PUBLIC)
    code = ("import sys\nimport gomoku.actors.worker_start\n"
            "print(sorted(m for m in sys.modules if m.startswith(('gomoku', 'numpy'))))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ast.literal_eval(done.stdout) == ["gomoku", "gomoku.actors", "gomoku.actors.worker_start",
                                                 "gomoku.processes"]

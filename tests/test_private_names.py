"""No module reads or writes another module's underscore names, read from the source as the layer
test reads the imports: no ``from X import _name``, and no ``obj._name`` on anything but ``self`` or
``cls`` unless the module itself defines ``_name`` (a function, a class, or an attribute it assigns
on ``self``, as a class method building an instance of its own class does). What is shared between
modules has a public name."""

import ast
import os

from tests.helpers import ROOT

ALLOWED = {("os", "_exit")}
"""the standard library's documented names that begin with an underscore"""

THIRD_PARTY = {
    # Ray's public state API does not say why an actor has not started: its actor table does.
    ("gomoku/actors/ray_actors.py", "handle._actor_id"),
    ("gomoku/actors/ray_actors.py", "ray._private"),
}
"""other libraries' internals that a module reads on purpose, each behind a fallback (the start of
the expression: what follows it is the same library's)"""


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def private_uses(source: str) -> list[tuple[int, str]]:
    """The lines and texts of one module's uses of other modules' underscore names."""
    tree = ast.parse(source)
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            own.add(node.attr)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.extend((node.lineno, f"from {node.module} import {a.name}") for a in node.names
                         if a.name.startswith("_") and not _dunder(a.name))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not _dunder(node.attr):
            holder = node.value
            if isinstance(holder, ast.Name) and (holder.id in ("self", "cls") or (holder.id, node.attr) in ALLOWED):
                continue
            if node.attr in own:
                continue
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_uses_another_modules_underscore_names():
    hits = []
    for folder, _, files in os.walk(os.path.join(ROOT, "gomoku")):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path) as f:
                    uses = private_uses(f.read())
                where = os.path.relpath(path, ROOT).replace(os.sep, "/")
                hits.extend(f"{where}:{line}: {text}" for line, text in uses
                            if not any(where == module and text.startswith(start) for module, start in THIRD_PARTY))
    assert not hits, "underscore names used outside their module:\n" + "\n".join(hits)


def test_the_scan_finds_each_kind_of_use():
    source = ("from gomoku.x import _hidden\n"
              "import gomoku.y as y\n"
              "y._table[0] = 1\n"
              "def f(player):\n"
              "    player._done = 3\n"
              "    return player._budget()\n")
    assert [text for _, text in private_uses(source)] == [
        "from gomoku.x import _hidden", "y._table", "player._done", "player._budget"]


def test_the_scan_passes_a_modules_own_names():
    source = ("import os\n"
              "class A:\n"
              "    def __init__(self):\n"
              "        self._state = 0\n"
              "    @classmethod\n"
              "    def make(cls):\n"
              "        a = cls()\n"
              "        a._state = 1\n"
              "        return a, a.__class__\n"
              "def _helper():\n"
              "    os._exit(0)\n")
    assert private_uses(source) == []

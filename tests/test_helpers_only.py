"""The test modules share helpers through ``tests.helpers`` and the other helper modules, never
through one another: a test module imported by another would run its module-level setup there,
and moving or renaming one test would break an unrelated file."""

import ast
import os

TESTS = os.path.dirname(os.path.abspath(__file__))


def imported_modules(path: str) -> set[str]:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_test_module_imports_another_test_module():
    offenders = []
    for name in sorted(os.listdir(TESTS)):
        if name.endswith(".py"):
            for module in imported_modules(os.path.join(TESTS, name)):
                parts = module.split(".")
                if parts[0] == "tests" and any(part.startswith("test_") for part in parts[1:]):
                    offenders.append(f"{name} imports {module}")
    assert not offenders, offenders


def test_the_check_sees_an_import_of_a_test_module(tmp_path):
    path = tmp_path / "test_x.py"
    path.write_text("def f():\n    from tests.test_mcts import HashEvaluator\n", encoding="utf-8")
    assert "tests.test_mcts" in imported_modules(str(path))


def test_every_test_the_slow_tier_names_exists():
    # A renamed test would otherwise leave the slow tier silently and slow down the fast one.
    from tests.conftest import SLOW_MODULES, SLOW_TESTS
    missing = [m for m in SLOW_MODULES if not os.path.exists(os.path.join(TESTS, f"{m}.py"))]
    for name in sorted(SLOW_TESTS):
        module, function = name.split("::")
        path = os.path.join(TESTS, f"{module}.py")
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        if not any(isinstance(n, ast.FunctionDef) and n.name == function for n in tree.body):
            missing.append(name)
    assert missing == []

"""docs/architecture.md's layout matches the package: every module it names exists, and it names
every module of the package.

The layout is the doc's first code block. A line that starts with ``gomoku/...`` (or, indented two
spaces, with a subpackage such as ``play/engine/``) opens the part of one folder; the names
``NAME.py`` in it and in the lines indented under it are that folder's modules. Parts outside the
package (scripts/, tests/, ...) are not checked here."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
MODULE = re.compile(r"(?<![\w/.])([\w/]+\.py)(?![\w'])")  # "train.py's" names a file outside the package


def listed(text: str) -> set[str]:
    """The package's module paths (relative to the repository) that the layout block names."""
    block = text.split("```", 2)[1]
    names, folder = set(), None
    for line in block.splitlines()[1:]:
        if line and not line[0].isspace():  # a top-level part
            head = line.split()[0].rstrip(",")
            folder = head.rsplit("/", 1)[0] + "/" if head.startswith("gomoku/") else None
        elif re.match(r"  [\w]+/[\w/]+/ ", line):  # a subpackage's part
            folder = "gomoku/" + line.split()[0]
        if folder is None:
            continue
        for name in MODULE.findall(line):
            names.add(name if name.startswith("gomoku/") else folder + name)
    return names


def package_modules() -> set[str]:
    return {str(path.relative_to(ROOT)) for path in (ROOT / "gomoku").rglob("*.py") if path.name != "__init__.py"}


def test_every_module_the_layout_names_exists():
    missing = sorted(name for name in listed(DOC.read_text()) if not (ROOT / name).is_file())
    assert missing == [], f"docs/architecture.md names modules that do not exist: {missing}"


def test_the_layout_names_every_module_of_the_package():
    unlisted = sorted(package_modules() - listed(DOC.read_text()))
    assert unlisted == [], f"docs/architecture.md does not name these modules: {unlisted}"


def test_the_parser_reads_folders_subpackages_and_skips_parts_outside_the_package():
    text = ("```\ngomoku/game/      rules (rules.py,\n                  board.py)\n"
            "  play/engine/    the engine (cli.py)\ngomoku/util.py, interrupt.py   helpers\n"
            "train.py, play.py run gomoku/train/cli.py\nscripts/          elo_ladder.py\n```\n")
    assert listed(text) == {"gomoku/game/rules.py", "gomoku/game/board.py", "gomoku/play/engine/cli.py",
                            "gomoku/util.py", "gomoku/interrupt.py"}

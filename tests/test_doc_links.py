"""Every relative link of the README and the guides in docs/ leads to a file that exists and, where
it names a section, to a heading of that file (as GitHub makes a heading's anchor)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")
FENCE = re.compile(r"^(```|~~~)")

pytestmark = pytest.mark.timeout(60)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.lower())  # a link in a heading keeps its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, seen, fenced = set(), {}, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            base = anchor(match.group(1))
            count = seen.get(base, 0)
            found.add(base if count == 0 else f"{base}-{count}")
            seen[base] = count + 1
    return found


def links(path: Path):
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            for target in LINK.findall(line):
                yield number, target


def test_the_anchor_of_a_heading_is_githubs():
    assert anchor("2026-11-27: The engine's Gumbel search against the clock") == \
        "2026-11-27-the-engines-gumbel-search-against-the-clock"
    assert anchor("`engine:COMMAND`: an engine as a player") == "enginecommand-an-engine-as-a-player"


def test_every_relative_link_of_the_docs_leads_somewhere():
    pages = [ROOT / "README.md", ROOT / "oneoffs" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for number, target in links(page):
            if re.match(r"[a-z]+:", target):  # https:, mailto: ...: not checked here
                continue
            file_part, _, section = target.partition("#")
            where = (page.parent / file_part).resolve() if file_part else page
            if not where.exists():
                broken.append(f"{page.name}:{number}: {target} (no such file)")
            elif section and where.suffix == ".md" and section not in anchors(where):
                broken.append(f"{page.name}:{number}: {target} (no such section)")
    assert not broken, "\n".join(broken)


def test_the_results_contents_list_every_entry_in_order():
    results = ROOT / "docs" / "results.md"
    text = results.read_text(encoding="utf-8")
    entries = [anchor(line[3:]) for line in text.splitlines() if line.startswith("## 20")]
    listed = [target[1:] for line in text.splitlines() if line.startswith("- [20")
              for target in LINK.findall(line)]
    assert listed == entries, "docs/results.md's Contents and its dated entries differ"

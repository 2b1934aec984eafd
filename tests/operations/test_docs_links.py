"""The docs link nothing outside the repository: every link of README.md, CONTRIBUTING.md,
CHANGELOG.md and docs/ names a file of the repository that exists (and a heading of it
that exists), and no web address is left to be linked by a Markdown renderer. Addresses
in code (examples, commands) are text, not links."""

import re
from pathlib import Path

import pytest

from tests.tasks.processes import ROOT

DOCUMENTS = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
    + list((ROOT / "docs").glob("*.md"))
)
FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.MULTILINE | re.DOTALL)
INDENTED_CODE = re.compile(r"^(?: {4}|\t).*$", re.MULTILINE)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
WEB_ADDRESS = re.compile(r"(?:https?|ftp)://|mailto:|www\.", re.IGNORECASE)


def prose(document: Path) -> str:
    """The document less its code: fenced blocks, indented blocks and code spans."""
    text = FENCE.sub("", document.read_text())
    return CODE_SPAN.sub("", INDENTED_CODE.sub("", text))


def anchors(document: Path) -> set[str]:
    """The ids a Markdown renderer gives the document's headings (GitHub's rule)."""
    ids = set()
    for line in FENCE.sub("", document.read_text()).splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            ids.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return ids


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_the_docs_link_only_files_of_the_repository(document):
    text = prose(document)
    assert not WEB_ADDRESS.search(text), WEB_ADDRESS.search(text)
    for target in LINK.findall(text):
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        assert linked.is_relative_to(ROOT), f"{document.name}: {target} leaves the repository"
        assert linked.exists(), f"{document.name}: {target} names no file"
        if anchor and linked.suffix == ".md":
            assert anchor in anchors(linked), f"{document.name}: {target} names no heading"

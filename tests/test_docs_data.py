"""docs/data holds what the docs cite and nothing else: every cited path exists, every file in
it is cited, and the whole stays small."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data"
MAX_DATA_BYTES = 1_500_000
DOC_PATTERNS = ["README.md", "CHANGELOG.md", "CONTRIBUTING.md", "docs/*.md", "examples/*.md"]
# A Markdown link's target, or a path written in backquotes.
CITATION = re.compile(r"\]\(([^)\s]+)\)|`([^`\s]+)`")


def docs() -> list[Path]:
    """The tracked Markdown files that may cite data (docs/data's own notes are data)."""
    listed = subprocess.run(
        ["git", "ls-files", "--", *DOC_PATTERNS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [ROOT / name for name in listed if not (ROOT / name).is_relative_to(DATA)]


def citations() -> dict[Path, list[Path]]:
    """Each path under docs/data that a doc names, with the docs that name it."""
    cited: dict[Path, list[Path]] = {}
    for doc in docs():
        for match in CITATION.finditer(doc.read_text()):
            target = (match[1] or match[2]).split("#")[0]
            # Relative to the doc's folder, or to the root when written as docs/data/...
            base = ROOT if target.startswith("docs/data/") else doc.parent
            path = Path(os.path.normpath(base / target))
            if DATA in path.parents:
                cited.setdefault(path, []).append(doc)
    return cited


def data_files() -> list[Path]:
    return sorted(path for path in DATA.rglob("*") if path.is_file())


def test_every_cited_data_path_exists():
    missing = [
        f"{doc.relative_to(ROOT)} cites {path.relative_to(ROOT)}, which does not exist"
        for path, citing in citations().items()
        if not path.exists()
        for doc in citing
    ]
    assert not missing, "\n".join(missing)


def test_every_data_file_is_cited():
    cited = citations()
    # A cited folder cites every file inside it.
    uncited = [
        str(path.relative_to(ROOT))
        for path in data_files()
        if path not in cited and not any(folder in cited for folder in path.parents)
    ]
    assert not uncited, "no doc cites these files; cite them or delete them:\n" + "\n".join(uncited)


def test_data_stays_small():
    total = sum(path.stat().st_size for path in data_files())
    assert total <= MAX_DATA_BYTES, (
        f"docs/data holds {total:,} bytes, more than {MAX_DATA_BYTES:,}: keep the files the "
        "docs cite, in their smallest form (tables, not plots)"
    )

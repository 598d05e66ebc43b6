"""The source distribution: metadata that holds for every wheel built from it (PEP 643), and
every file the docs link to."""

from __future__ import annotations

import email.parser
import re
import subprocess
import sys
import tarfile

import pytest

from helpers import ROOT

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> tarfile.TarFile:
    pytest.importorskip("scikit_build_core")  # the build backend; absent beside an installed wheel
    out = tmp_path_factory.mktemp("sdist")
    built = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, scikit_build_core.build as b; b.build_sdist(sys.argv[1])",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (archive,) = out.glob("vecadd-*.tar.gz")
    with tarfile.open(archive) as tar:
        yield tar


def test_torch_requirement_is_the_sources_range_and_marked_dynamic(sdist):
    (info,) = [
        m for m in sdist.getmembers() if m.name.count("/") == 1 and m.name.endswith("PKG-INFO")
    ]
    metadata = email.parser.Parser().parsestr(sdist.extractfile(info).read().decode())
    torch_requirements = [r for r in metadata.get_all("Requires-Dist") if r.startswith("torch")]
    # Each wheel pins the torch series it was built against, so the sdist cannot: it says so.
    assert torch_requirements == ["torch>=2.10"]
    assert "Requires-Dist" in (metadata.get_all("Dynamic") or [])


def test_every_file_the_docs_link_to_is_in_the_sdist(sdist):
    members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = []
    for document in documents:
        for target in LINK.findall(document.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            path = (document.parent / target).resolve().relative_to(ROOT.resolve())
            if (ROOT / path).is_file() and str(path) not in members:
                missing.append(f"{document.name} -> {path}")
    assert not missing, missing

"""``make docs``: the site builds from docs/ with ``mkdocs build --strict``, without a warning, and its nav
holds every page (a page left out of the nav, or a broken link or anchor, fails here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support import site_pages

ROOT = Path(__file__).resolve().parent.parent


def test_the_site_builds_strictly_without_a_warning(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).with_name("mkdocs")  # the dev extra installs it beside the venv's python
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    for page in site_pages():
        assert (tmp_path / "site" / page.replace(".md", ".html")).is_file(), page


def test_the_nav_holds_every_page_once() -> None:
    pages = site_pages()
    assert len(pages) == len(set(pages))
    assert sorted(pages) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))


def test_the_nav_follows_an_operator() -> None:
    """Install, add nodes, configure, find out why and fix, then the reference."""
    pages = site_pages()
    order = ["installation.md", "adding-nodes.md", "configuration.md", "doctor.md", "troubleshooting.md"]
    order += ["switching.md", "protocol.md", "architecture.md", "reliability.md", "performance.md", "python.md"]
    assert [p for p in pages if p in order] == order

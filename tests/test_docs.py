"""The README and docs/ describe the product as it is, with figures that cannot drift from their JSON."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GENERATED = {ROOT / "docs" / "benchmarks.md"}  # rendered from docs/bench/*.json, provenance lines included
PROSE = [README] + sorted(p for p in (ROOT / "docs").glob("*.md") if p not in GENERATED)

# Development history in user-facing text: issue numbers, sessions, measurement dates and loads,
# commit hashes. "session" alone is the driver's word and stays allowed.
HISTORY = {
    "an issue number": re.compile(r"(?i)\bissues?\s*#?\d+|(?<![\w&/])#\d+\b"),
    "a session": re.compile(r"(?i)\b(this|same|earlier|previous|last|next|that) session\b"),
    "a date": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
    "a load average": re.compile(r"(?i)\bload average"),
    "a commit hash": re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
    "earlier versions": re.compile(r"(?i)earlier versions|has not been re-run|predates"),
    "other engineers": re.compile(r"(?i)other engineers"),
}
# What docstrings, comments and help texts must not carry either (dates and hashes there are data:
# a lock file's format, a fake `java -version`).
CODE_HISTORY = ("an issue number", "a session", "other engineers")


def test_the_rendered_pages_match_the_benchmark_json():
    done = subprocess.run([sys.executable, "scripts/render_docs.py", "--check"], check=False, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_benchmark_json_records_its_provenance():
    for path in sorted((ROOT / "docs" / "bench").glob("*.json")):
        p = json.loads(path.read_text()).get("provenance")
        assert p, f"{path.name} has no provenance"
        assert p["command"] and p["date"] and p["git_revision"] and p["machine"]["cpus"], path.name


def test_the_readme_is_a_front_page():
    assert len(README.read_text().splitlines()) <= 250


@pytest.mark.parametrize("page", PROSE, ids=lambda p: p.name)
def test_no_development_history_in_the_prose(page):
    text = page.read_text()
    found = [f"{what}: {m.group(0)!r}" for what, pattern in HISTORY.items() for m in pattern.finditer(text)]
    assert not found, f"{page.relative_to(ROOT)}: {found}"


def test_no_development_history_in_docstrings_comments_or_help():
    code = [*ROOT.glob("gr_neo4j/**/*.py"), *ROOT.glob("loaders/*.py"), *ROOT.glob("scripts/**/*.py"), *ROOT.glob("cypher/*.cypher")]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in code for what in CODE_HISTORY for m in HISTORY[what].finditer(p.read_text())]
    assert not found, found


def test_the_readme_links_resolve():
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text()):
        if not target.startswith(("http://", "https://")):
            assert (ROOT / target).exists(), f"README links to {target}, which does not exist"

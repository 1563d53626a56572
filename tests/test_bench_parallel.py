"""scripts/benchlib/parallel.py: a benchmark's entries trained at once, each in a process of its own."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
from benchlib.parallel import fan_out, without

from gr_neo4j.provenance import command_line

CHILD = """
import argparse, json, sys
ap = argparse.ArgumentParser()
ap.add_argument("--configs", nargs="+")
ap.add_argument("--minutes")
ap.add_argument("--threads")
ap.add_argument("--out")
args = ap.parse_args()
if args.configs == ["bad"]:
    sys.exit(3)
if args.configs == ["slow"]:
    import time
    time.sleep(600)
entry = {"minutes": args.minutes, "threads": args.threads}
if args.minutes == "stamped":
    entry["provenance"] = {"command": " ".join(sys.argv), "date": "now"}
with open(args.out, "w") as f:
    json.dump({"configs": {c: entry for c in args.configs}}, f)
"""


def test_without_drops_the_options_and_all_their_values():
    argv = ["--minutes", "65", "--configs", "a=8,16,q,1e-3", "b=16,32,all,5e-4", "--jobs=2", "--out", "x.json", "--epochs", "2"]
    assert without(argv, ("--configs", "--jobs", "--out")) == ["--minutes", "65", "--epochs", "2"]


def test_each_value_runs_alone_with_its_share_of_the_cores(tmp_path, monkeypatch):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    argv = ["--minutes", "5", "--configs", "one", "two", "three", "--jobs", "2", "--out", "all.json"]
    got = fan_out(str(script), argv, "--configs", ["one", "two", "three"], "configs", 2, tmp_path)
    assert list(got) == ["one", "two", "three"]  # in the order asked, each from its own process
    assert all(v == {"minutes": "5", "threads": "1"} for v in got.values())


def test_each_entry_names_the_command_the_user_ran(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    argv = ["--minutes", "stamped", "--configs", "one", "two", "--jobs", "2", "--out", "all.json"]
    got = fan_out(str(script), argv, "--configs", ["one", "two"], "configs", 2, tmp_path)
    for entry in got.values():  # not the child's command, with its temporary --out and --threads
        assert entry["provenance"] == {"command": command_line([str(script), *argv]), "date": "now"}
        assert "all.json" in entry["provenance"]["command"]


def test_a_failed_child_is_one_line_naming_its_entry(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    with pytest.raises(SystemExit, match="--configs bad: its process failed"):
        fan_out(str(script), [], "--configs", ["fine", "bad"], "configs", 2, tmp_path)


def test_a_failed_child_stops_the_others(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    started = time.monotonic()
    with pytest.raises(SystemExit, match="--configs bad: its process failed"):
        fan_out(str(script), [], "--configs", ["slow", "bad"], "configs", 2, tmp_path)
    assert time.monotonic() - started < 300  # not held until the slow one ends
    alive = subprocess.run(["pgrep", "-f", str(script)], check=False, capture_output=True, text=True).stdout.split()
    assert alive == []

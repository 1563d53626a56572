"""Run the test command several times in a row on a machine held at a load average.

The suite's waits must hold on a busy machine, not only on an idle one. This script keeps the
one-minute load average at or above ``--load`` with busy-loop processes at normal priority (so the
suite really competes for the cores, unlike niced spinners that only raise the number), runs the
command ``--runs`` times in a row, stops at the first failure, and prints JSON: each run's exit
status and minutes, and the load averages sampled while the runs went on.

    python scripts/test_under_load.py --load 6 --runs 3 -- scripts/test.sh
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

SPIN = "while True: pass"


class LoadKeeper(threading.Thread):
    """Adds or removes busy loops every ``period`` seconds to hold the load average near a target."""

    def __init__(self, target: float, period: float = 20.0, most: int = 16) -> None:
        super().__init__(daemon=True)
        self.target, self.period, self.most = target, period, most
        self.spinners: list[subprocess.Popen] = []
        self.samples: list[float] = []
        self.recording = False
        self.done = threading.Event()

    def spin(self) -> None:
        self.spinners.append(subprocess.Popen([sys.executable, "-c", SPIN]))

    def run(self) -> None:
        for _ in range(int(self.target) - 1):
            self.spin()
        while not self.done.wait(self.period):
            one_minute = os.getloadavg()[0]
            if self.recording:
                self.samples.append(one_minute)
            # The one-minute average lags by about a minute: aim half a point above the target and
            # drop a spinner only a point above that, so other work on the machine takes the place
            # of spinners instead of piling on top of them.
            if one_minute < self.target + 0.5 and len(self.spinners) < self.most:
                self.spin()
            elif one_minute > self.target + 1.5 and self.spinners:
                self.spinners.pop().kill()

    def stop(self) -> None:
        self.done.set()
        for spinner in self.spinners:
            spinner.kill()
        for spinner in self.spinners:
            spinner.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", type=float, default=6.0, help="one-minute load average to hold")
    parser.add_argument("--runs", type=int, default=3, help="runs in a row")
    parser.add_argument("command", nargs="+", help="the test command, after --")
    args = parser.parse_args()

    keeper = LoadKeeper(args.load)
    keeper.start()
    runs = []
    try:
        while os.getloadavg()[0] < args.load:
            time.sleep(5)
        keeper.recording = True
        for index in range(args.runs):
            started = time.monotonic()
            print(f"==> run {index + 1} of {args.runs} at load {os.getloadavg()[0]:.1f}", flush=True)
            status = subprocess.call(args.command)
            runs.append({"exit": status, "minutes": round((time.monotonic() - started) / 60, 1)})
            if status != 0:
                break
    finally:
        keeper.stop()
    samples = keeper.samples or [0.0]
    print(json.dumps({
        "command": " ".join(args.command),
        "load_target": args.load,
        "runs": runs,
        "passed_in_a_row": sum(1 for run in runs if run["exit"] == 0),
        "load_1min": {
            "min": round(min(samples), 2),
            "median": round(statistics.median(samples), 2),
            "max": round(max(samples), 2),
            "share_at_or_above_target": round(sum(s >= args.load for s in samples) / len(samples), 3),
            "samples": len(samples),
        },
        "cores": os.cpu_count(),
    }, indent=2))
    return 0 if len(runs) == args.runs and all(run["exit"] == 0 for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())

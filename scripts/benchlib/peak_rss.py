"""The peak resident memory of this process over a block, sampled (ru_maxrss would include
whatever the process loaded before the block, e.g. the models)."""

from __future__ import annotations

import os
import threading
import time

import psutil


class PeakRss:
    """Samples this process's RSS every 50 ms while the ``with`` block runs; ``peak`` in bytes."""

    def __init__(self):
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        proc = psutil.Process(os.getpid())
        while not self._stop.is_set():
            self.peak = max(self.peak, proc.memory_info().rss)
            time.sleep(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

"""What a managed Neo4j holds in memory and on disk, for benchmarks.

* heap: ``dbms.queryJmx`` (the JVM's own MemoryMXBeans): used now, and the old generation's peak
  since start (what stayed live across collections; eden comes and goes);
* page cache: Community exposes no page-cache bean, so it is estimated from the process's
  anonymous resident memory (``RssAnon``: the heap, which ``AlwaysPreTouch`` makes resident whole,
  plus the page cache, which Neo4j allocates as pages are first read, plus the JVM's non-heap)
  minus the committed heap and non-heap; the size of the store files it caches (``*.db`` and the
  range indexes) says how much it could ever hold;
* the store: bytes under ``data/databases/neo4j`` (vector and fulltext indexes are Lucene files
  read through the OS cache, not the page cache) and the transaction logs.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from gr_neo4j.home.layout import layout_of
from gr_neo4j.home.pid import running_pid
from gr_neo4j.settings import Settings

MB = 2**20
JMX_MEMORY = "java.lang:type=Memory"
JMX_OLD_GEN = "java.lang:type=MemoryPool,name=G1 Old Gen"
LUCENE_INDEX_DIRS = ("vector", "fulltext", "lucene")  # under schema/index/: providers named so


@dataclass(frozen=True)
class ServerMemory:
    """Sizes in MiB (None where unknown)."""

    heap_max_mb: float | None
    heap_used_mb: float | None
    heap_old_gen_peak_mb: float | None
    non_heap_mb: float | None
    pagecache_configured: str
    pagecache_resident_estimate_mb: float | None
    page_cached_store_mb: float | None
    server_rss_mb: float | None
    server_rss_anon_mb: float | None
    store_mb: float | None
    lucene_indexes_mb: float | None
    transaction_logs_mb: float | None

    def to_json(self) -> dict:
        return asdict(self)


def _jmx(conn, name: str) -> dict:
    rows = conn.query("CALL dbms.queryJmx($name) YIELD attributes RETURN attributes", {"name": name})
    return rows[0]["attributes"] if rows else {}


def _usage(attributes: dict, key: str) -> dict:
    return ((attributes.get(key) or {}).get("value") or {}).get("properties") or {}


def _dir_mb(path: Path, keep=lambda p: True) -> float | None:
    if not path.is_dir():
        return None
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            p = Path(root) / name
            if keep(p):
                try:
                    total += p.stat().st_size
                except OSError:
                    pass
    return round(total / MB, 1)


def _is_lucene(path: Path) -> bool:
    parts = path.parts
    return "index" in parts and any(d in part for part in parts for d in LUCENE_INDEX_DIRS)


def server_memory(settings: Settings, conn) -> ServerMemory:
    """Heap, page cache and store of the server ``conn`` talks to (the store and RSS only when it
    is the managed server of ``settings``)."""
    memory = _jmx(conn, JMX_MEMORY)
    heap, non_heap = _usage(memory, "HeapMemoryUsage"), _usage(memory, "NonHeapMemoryUsage")
    old = _usage(_jmx(conn, JMX_OLD_GEN), "PeakUsage")
    rss = anon = resident = None
    store = lucene = txlogs = cached = None
    if settings.managed:
        layout = layout_of(settings)
        pid = running_pid(layout)
        if pid:
            proc = psutil.Process(pid)
            full = proc.memory_full_info()
            rss = round(full.rss / MB, 1)
            anon = _rss_anon_mb(pid)
            if anon is not None and heap.get("committed") and non_heap.get("committed"):
                resident = round(max(anon - (heap["committed"] + non_heap["committed"]) / MB, 0.0), 1)
        db = layout.data_dir / "databases" / "neo4j"
        store = _dir_mb(db)
        lucene = _dir_mb(db, _is_lucene)
        cached = None if store is None else round(store - (lucene or 0.0), 1)
        txlogs = _dir_mb(layout.data_dir / "transactions" / "neo4j")

    def mb(v):
        return None if v is None else round(v / MB, 1)

    return ServerMemory(
        heap_max_mb=mb(heap.get("max")), heap_used_mb=mb(heap.get("used")), heap_old_gen_peak_mb=mb(old.get("used")),
        non_heap_mb=mb(non_heap.get("committed")), pagecache_configured=settings.pagecache,
        pagecache_resident_estimate_mb=resident, page_cached_store_mb=cached, server_rss_mb=rss, server_rss_anon_mb=anon,
        store_mb=store, lucene_indexes_mb=lucene, transaction_logs_mb=txlogs,
    )


def _rss_anon_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None

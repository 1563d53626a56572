"""Finding a Java runtime that Neo4j 5.26 supports (17 or 21)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ..errors import ServerError

SUPPORTED_JAVA = (17, 21)


def find_java() -> Path:
    """Return the `java` executable ($JAVA_HOME first, then PATH), checked for a supported version."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = Path(java_home) / "bin" / "java" if java_home else None
    if candidate is None or not candidate.exists():
        found = shutil.which("java")
        if not found:
            raise ServerError(
                "Java 17 or 21 is needed to run Neo4j 5.26 but `java` is not on PATH "
                "(install openjdk-17-jre-headless or set JAVA_HOME)"
            )
        candidate = Path(found)
    major = java_major_version(candidate)
    if major not in SUPPORTED_JAVA:
        raise ServerError(
            f"Neo4j 5.26 runs on Java 17 or 21, but {candidate} is Java {major} "
            "(set JAVA_HOME to a Java 17 or 21 installation)"
        )
    return candidate


def java_major_version(java: Path) -> int:
    try:
        out = subprocess.run([str(java), "-version"], check=False, capture_output=True, text=True, timeout=30)
    except OSError as exc:
        raise ServerError(f"cannot run {java}: {exc}") from None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise ServerError(f"cannot tell the version of {java}: {out.stderr.strip()[:200]}")
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 else major

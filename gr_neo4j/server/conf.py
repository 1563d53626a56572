"""Writing neo4j.conf for the managed server."""

from __future__ import annotations

from pathlib import Path

from ..browser import post_connect_command
from ..home.layout import ServerLayout
from ..settings import Settings

# The JVM options of the official 5.x neo4j.conf, which the launcher (Neo4jCommand) passes to the JVM.
OFFICIAL_JVM_OPTIONS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+AlwaysPreTouch",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-XX:FlightRecorderOptions=stackdepth=256",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dlog4j.layout.jsonTemplate.maxStringLength=32768",
]


def render_conf(settings: Settings, layout: ServerLayout, lib_dir: Path) -> str:
    lines = [
        "# Written by `gr-neo4j db start`; it is rewritten on every start.",
        "# Change ports and memory with --bolt-port/--http-port/--heap/--pagecache or GR_NEO4J_* variables.",
        "server.default_listen_address=127.0.0.1",
        "server.default_advertised_address=127.0.0.1",
        f"server.bolt.listen_address=127.0.0.1:{settings.bolt_port}",
        f"server.bolt.advertised_address=127.0.0.1:{settings.bolt_port}",
        "server.http.enabled=true",
        f"server.http.listen_address=127.0.0.1:{settings.http_port}",
        f"server.http.advertised_address=127.0.0.1:{settings.http_port}",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        "dbms.usage_report.enabled=false",
        # Sized for a 24 GB laptop that also trains models: 2 GB heap and 2 GB page cache by default.
        f"server.memory.heap.initial_size={settings.heap}",
        f"server.memory.heap.max_size={settings.heap}",
        f"server.memory.pagecache.size={settings.pagecache}",
        f"server.directories.lib={lib_dir}",
        f"server.directories.data={layout.data_dir}",
        f"server.directories.logs={layout.logs_dir}",
        f"server.directories.run={layout.run_dir}",
        f"server.directories.plugins={layout.home / 'plugins'}",
        f"server.directories.import={layout.home / 'import'}",
        "server.directories.transaction.logs.root=" + str(layout.data_dir / "transactions"),
        "db.tx_log.rotation.retention_policy=2 days 2G",
        # Browser applies gr-neo4j's style (gr_neo4j/browser/style.grass) each time it connects.
        f"browser.post_connect_cmd={post_connect_command()}",
    ]
    lines += [f"server.jvm.additional={opt}" for opt in OFFICIAL_JVM_OPTIONS]
    return "\n".join(lines) + "\n"

"""``serve(settings, config)``: bind, load the models once, serve with uvicorn until Ctrl-C.

The socket is bound (and listening) before the models load, so a taken port fails at once with one
line, and clients that connect while the models load wait in the backlog instead of being refused.
"""

from __future__ import annotations

import socket

import uvicorn

from ..errors import UsageError
from ..progress import NO_PROGRESS, Progress
from ..settings import Settings
from .app import create_app
from .config import ServeConfig
from .service import Service
from .token import read_or_create_token, token_file

GRACEFUL_S = 5  # on Ctrl-C, requests in flight get this long to finish


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: any free port)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(2048)
        except BaseException:
            sock.close()
            raise
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(settings: Settings, config: ServeConfig | None = None, progress: Progress = NO_PROGRESS, access_log: bool = True) -> None:
    """Serve the API on ``config.host``:``config.port`` until interrupted. Tells ``progress`` where
    it listens and whether a token is needed (never the token itself: it names the file)."""
    config = config or ServeConfig()
    sock = listen(config.host, config.port)
    try:
        token = read_or_create_token(settings) if config.token_required else None
        service = Service(settings, config, progress)
        try:
            server = uvicorn.Server(uvicorn.Config(create_app(service, token), access_log=access_log, timeout_graceful_shutdown=GRACEFUL_S,
                                                   log_level="info"))
            url = url_of(sock)
            if token is None:
                progress.note("no token needed: loopback only")
            else:
                why = "--require-token" if config.loopback else f"{config.host} is reachable from other machines"
                progress.note(f"token required ({why}): send `Authorization: Bearer $(cat {token_file(settings)})`")
            progress.note(f"serving on {url} (API docs: {url}/docs); Ctrl-C stops")
            server.run(sockets=[sock])
        finally:
            service.close()
    finally:
        sock.close()

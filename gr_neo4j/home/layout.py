"""Where the managed server keeps things inside GR_NEO4J_HOME."""

from __future__ import annotations

import json
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from ..atomic import atomic_path
from ..settings import Settings


@dataclass(frozen=True)
class ServerLayout:
    home: Path

    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def conf_file(self) -> Path:
        return self.conf_dir / "neo4j.conf"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / "neo4j.pid"

    @property
    def state_file(self) -> Path:
        """Ports of the running server, so later commands find it without flags."""
        return self.run_dir / "gr-neo4j.json"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def neo4j_log(self) -> Path:
        return self.logs_dir / "neo4j.log"

    @property
    def launcher_log(self) -> Path:
        return self.logs_dir / "launcher.log"

    @property
    def private_dirs(self) -> tuple[Path, ...]:
        """The store (with the system database's password hashes), logs, pid and config: owner only."""
        return (self.conf_dir, self.data_dir, self.logs_dir, self.run_dir, self.home / "plugins", self.home / "import")

    def make_dirs(self) -> None:
        """Create the private dirs 0700 and take group/other rights off whatever an older start left."""
        if not self.home.exists():
            self.home.mkdir(mode=0o700, parents=True)
        for d in self.private_dirs:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
            restrict_tree(d)

    def write_private(self, path: Path, text: str) -> None:
        """Write a file readable by its owner only, atomically (readers see the old or the new text).

        The temporary file is created 0600 (and fchmod-ed, since the umask or a stale temporary
        could leave it wider) before anything is written, so the text is never readable by others,
        and the rename keeps that mode.
        """
        with atomic_path(path) as tmp:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)

    def read_password(self) -> str | None:
        return self.password_file.read_text().strip() if self.password_file.is_file() else None

    def create_password(self) -> str:
        """Generate the neo4j user's password into a 0600 file; never logged or printed."""
        password = secrets.token_urlsafe(24)
        self.home.mkdir(parents=True, exist_ok=True)
        self.write_private(self.password_file, password + "\n")
        return password

    def read_state(self) -> dict | None:
        try:
            return json.loads(self.state_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def write_state(self, **state) -> None:
        self.run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.write_private(self.state_file, json.dumps(state))


def restrict_tree(root: Path) -> None:
    """Remove group and other permissions from root and everything below it (owner rights stay)."""
    for dirpath, _, filenames in os.walk(root):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in filenames)]:
            try:
                st = os.lstat(name)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
                continue
            try:
                os.chmod(name, stat.S_IMODE(st.st_mode) & ~0o077)
            except PermissionError:  # another user's file: Neo4j will say what it cannot open
                pass


def layout_of(settings: Settings) -> ServerLayout:
    return ServerLayout(settings.home)

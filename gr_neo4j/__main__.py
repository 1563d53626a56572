"""The `gr-neo4j` command (and `python -m gr_neo4j`): the CLI, with Ctrl-C as one line and exit 130."""

from __future__ import annotations

import os
import signal
import sys

from .errors import INTERRUPTED


def _interrupted_before_the_command(signum, frame) -> None:
    os.write(2, b"interrupted\n")
    os._exit(INTERRUPTED)


def main() -> None:
    """Run the CLI. Ctrl-C inside a command is handled there (`handles_errors`, which restores
    Python's KeyboardInterrupt so that the command can clean up). Before that, while Python imports
    the CLI (torch, the driver) and click parses the arguments, nothing needs cleaning up, and a
    KeyboardInterrupt there can be swallowed (click turns it into "Aborted!" and exit 1; a library
    import may catch it): SIGINT then ends the process at once, the same way."""
    signal.signal(signal.SIGINT, _interrupted_before_the_command)
    try:
        from .cli import app

        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(INTERRUPTED)


if __name__ == "__main__":
    main()

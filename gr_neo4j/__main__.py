"""The `gr-neo4j` command (and `python -m gr_neo4j`): the CLI, with Ctrl-C as one line and exit 130."""

from __future__ import annotations

import sys

# What a shell reports for a command ended by SIGINT (128 + 2); scripts test for it.
INTERRUPTED = 130


def main() -> None:
    """Run the CLI. Ctrl-C inside a command is handled there (`handles_errors`); here, one caught
    while Python still imports the CLI (torch, the driver) ends the same way, without a traceback."""
    try:
        from .cli import app

        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(INTERRUPTED)


if __name__ == "__main__":
    main()

"""Neo4j Browser support: the GraSS style that captions entities with their text and REL edges
with their relation text (drag ``style.grass`` onto Browser, or paste it after ``:style``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def style_path() -> Path:
    """The shipped Browser style file."""
    return Path(str(resources.files(__name__).joinpath("style.grass")))

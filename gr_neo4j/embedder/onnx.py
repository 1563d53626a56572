"""Run an exported embedding model (see `gr_neo4j.embedder.export`) with ONNX Runtime.

Needs only onnxruntime, tokenizers and numpy: no torch, transformers or sentence-transformers, so a
command that embeds one question starts quickly. Texts are tokenized once (in parallel, in Rust),
sorted by token count and batched, so a batch pads to almost nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np


class OnnxEncoder:
    """Encodes texts into [N, dimension] float32 unit vectors with the ONNX export in `directory`."""

    def __init__(self, directory: Path, meta: dict | None = None):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        directory = Path(directory)
        meta = meta or json.loads((directory / "embedder.json").read_text())
        self.dimension = int(meta["dimension"])
        self.architecture = str(meta["architecture"])
        self.parameters = int(meta["parameters"])
        self.pad_id = int(meta["pad_id"])
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()  # batches are padded here, to their own longest text
        self.tokenizer.enable_truncation(int(meta["max_seq_length"]))
        self.counter = Tokenizer.from_file(str(directory / "tokenizer.json"))  # untruncated, for count_tokens
        self.counter.no_padding()
        self.counter.no_truncation()
        options = ort.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initializers are not the user's business
        # Idle threads sleep instead of spinning: on a busy 2-core machine spinning threads starve
        # each other (2.5x slower in scripts/bench_embed.py under load 9); idle, it costs nothing measurable.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"])

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` is, without special tokens and without truncation."""
        return len(self.counter.encode(text, add_special_tokens=False).ids)

    def encode(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        """[N] texts -> [N, dimension] float32, unit length."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not len(texts):
            return out
        ids = [e.ids for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=True)]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = len(ids[rows[-1]])  # the longest of the batch: rows are sorted by length
            batch = np.full((len(rows), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for j, i in enumerate(rows):
                batch[j, : len(ids[i])] = ids[i]
                mask[j, : len(ids[i])] = 1
            out[rows] = self.session.run(None, {"input_ids": batch, "attention_mask": mask})[0]
        return out

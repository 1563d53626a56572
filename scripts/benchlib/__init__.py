"""Benchmark support shared by `scripts/bench_*.py`: a MetaQA-like graph generator, a deterministic
embedder, retrieval measurement and the measurement of a managed server. Never imported by the
library itself."""

"""Training curves as a PNG (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..atomic import atomic_path


def plot_curves(history: Sequence[dict], path: Path, title: str = "") -> Path:
    """Train and validation loss per epoch (and the train loss of every step, faint) -> PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    steps = [(h["epoch"] - 1 + (i + 1) / len(h["step_losses"]), loss)
             for h in history for i, loss in enumerate(h.get("step_losses", []))]
    if steps:
        ax.plot(*zip(*steps), color="tab:blue", alpha=0.25, linewidth=0.8, label="train (per step)")
    epochs = [h["epoch"] for h in history]
    ax.plot(epochs, [h["train_loss"] for h in history], "o-", color="tab:blue", label="train (epoch mean)")
    held = [h for h in history if "val_loss" in h]  # none when trained with nothing held out
    if held:
        ax.plot([h["epoch"] for h in held], [h["val_loss"] for h in held], "s-", color="tab:orange", label="validation")
    ax.set_xlabel("epoch")
    ax.set_ylabel("answer-token cross-entropy")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    try:
        with atomic_path(path) as tmp:  # keeps the .png suffix, from which savefig takes the format
            fig.savefig(tmp)
    finally:
        plt.close(fig)
    return path

"""Neo4j Browser support: the GraSS style that captions entities with their text, REL edges with
their relation text and a recorded ask's node with its question, and marks its TOPIC and ANSWER
links. The managed server applies it when Browser connects (``browser.post_connect_cmd``, see
:func:`post_connect_command`); elsewhere drag ``style.grass`` onto Browser."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path


def style_path() -> Path:
    """The shipped Browser style file."""
    return Path(str(resources.files(__name__).joinpath("style.grass")))


def style_rules(text: str | None = None) -> dict[str, dict[str, str]]:
    """The style as Browser holds it (selector -> property -> value), read the way Browser reads
    GraSS: ``selector { key: value; ... }``, braces inside quotes kept, quotes dropped."""
    text = style_path().read_text(encoding="utf-8") if text is None else text
    blocks: list[tuple[str, str]] = []
    selector, body, quoted, inside = "", "", False, False
    for ch in text:
        if ch in "'\"":
            quoted = not quoted
        elif ch == "{" and not quoted and not inside:
            inside = True
        elif ch == "}" and not quoted and inside:
            blocks.append((selector.strip(), body))
            selector, body, inside = "", "", False
        elif inside:
            body += ch
        else:
            selector += ch
    rules: dict[str, dict[str, str]] = {}
    for sel, decls in blocks:
        props = rules.setdefault(sel, {})
        for decl in decls.split(";"):
            key, sep, value = decl.partition(":")
            if sep and key.strip():
                props[key.strip()] = value.strip()
    return rules


def post_connect_command() -> str:
    """``style {...}``: Browser's ``:style`` command with the style inline as JSON, for
    ``browser.post_connect_cmd``. Browser splits that setting on ``;`` outside quotes and runs each
    part as ``:part``; JSON has no ``;`` outside its strings, so the style arrives whole."""
    style = json.dumps(style_rules(), separators=(",", ":"), ensure_ascii=True)
    if ";" in style or "\n" in style:
        raise ValueError("the Browser style must not contain ';' or newlines (browser.post_connect_cmd splits on ';')")
    return "style " + style

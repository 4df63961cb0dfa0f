"""Token fragments (spec/protocol.md#fragment-limit, W11): each `token` carries at most TOKEN_FRAGMENT_MAX_BYTES
UTF-8 bytes, and the connector guide recommends a few words. Splitting never cuts a code point: the pieces always
join back to the original string."""

from __future__ import annotations

import re

from ._generated.limits import TOKEN_FRAGMENT_MAX_BYTES

_WORD = re.compile(r"\S+\s*")
_LEAD = re.compile(r"\s*")


def utf8_width(char: str) -> int:
    """UTF-8 bytes of one code point; a lone surrogate is sent as U+FFFD or an escape, counted as 3 like the TS SDK."""
    code_point = ord(char)
    return 1 if code_point < 0x80 else 2 if code_point < 0x800 else 3 if code_point < 0x10000 else 4


def split_by_bytes(text: str, max_bytes: int = TOKEN_FRAGMENT_MAX_BYTES) -> list[str]:
    """Cuts `text` into pieces of at most `max_bytes` UTF-8 bytes, never inside a code point; a piece ends after the
    last whitespace that fits when there is one, so words stay whole where they can. `""` gives `[]`."""
    if max_bytes < 4:
        raise ValueError(f"max_bytes must be at least 4 (one code point), got {max_bytes}")
    pieces: list[str] = []
    start = 0  # where the current piece starts
    size = 0  # its UTF-8 length so far
    after_space = -1  # index just after the last whitespace in the current piece
    size_at_space = 0  # the piece's length up to after_space
    for i, char in enumerate(text):
        width = utf8_width(char)
        if size + width > max_bytes:
            cut = after_space if after_space > start else i
            pieces.append(text[start:cut])
            size = 0 if cut == i else size - size_at_space
            start = cut
            after_space = -1
            if size + width > max_bytes:
                # The word after that whitespace leaves no room for this character either: cut it here.
                pieces.append(text[start:i])
                start = i
                size = 0
        size += width
        if char.isspace():
            after_space = i + 1
            size_at_space = size
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def split_words(text: str, words_per_fragment: int = 1) -> list[str]:
    """Groups `text` into fragments of `words_per_fragment` words, whitespace kept with the word before it (leading
    whitespace with the first), so the fragments join back to `text` exactly. `""` gives `[]`."""
    if words_per_fragment < 1:
        raise ValueError(f"words_per_fragment must be a positive integer, got {words_per_fragment}")
    if not text:
        return []
    lead = _LEAD.match(text)
    lead_text = lead.group(0) if lead else ""
    words = _WORD.findall(text, len(lead_text))
    if not words:
        return [text]
    words[0] = lead_text + words[0]
    return ["".join(words[i : i + words_per_fragment]) for i in range(0, len(words), words_per_fragment)]


def capped(text: str) -> str:
    """`text` cut to one fragment's size, so that a huge message cannot make a huge frame."""
    pieces = split_by_bytes(text)
    return pieces[0] if pieces else ""

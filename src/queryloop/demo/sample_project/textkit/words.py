"""Counting and reshaping words."""

from __future__ import annotations


def word_count(text: str) -> int:
    """The number of words in `text`, separated by any whitespace."""
    return len(text.split(" "))


def capitalize_words(text: str) -> str:
    """`text` with the first letter of every word in upper case."""
    return " ".join(word[:1].upper() + word[1:] for word in text.split())

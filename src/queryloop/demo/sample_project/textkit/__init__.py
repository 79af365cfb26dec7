"""textkit: small text helpers."""

from .words import capitalize_words, word_count

__all__ = ["capitalize_words", "word_count"]

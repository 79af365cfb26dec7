"""Tests for textkit.words (run: python -m unittest -v)."""

from __future__ import annotations

import unittest

from textkit import capitalize_words, word_count  # type: ignore[import-not-found]


class WordCountTest(unittest.TestCase):
    def test_simple_sentence(self) -> None:
        self.assertEqual(word_count("the quick brown fox"), 4)

    def test_any_whitespace_separates_words(self) -> None:
        self.assertEqual(word_count("  hello   world\n"), 2)

    def test_empty_text_has_no_words(self) -> None:
        self.assertEqual(word_count(""), 0)


class CapitalizeTest(unittest.TestCase):
    def test_capitalize(self) -> None:
        self.assertEqual(capitalize_words("hello big world"), "Hello Big World")


if __name__ == "__main__":
    unittest.main()

import unittest

import _path  # noqa: F401

from agent_bridge import split_by_bytes, split_words
from agent_bridge._generated.limits import TOKEN_FRAGMENT_MAX_BYTES


def utf8(text: str) -> int:
    return len(text.encode("utf-8"))


class SplitByBytesTest(unittest.TestCase):
    def test_short_text_is_one_piece_and_empty_text_none(self) -> None:
        self.assertEqual(split_by_bytes("hello world"), ["hello world"])
        self.assertEqual(split_by_bytes(""), [])

    def test_pieces_stay_within_the_limit_and_join_back(self) -> None:
        for text in ["é" * 5000, "😀" * 3000, ("ab😀é " * 2000), "x" * (TOKEN_FRAGMENT_MAX_BYTES + 1)]:
            pieces = split_by_bytes(text)
            self.assertEqual("".join(pieces), text)
            self.assertTrue(all(0 < utf8(p) <= TOKEN_FRAGMENT_MAX_BYTES for p in pieces))

    def test_exactly_the_limit_is_one_piece(self) -> None:
        text = "a" * TOKEN_FRAGMENT_MAX_BYTES
        self.assertEqual(split_by_bytes(text), [text])

    def test_never_cuts_a_code_point(self) -> None:
        pieces = split_by_bytes("a" + "😀" * 3, 6)
        self.assertEqual(pieces, ["a😀", "😀", "😀"])
        for piece in pieces:
            piece.encode("utf-8")  # a cut code point would not encode

    def test_cuts_after_whitespace_when_a_word_fits(self) -> None:
        self.assertEqual(split_by_bytes("hello big world", 10), ["hello big ", "world"])
        self.assertEqual(split_by_bytes("abcdefghijkl mn", 10), ["abcdefghij", "kl mn"])

    def test_refuses_a_limit_below_one_code_point(self) -> None:
        with self.assertRaises(ValueError):
            split_by_bytes("x", 3)


class SplitWordsTest(unittest.TestCase):
    def test_groups_words_keeping_whitespace(self) -> None:
        self.assertEqual(split_words("  one two  three four", 2), ["  one two  ", "three four"])
        self.assertEqual(split_words("one two three"), ["one ", "two ", "three"])
        self.assertEqual(split_words(""), [])
        self.assertEqual(split_words("   "), ["   "])

    def test_refuses_zero_words(self) -> None:
        with self.assertRaises(ValueError):
            split_words("x", 0)


if __name__ == "__main__":
    unittest.main()

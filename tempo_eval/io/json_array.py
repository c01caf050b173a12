"""The elements of a JSON document that is one array (`[{...}, {...}, ...]`), read from its text a
chunk at a time: memory holds a chunk and the element being read, not the document.

    for element in array_elements(texts):   # texts: the document's text, in pieces
        ...

Each element is decoded by the `json` module's own decoder (`raw_decode`), so its values are
those `json.loads` gives for the whole document. A document that is not an array, or whose text
is not valid JSON, raises `NotAnArray` where this is found: the whole-file reader then reads it
and names the problem (or reads another form: `{"data": [...]}`, a DeepEval test run, JSON
Lines under a .json name).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

_WHITESPACE = " \t\n\r"
_decoder = json.JSONDecoder()


class NotAnArray(ValueError):
    """The text is not one JSON array read to its end."""


class ElementTooLong(ValueError):
    """An element longer than `array_elements`' `max_element` characters (`index`: 1-based)."""

    def __init__(self, index: int) -> None:
        super().__init__(f"element {index} is too long")
        self.index = index


class _Text:
    """The pieces of text as one buffer, with the read part dropped as it goes."""

    def __init__(self, texts: Iterator[str]) -> None:
        self._texts = texts
        self.buffer = ""
        self.pos = 0
        self.ended = False

    def more(self, at_least: int = 0) -> bool:
        """Append the next piece(s), `at_least` characters when there are; False at the end."""
        if self.ended:
            return False
        added = 0
        for piece in self._texts:
            self.buffer += piece
            added += len(piece)
            if added >= at_least and added:
                return True
        self.ended = True
        return added > 0

    def drop_read(self) -> None:
        """Forget the text before the read position, once it is most of the buffer (copying the
        rest after every element would cost a buffer per element)."""
        if self.pos and self.pos >= len(self.buffer) // 2:
            self.buffer = self.buffer[self.pos:]
            self.pos = 0

    def skip_space(self) -> str:
        """The next character that is not whitespace ("" at the end), not consumed."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            self.drop_read()
            if not self.more():
                return ""


def array_elements(texts: Iterator[str], max_element: int | None = None) -> Iterator[Any]:
    """The elements of the array the text holds, in order; raises NotAnArray (see the module
    docstring) when the text is not an array followed by nothing but whitespace, and
    ElementTooLong once an element is found longer than `max_element` characters (before it is
    held whole: at most about twice that is read)."""
    text = _Text(texts)
    if text.skip_space() != "[":
        raise NotAnArray("the document is not an array")
    text.pos += 1
    if text.skip_space() == "]":
        text.pos += 1
    else:
        for index in itertools.count(1):
            yield _element(text, index, max_element)
            following = text.skip_space()
            text.pos += 1
            if following == "]":
                break
            if following != ",":
                raise NotAnArray("expected ',' or ']' after an element")
            text.skip_space()
    if text.skip_space() != "":
        raise NotAnArray("more text after the array")


def _element(text: _Text, index: int = 1, max_element: int | None = None) -> Any:
    """Decode the element at the read position. While it is cut at the end of the buffer, more
    text is read (as much again as the buffer holds, so a large element is decoded a few times,
    not once per piece); an error before the end is one of the text itself."""
    text.drop_read()
    while True:
        try:
            element, end = _decoder.raw_decode(text.buffer, text.pos)
        except json.JSONDecodeError as error:
            # the decoder stops where a cut element ends, or names the start of a cut string
            cut = error.pos >= len(text.buffer) - 6 or error.msg.startswith("Unterminated string")
            if cut and max_element is not None and len(text.buffer) - text.pos > max_element:
                raise ElementTooLong(index) from None
            if cut and text.more(at_least=max(len(text.buffer) - text.pos, 1)):
                continue
            raise NotAnArray(f"not valid JSON ({error.msg})") from None
        if isinstance(element, (int, float)) and not isinstance(element, bool) and len(text.buffer) - end < 3 \
                and text.more():
            continue  # a number may go on in the next piece ("12" of "123", "1" of "1.5", "1" of "1e-3")
        text.pos = end
        return element

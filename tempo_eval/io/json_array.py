"""The rows of a JSON document, read from its text a chunk at a time: memory holds a chunk and the
element being read, not the document. The document is one array (`[{...}, {...}, ...]`) or an
object with the array under "data" (`{"data": [{...}, ...]}`, other keys before or after it),
as the whole-file reader (`tempo_eval.io.jsonfiles`) reads them.

    for element in array_elements(texts):   # texts: the document's text, in pieces
        ...

Each element is decoded by the `json` module's own decoder (`raw_decode`), so its values are
those `json.loads` gives for the whole document. A document of another form, or whose text is
not valid JSON, raises `NotAnArray` where this is found (an object only once it is read to its
end: a later key can make it a DeepEval test run): the whole-file reader then reads it and
names the problem (or reads another form: pandas' split and column orients, a DeepEval test
run, JSON Lines under a .json name).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from tempo_eval.io.jsonfiles import deepeval_test_run

_WHITESPACE = " \t\n\r"
_decoder = json.JSONDecoder()


class NotAnArray(ValueError):
    """The text is not one JSON array, or one `{"data": [...]}` object, read to its end."""


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
    """The rows of the document the text holds, in order: the elements of the array it is, or of
    the array under "data" when it is an object the whole-file reader reads as `{"data": [...]}`.
    Raises NotAnArray (see the module docstring) when the text is neither, followed by nothing
    but whitespace, and ElementTooLong once an element of the array is found longer than
    `max_element` characters (before it is held whole: at most about twice that is read)."""
    text = _Text(texts)
    start = text.skip_space()
    if start == "[":
        yield from _items(text, max_element)
    elif start == "{":
        yield from _data_items(text, max_element)
    else:
        raise NotAnArray("the document is neither an array nor an object")
    if text.skip_space() != "":
        raise NotAnArray("more text after the document")


def _items(text: _Text, max_element: int | None) -> Iterator[Any]:
    """The elements of the array at the read position (its "["), read to its "]"."""
    if _empty(text, "]"):
        return
    for index in itertools.count(1):
        yield _element(text, index, max_element)
        if _closed(text, "]"):
            return


def _data_items(text: _Text, max_element: int | None) -> Iterator[Any]:
    """The elements of the array under "data" of the object at the read position (its "{"), read
    to its "}". The other members are decoded (each at most `max_element` characters, else the
    whole-file reader reads the document) and let go, but for what tells a DeepEval test run,
    which the whole-file reader reads first: such a document, one whose "data" is not an array
    or comes twice (`json.loads` keeps the last), or one without "data" raises NotAnArray."""
    found = False
    test_run: dict[str, Any] = {}  # the DeepEval keys, their values summed up (see `_test_run_part`)
    ended = _empty(text, "}")
    while not ended:
        if text.skip_space() != '"':
            raise NotAnArray("expected a key in the object")
        key = _member(text, max_element)
        if text.skip_space() != ":":
            raise NotAnArray("expected ':' after a key")
        text.pos += 1
        if key == "data":
            if found or text.skip_space() != "[":
                raise NotAnArray('"data" is not one array')
            found = True
            yield from _items(text, max_element)
        else:
            text.skip_space()
            value = _member(text, max_element)
            if key in _TEST_RUN_KEYS:
                test_run[key] = _test_run_part(key, value)
        ended = _closed(text, "}")
    if not found:
        raise NotAnArray('the object has no "data"')
    if deepeval_test_run(test_run) is not None:
        raise NotAnArray("a DeepEval test run")


def _empty(text: _Text, close: str) -> bool:
    """Past the opening bracket at the read position: True (and past `close`) when nothing is in it."""
    text.pos += 1
    if text.skip_space() != close:
        return False
    text.pos += 1
    return True


def _closed(text: _Text, close: str) -> bool:
    """Past what follows an element or member: True at `close`, False at a comma."""
    following = text.skip_space()
    text.pos += 1
    if following == close:
        return True
    if following != ",":
        raise NotAnArray(f"expected ',' or {close!r} after an element")
    text.skip_space()
    return False


#: the keys `deepeval_test_run` looks at
_TEST_RUN_KEYS = ("testRunData", "testCases")


def _test_run_part(key: str, value: Any) -> Any:
    """A value `deepeval_test_run` decides on as on `value`, without holding it: "testCases" a
    list or not, "testRunData" a dict holding a "testCases" list, another dict, or neither."""
    if key == "testCases":
        return [] if isinstance(value, list) else None
    if isinstance(value, dict):
        return {"testCases": []} if isinstance(value.get("testCases"), list) else {}
    return None


def _member(text: _Text, max_element: int | None = None) -> Any:
    """A key, or a value that is not the rows, of the object: one the whole-file reader would
    read whole when it is longer than `max_element` characters (NotAnArray)."""
    try:
        return _element(text, 1, max_element)
    except ElementTooLong:
        raise NotAnArray("a member is too long to stream") from None


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

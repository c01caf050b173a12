"""How the store writes values: canonical JSON text, and long JSON packed with zlib.

`dumps` is the canonical JSON (sorted keys) stored and hashed everywhere in the store. Large JSON
(a result's details, a dataset's rows) is stored zlib-compressed as a BLOB in the same column
(`_pack`), tagged by its first byte so `_unpack` knows how to read it; text written by older
versions is read as it is. Details a metric gave packed (`tempo_eval.common.packed_details`) are stored
as their layout's values, in compact JSON (`_pack_details`): `_unpack` gives the JSON of the
expanded details, the text that storing them expanded gives.
"""

from __future__ import annotations

import itertools
import json
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from tempo_eval.common.packed_details import EXPANDED_KEYS, PackedDetails, expand
from tempo_eval.common.secrets import redact
from tempo_eval.common.values import rows_without_na

if TYPE_CHECKING:
    import pandas as pd


def _jsonable(value: Any) -> Any:
    """json.dumps fallback: sets become sorted lists, dataclasses dicts, numpy scalars Python ones."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, Enum):
        return value.value
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if type(value) is PackedDetails:  # read as the dict it stands for
        return dict(value)
    return str(value)


def dumps(value: Any) -> str:
    """Canonical JSON (sorted keys) as stored and hashed everywhere in the store."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=_jsonable)


#: item and key separators: json.dumps's (the details' JSON), and none of the spaces (packed values)
_SEPARATORS = {False: (", ", ": "), True: (",", ":")}


def _make_details_encoder(compact: bool = False) -> Any:
    """The C encoder `json.dumps(value, ensure_ascii=False, default=_jsonable)` builds on every
    call (`compact`: with separators (",", ":")), built once per thread (a result's details are
    encoded per result: 3 us of 22 each, measured). Not shared between threads: its memo of the
    containers being encoded (the circular-reference check) would take another thread's call
    for a loop, and a failed call leaves entries in it. The compact one (packed details' values:
    lists a metric built, never a loop) skips that check: a fifth of its time (2 us a result,
    measured); a loop would end in RecursionError, and `_details_json` retries with json.dumps,
    which names it."""
    from json.encoder import c_make_encoder, encode_basestring

    if c_make_encoder is None:  # a Python without the C accelerator
        return None
    item_separator, key_separator = _SEPARATORS[compact]
    markers = None if compact else {}
    return c_make_encoder(markers, _jsonable, encode_basestring, None, key_separator, item_separator, False, False, True)


class _Encoders(threading.local):
    """This thread's details encoders (`_make_details_encoder`), plain and compact."""

    def __init__(self) -> None:
        self.encoder = {False: _make_details_encoder(False), True: _make_details_encoder(True)}


_encoders = _Encoders()


def _details_json(details: Mapping[str, Any] | list[Any], *, compact: bool = False) -> str:
    """`json.dumps(details, ensure_ascii=False, default=_jsonable)` (`compact`: with separators
    (",", ":")), the same text.

    Not hashed, so key order need not be canonical (sorting costs a noticeable share of a row)."""
    encoders = _encoders.encoder
    encoder = encoders[compact]
    if encoder is None or (type(details) is not dict and type(details) is not list):
        return json.dumps(details, ensure_ascii=False, default=_jsonable, separators=_SEPARATORS[compact])
    try:
        return "".join(encoder(details, 0))
    except BaseException as error:
        # its memo of the containers being encoded (the circular-reference check) may keep
        # entries of the failed call: a new encoder, and json.dumps says what went wrong; an
        # interruption (Ctrl-C, a cancelled task) is passed on, not retried
        encoders[compact] = _make_details_encoder(compact)
        if not isinstance(error, Exception):
            raise
        return json.dumps(details, ensure_ascii=False, default=_jsonable, separators=_SEPARATORS[compact])


#: JSON longer than this is stored compressed: details repeat keys and year lists, and compress
#: 3-10x; short text would only grow
_PACK_MIN_CHARS = 128


#: the first byte of a packed value says how to unpack it; never reuse a tag for another format
_TAG_ZLIB = b"z"  # zlib


_TAG_ZDICT_1 = b"d"  # zlib with _ZDICT_1 as its preset dictionary


#: A preset dictionary for results' details: the keys and values most details share, and the
#: years as focus-time lists spell them, so a detail of a few hundred bytes compresses 3x more
#: than on its own. Stored data depends on it byte for byte: never edit it (add a new tag).
_ZDICT_1 = (
    '{"mode": "focus_time", "reference_date": null, "qft_source": "extracted from query", '
    '"dfts_source": "extracted from contexts", "k": 10, "gain": "linear", "curve": [0.0, 1.0, '
    '0.6309297535714575, 0.5, 0.43067655807339306], "ranks": [{"rank": 1, "doc": 0, "relevance": '
    '0.0, "gain": 0.0, "discounted_gain": 0.0, "years": [], "overlap": []}], "dcg": 0.0, "idcg": '
    '0.0, "qft": [], "ideal_from": "retrieved documents", "retrieved": 2, "aft": [], "dfts": [[]], '
    '"years": [{"year": 1850, "grounded": true, "contexts": [0], "answer_spans": [""], '
    '"context_spans": [{"context": 0, "spans": [""]}]}, {"grounded": false, "contexts": [], '
    '"context_spans": []}], "counts": {"supported": 0, "contradicted": 0, "neutral": 0, "error": 0}, '
    '"verdict": "SUPPORTED", "NEUTRAL", "CONTRADICTED", "evidence": "", "reason": "", '
    '"probabilities": {"entailment": 0.0, "neutral": 0.0, "contradiction": 0.0}, "claims": [], '
    '"mode": "gold", "verifier" ['
    + ", ".join(str(year) for year in range(1800, 2101))
    + "]"
).encode("utf-8")


#: The compressor's window (2**13 bytes, which holds the preset dictionary) and memory level for
#: details: a result's details are a few hundred bytes, and zlib's defaults (a 32 kB window,
#: memory level 9) made setting up the compressor cost 6x compressing the text (105 us against
#: 18 us a detail, measured), for the same output. Any zlib reader with the dictionary reads
#: the stream (`_unpack`'s 15-bit window accepts smaller ones).
_DETAILS_WBITS = 13
_DETAILS_MEMLEVEL = 4


#: A compressor for details, set up with the preset dictionary and given no data: each detail is
#: compressed by a copy of it, the same bytes as a new compressor gives (setting one up with the
#: dictionary costs 3x copying this one: 6 us against 2 us a result, measured)
_details_packer = zlib.compressobj(6, zlib.DEFLATED, _DETAILS_WBITS, _DETAILS_MEMLEVEL, zlib.Z_DEFAULT_STRATEGY, _ZDICT_1)


#: zlib level for long JSON other than details (a streamed dataset's rows, 1,000 a value): on the
#: issue-27 bench rows level 3 takes 6.4 us a row against level 6's 13.6 us, for 91 bytes a row
#: against 73 (measured); any zlib reader reads either
_ROWS_LEVEL = 3


def _pack(text: str, *, details: bool = False) -> str | bytes:
    """JSON text as stored: compressed bytes (tagged, see `_unpack`) when long, else the text.
    `details` uses the preset dictionary made for results' details."""
    if len(text) < _PACK_MIN_CHARS:
        return text
    if not details:
        return _TAG_ZLIB + zlib.compress(text.encode("utf-8"), _ROWS_LEVEL)
    packer = _details_packer.copy()
    return _TAG_ZDICT_1 + packer.compress(text.encode("utf-8")) + packer.flush()


#: a `PackedDetails`: its layout's values as the JSON list [layout, value, ...] (`_pack_details`)
_TAG_LAYOUT = b"l"


#: what JSON puts between tokens: a secret holding one could straddle an expanded key
_JSON_PUNCTUATION = frozenset('{}[]:, "')


def _maskable_when_packed(secrets: Sequence[str]) -> bool:
    """True when masking `secrets` in the packed values' JSON masks them in the expanded details'
    JSON too. The expansion adds keys, JSON punctuation and small integers; every other token
    (texts, floats, years) is written as in the values. A secret without punctuation lies within
    one token, so it is in the expansion only where it is in the values, or within a key."""
    return not any(
        _JSON_PUNCTUATION.intersection(secret) or any(secret in key for key in EXPANDED_KEYS) for secret in secrets
    )


def _pack_details(details: Mapping[str, Any], secrets: Sequence[str], *, maskable: bool = True) -> str | bytes:
    """A result's details as stored, `secrets` masked: `PackedDetails` as their layout's values
    (tagged; `maskable` is `_maskable_when_packed(secrets)`), other details as their JSON (`_pack`)."""
    if type(details) is PackedDetails and maskable:
        text = _details_json([details.layout, *details.values], compact=True)
        return _TAG_LAYOUT + (redact(text, secrets) if secrets else text).encode("utf-8")
    if type(details) is not dict:
        details = dict(details)
    return _pack(redact(_details_json(details), secrets), details=True)


def _unpack_details(value: str | bytes) -> dict[str, Any]:
    """The details dict of a stored value (`_pack_details`)."""
    if isinstance(value, bytes) and value[:1] == _TAG_LAYOUT:
        layout, *values = json.loads(value[1:].decode("utf-8"))
        return expand(layout, values)
    return json.loads(_unpack(value))


def _json_text_of_container(value: Any) -> Any:
    """A list or dict cell as compact JSON text (as SQLite's `->>` gives it); anything else as is."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


#: first bytes of JSON text: no packing tag is one of them
_JSON_STARTS = frozenset(bytes([c]) for c in b'{["-0123456789tfn \t\r\n')


def _unpack(value: str | bytes) -> str:
    """The JSON text of a stored value (`_pack`, or plain text from older versions)."""
    if not isinstance(value, bytes):
        return value
    tag, body = value[:1], value[1:]
    if tag == _TAG_LAYOUT:  # the JSON of the expanded details, as `_details_json` writes it
        return _details_json(_unpack_details(value))
    if tag == _TAG_ZDICT_1:
        unpacker = zlib.decompressobj(15, _ZDICT_1)
        return (unpacker.decompress(body) + unpacker.flush()).decode("utf-8")
    if tag == _TAG_ZLIB:
        return zlib.decompress(body).decode("utf-8")
    if tag in _JSON_STARTS:  # JSON text kept as bytes (PostgreSQL's BYTEA column, store.dialect)
        return value.decode("utf-8")
    raise ValueError(f"stored value with unknown packing tag {tag!r}")


# -- a dataset's rows as stored (`store.datasets`): a batch at a time -------------------------


def packed_frame_rows(frame: pd.DataFrame) -> str | bytes:
    """A batch of a dataset's rows as stored: `_pack(frame_rows_json(frame))`, one call a batch."""
    return _pack(frame_rows_json(frame))


def frame_rows_json(frame: pd.DataFrame) -> str:
    """A frame as stored: `dumps({"columns": [...], "rows": [[cell, ...], ...]})`, the same text.

    Written without the JSON encoder when every cell is text or a list of texts, and no text
    needs escaping (no quote, backslash or control character: checked on the whole batch at
    once): the encoder escapes every text character by character, which cost two thirds of
    storing a streamed batch's rows (10.7 against 5.5 us a row on the issue-27 bench, measured).
    Any other frame goes through `dumps`."""
    columns = [str(c) for c in frame.columns]
    fast = _plain_texts_json(frame, columns)
    return fast if fast is not None else dumps({"columns": columns, "rows": _frame_rows(frame)})


def _plain_texts_json(frame: pd.DataFrame, columns: list[str]) -> str | None:
    """`frame_rows_json`'s text when every cell is text or a list of texts, none needing an
    escape; else None. Each text is put between quotes as it is, then the cells' text is checked:
    no backslash, no control character, and only the quotes put there."""
    import numpy as np

    if not columns:  # rows without cells: no column to zip them from
        return None
    head = '{"columns": ' + dumps(columns) + ', "rows": ['
    cells: list[list[str]] = []
    texts = 0
    last = len(columns) - 1
    for j in range(len(columns)):
        try:  # a row's first cell opens it, its last closes it: the rows are then one join
            found = _cell_texts(frame.iloc[:, j].tolist(), "[" if j == 0 else "", "]" if j == last else "")
        except TypeError:  # a list item that is not text
            return None
        if found is None:
            return None
        cells.append(found[0])
        texts += found[1]
    body = ", ".join(itertools.chain.from_iterable(zip(*cells, strict=True)))
    try:
        head.encode("utf-8")
        encoded = body.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: `dumps`'s text fails where it is stored, as before
        return None
    # the cells' text checked whole by numpy: 0.4 against 1.2 us a row of the issue-27 bench for
    # deleting the escaped bytes to count them (bytes.translate, a copy); in UTF-8 these bytes are
    # never part of a longer character
    written = np.frombuffer(encoded, dtype=np.uint8)
    if b"\\" in encoded or np.count_nonzero(written < 0x20) or np.count_nonzero(written == _QUOTE) != 2 * texts:
        return None
    return f"{head}{body}]}}"


_QUOTE = ord('"')


def _cell_texts(values: list[Any], before: str = "", after: str = "") -> tuple[list[str], int] | None:
    """The JSON of each cell, text or list of texts, as written when none needs an escape (between
    `before` and `after`), and the number of texts; None when a cell is anything else (TypeError:
    a list item is not text)."""
    out: list[str] = []
    append = out.append
    texts = 0
    for value in values:
        kind = type(value)
        if kind is str:
            append(f'{before}"{value}"{after}')
            texts += 1
        elif kind is list:
            if value:
                append(f'{before}["{_ITEMS.join(value)}"]{after}')
                texts += len(value)
            else:
                append(f"{before}[]{after}")
        else:
            return None
    return out, texts


_ITEMS = '", "'


def _frame_rows(frame: pd.DataFrame) -> list[list[Any]]:
    """The frame's rows as lists, a missing cell (`is_na`) as None: one call for the batch."""
    return rows_without_na(frame.itertuples(index=False, name=None))

"""The datasets of the run store: stored once per (content hash, column mapping), read back as
frames, columns or rows, renamed and deleted (with every run on them).
"""

from __future__ import annotations

import codecs
import hashlib
import itertools
import json
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from tempo_eval.common.identity import user_name
from tempo_eval.common.values import is_na
from tempo_eval.store.packing import _TAG_ZLIB, _json_text_of_container, _pack, _unpack, dumps


def frame_content_hash(frame: pd.DataFrame) -> str:
    """sha256 of a frame's columns and values (for datasets built in memory, without raw bytes)."""
    return hashlib.sha256(frame_rows_json(frame).encode("utf-8")).hexdigest()


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
    plain = _plain
    # text and lists, most cells, are never missing (`is_na`): kept without a call (a third of
    # storing a streamed batch's rows, measured on the issue-27 bench)
    return [[v if type(v) is str or type(v) is list else plain(v) for v in row]
            for row in frame.itertuples(index=False, name=None)]


def _plain(value: Any) -> Any:
    return None if is_na(value) else value


def _clean_name(name: Any, what: str) -> str:
    clean = " ".join(str(name).split())
    if not clean:
        raise ValueError(f"a {what} name must not be empty")
    return clean


def _joined(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One {columns, rows} of the chunks of a streamed dataset; a column that only later chunks
    have (a JSON Lines key first seen part way) is None in the rows before."""
    columns: list[str] = []
    for part in parts:
        columns += [c for c in part["columns"] if c not in columns]
    rows: list[list[Any]] = []
    for part in parts:
        if part["columns"] == columns:
            rows += part["rows"]
            continue
        positions = [part["columns"].index(c) if c in part["columns"] else None for c in columns]
        rows += [[None if p is None else row[p] for p in positions] for row in part["rows"]]
    return {"columns": columns, "rows": rows}


def _texts(packed: str | bytes) -> Iterator[str]:
    """The JSON text of a stored value a piece at a time (zlib decompressed as it is read, in
    pieces from 4 KB, doubling to 64 KB: the columns alone are in the first)."""
    if not isinstance(packed, bytes):
        yield packed
        return
    if packed[:1] != _TAG_ZLIB:  # another packing: whole (`_unpack` knows it)
        yield _unpack(packed)
        return
    inflate, decode = zlib.decompressobj(), codecs.getincrementaldecoder("utf-8")()
    body = memoryview(packed)[1:]
    start, piece = 0, 1 << 12
    while start < len(body):
        out = inflate.decompress(body[start:start + piece])
        start, piece = start + piece, min(piece * 2, 1 << 16)
        if out:
            yield decode.decode(out)
    yield decode.decode(inflate.flush(), final=True)


def _leading(packed: str | bytes, n_rows: int) -> tuple[list[str], list[list[Any]]]:
    """The columns and first `n_rows` rows of a stored {columns, rows} value, read from its
    beginning only: `dumps` writes `{"columns": [...], "rows": [[...], ...]}` (sorted keys), so
    the rest is never decompressed nor decoded. Text of another shape is decoded whole."""
    decoder = json.JSONDecoder()
    pieces = _texts(packed)
    text, at = "", 0

    def value() -> Any:
        nonlocal text, at
        while True:
            try:
                found, end = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                more = next(pieces, None)
                if more is None:
                    raise
                text += more
                continue
            at = end
            return found

    def expect(literal: str) -> bool:
        nonlocal text, at
        while len(text) - at < len(literal):
            more = next(pieces, None)
            if more is None:
                break
            text += more
        if text.startswith(literal, at):
            at += len(literal)
            return True
        return False

    try:
        if not expect('{"columns": '):
            raise ValueError("not the shape dumps writes")
        columns = [str(c) for c in value()]
        rows: list[list[Any]] = []
        if not expect(', "rows": ['):
            raise ValueError("not the shape dumps writes")
        while len(rows) < n_rows and not expect("]"):
            if rows and not expect(", "):
                raise ValueError("not the shape dumps writes")
            rows.append(value())
            if len(text) > (1 << 20) and at > len(text) // 2:  # keep the text read small
                text, at = text[at:], 0
        return columns, rows
    except ValueError:  # JSONDecodeError too: an older layout, decoded whole
        whole = json.loads(_unpack(packed))
        return [str(c) for c in whole["columns"]], whole["rows"][:n_rows]


class DatasetRecords:
    """Datasets in the workspace database: a part of `tempo_eval.store.runs.RunStore`, which
    supplies the connection `_conn`, the lock `_lock` and the other parts' methods."""

    def save_dataset(self, dataset: Any, *, user: str | None = None) -> int:
        """Store a dataset (a `tempo_eval.io` Dataset) and return its id.

        A dataset with the same content hash and mapping is stored once: its existing id is
        returned and the rows are not written again. A dataset of TREC runs keeps its qrels
        (`Dataset.qrels`, `dataset_qrels`). `user` is recorded as who stored it (`created_by`;
        None: unknown); storing it again keeps its first user.
        """
        dataset_id = self._save_rows(dataset, user)
        qrels = getattr(dataset, "qrels", None)
        if qrels is not None and self.dataset_qrels(dataset_id) is None:
            self.save_dataset_qrels(dataset_id, qrels)
        return dataset_id

    def _save_rows(self, dataset: Any, user: str | None) -> int:
        frame: pd.DataFrame = dataset.frame
        content_hash = getattr(dataset, "content_hash", None) or frame_content_hash(frame)
        mapping = dumps(dict(getattr(dataset, "mapping", None) or {}))
        existing = self.find_dataset(content_hash, getattr(dataset, "mapping", None))
        rows = None
        if existing is not None:
            if self._dataset_complete(existing):
                return existing
            # a stream stored part way (its evaluation was killed): the whole frame completes it
            rows = frame_rows_json(frame)
            with self._lock, self._conn:
                self._conn.execute("DELETE FROM dataset_chunks WHERE dataset_id = ?", (existing,))
                self._conn.execute(
                    "UPDATE datasets SET rows = ?, n_rows = ?, complete = 1 WHERE id = ?",
                    (_pack(rows), len(frame), existing),
                )
            return existing
        rows = frame_rows_json(frame)
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "INSERT OR IGNORE INTO datasets (name, content_hash, mapping, format, n_rows, rows, warnings,"
                " created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    str(getattr(dataset, "name", None) or "dataset"),
                    content_hash,
                    mapping,
                    getattr(dataset, "source_format", None),
                    len(frame),
                    _pack(rows),
                    dumps([str(w) for w in (getattr(dataset, "warnings", None) or [])]),
                    user_name(user),
                ),
            )
            if cursor.rowcount:
                return int(cursor.lastrowid)
        found = self.find_dataset(content_hash, getattr(dataset, "mapping", None))
        assert found is not None  # a concurrent writer inserted the same dataset
        return found

    # -- streamed datasets: stored a batch of rows at a time --------------------------------

    def begin_dataset(
        self, *, name: str, content_hash: str, mapping: Mapping[str, Any] | None, source_format: str | None,
        user: str | None = None,
    ) -> tuple[int, bool]:
        """(id, complete) of the dataset with this content hash and mapping, creating it (empty,
        not complete, made by `user`) when there is none; its rows then come with
        `add_dataset_rows` and `finish_dataset`. A dataset left incomplete (a stream stopped part
        way) is found again: its rows are written again as they are read."""
        existing = self.find_dataset(content_hash, mapping)
        if existing is not None:
            return existing, self._dataset_complete(existing)
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "INSERT OR IGNORE INTO datasets (name, content_hash, mapping, format, n_rows, rows, warnings,"
                " complete, created_by) VALUES (?, ?, ?, ?, 0, ?, '[]', 0, ?)",
                (str(name or "dataset"), content_hash, dumps(dict(mapping or {})), source_format,
                 dumps({"columns": [], "rows": []}), user_name(user)),
            )
            if cursor.rowcount:
                return int(cursor.lastrowid), False
        found = self.find_dataset(content_hash, mapping)
        assert found is not None  # a concurrent writer inserted the same dataset
        return found, self._dataset_complete(found)

    def add_dataset_rows(self, dataset_id: int, first_row: int, frame: pd.DataFrame) -> None:
        """Store rows first_row, first_row + 1, ... of a streamed dataset (again: replaced)."""
        rows = frame_rows_json(frame)
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO dataset_chunks (dataset_id, first_row, rows) VALUES (?, ?, ?)",
                (dataset_id, int(first_row), _pack(rows)),
            )

    def finish_dataset(self, dataset_id: int, n_rows: int, warnings: list[str]) -> None:
        """Mark a streamed dataset complete: all its `n_rows` rows are stored."""
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM dataset_chunks WHERE dataset_id = ? AND first_row >= ?",
                               (dataset_id, int(n_rows)))
            self._conn.execute(
                "UPDATE datasets SET n_rows = ?, warnings = ?, complete = 1 WHERE id = ?",
                (int(n_rows), dumps([str(w) for w in warnings]), dataset_id),
            )

    def _dataset_complete(self, dataset_id: int) -> bool:
        with self._lock:
            row = self._conn.execute("SELECT complete FROM datasets WHERE id = ?", (dataset_id,)).fetchone()
        return bool(row and row[0])

    def find_dataset(self, content_hash: str, mapping: Mapping[str, Any] | None = None) -> int | None:
        """The id of the dataset with this content hash and mapping, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id FROM datasets WHERE content_hash = ? AND mapping = ?",
                (content_hash, dumps(dict(mapping or {}))),
            ).fetchone()
        return None if row is None else int(row[0])

    def dataset_frame(self, dataset_id: int) -> pd.DataFrame:
        """The stored canonical frame of a dataset."""
        stored = self._stored_rows(dataset_id)
        return pd.DataFrame(stored["rows"], columns=stored["columns"], dtype=object)

    def dataset_head(self, dataset_id: int, n_rows: int = 50) -> pd.DataFrame:
        """The columns and first `n_rows` rows of a stored dataset (`n_rows` 0: the columns only),
        read from the beginning of its stored rows: memory and time grow with `n_rows`, not with
        the dataset (`dataset_frame` decodes every row). A streamed dataset's columns are those
        of every one of its parts (a part's own columns are read from its beginning too)."""
        with self._lock:
            if self._conn.execute("SELECT 1 FROM datasets WHERE id = ?", (dataset_id,)).fetchone() is None:
                raise KeyError(f"no dataset with id {dataset_id}")
            if self._rows_memo is not None and self._rows_memo[0][0] == dataset_id \
                    and self._rows_memo[0][1:] == tuple(self._conn.execute(
                        "SELECT content_hash, mapping FROM datasets WHERE id = ?", (dataset_id,)).fetchone()):
                stored = self._rows_memo[1]  # decoded already
                return pd.DataFrame(stored["rows"][:n_rows], columns=stored["columns"], dtype=object)
            parts = []
            for (chunk,) in self._conn.execute(
                    "SELECT rows FROM dataset_chunks WHERE dataset_id = ? ORDER BY first_row", (dataset_id,)):
                wanted = max(0, n_rows - sum(len(rows) for _, rows in parts))
                parts.append(_leading(chunk, wanted))
            if not parts:
                (packed,) = self._conn.execute("SELECT rows FROM datasets WHERE id = ?", (dataset_id,)).fetchone()
                parts.append(_leading(packed, n_rows))
        joined = _joined([{"columns": columns, "rows": rows} for columns, rows in parts])
        return pd.DataFrame(joined["rows"][:n_rows], columns=joined["columns"], dtype=object)

    def dataset_column(self, dataset_id: int, column: str) -> list[Any] | None:
        """One column of a stored dataset, in row order; None when the dataset has no such column.
        Meant for text and number columns: a list or dict cell comes back as its JSON text."""
        stored = self._stored_rows(dataset_id)
        if column not in stored["columns"]:
            return None
        index = stored["columns"].index(column)
        return [_json_text_of_container(row[index]) for row in stored["rows"]]

    def dataset_row(self, dataset_id: int, row: int) -> dict[str, Any]:
        """One row of a stored dataset as {column: value}."""
        stored = self._stored_rows(dataset_id)
        if not 0 <= row < len(stored["rows"]):
            raise KeyError(f"dataset {dataset_id} has no row {row}")
        return dict(zip(stored["columns"], stored["rows"][row], strict=True))

    def _stored_rows(self, dataset_id: int) -> dict[str, Any]:
        """The stored {columns, rows} of a dataset, decoded once: the last one decoded is kept,
        keyed by its content hash and mapping too, since a deleted dataset's id can be reused.
        Rows are stored compressed (`_pack`), so SQLite's JSON functions cannot reach into them."""
        with self._lock:
            found = self._conn.execute(
                "SELECT content_hash, mapping FROM datasets WHERE id = ?", (dataset_id,)
            ).fetchone()
            if found is None:
                raise KeyError(f"no dataset with id {dataset_id}")
            key = (dataset_id, *found)
            if self._rows_memo is not None and self._rows_memo[0] == key:
                return self._rows_memo[1]
            (packed,) = self._conn.execute("SELECT rows FROM datasets WHERE id = ?", (dataset_id,)).fetchone()
            stored = json.loads(_unpack(packed))
            chunks = self._conn.execute(
                "SELECT rows FROM dataset_chunks WHERE dataset_id = ? ORDER BY first_row", (dataset_id,)
            ).fetchall()
            if chunks:
                stored = _joined([json.loads(_unpack(chunk)) for (chunk,) in chunks])
            stored["columns"] = [str(c) for c in stored["columns"]]
            self._rows_memo = (key, stored)
            return stored

    def get_dataset(self, dataset_id: int) -> Any:
        """The stored dataset as a `tempo_eval.io.dataset.Dataset`."""
        # the loaders' noun; imported here so the store does not depend on the io package at import
        from tempo_eval.io.dataset import Dataset

        info = self.dataset_info(dataset_id)
        return Dataset(
            frame=self.dataset_frame(dataset_id),
            name=info["name"],
            mapping=info["mapping"],
            content_hash=info["content_hash"],
            source_format=info["format"],
            warnings=info["warnings"],
            qrels=self.dataset_qrels(dataset_id),
        )

    def save_dataset_qrels(self, dataset_id: int, qrels: bytes) -> None:
        """Keep the qrels file of a dataset of TREC runs (its bytes as given) with the dataset."""
        with self._lock, self._conn:
            self._conn.execute("INSERT OR REPLACE INTO dataset_qrels (dataset_id, qrels) VALUES (?, ?)",
                               (int(dataset_id), bytes(qrels)))

    def dataset_qrels(self, dataset_id: int) -> bytes | None:
        """The qrels file kept with a dataset of TREC runs, or None (a dataset stored without one)."""
        with self._lock:
            row = self._conn.execute("SELECT qrels FROM dataset_qrels WHERE dataset_id = ?",
                                     (int(dataset_id),)).fetchone()
        return None if row is None else bytes(row[0])

    def dataset_info(self, dataset_id: int) -> dict[str, Any]:
        """Name, hash, mapping, format, row count and warnings of a dataset (without its rows)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id, name, content_hash, mapping, format, n_rows, warnings, created_at, created_by"
                " FROM datasets WHERE id = ?",
                (dataset_id,),
            ).fetchone()
        if row is None:
            raise KeyError(f"no dataset with id {dataset_id}")
        return {
            "id": row[0], "name": row[1], "content_hash": row[2], "mapping": json.loads(row[3]),
            "format": row[4], "n_rows": row[5], "warnings": json.loads(row[6]), "created_at": row[7],
            "created_by": row[8],
        }

    def list_datasets(self) -> pd.DataFrame:
        """One row per dataset: id, name, content_hash, format, n_rows, created_at, created_by (who
        stored it; None: unknown), newest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, name, content_hash, format, n_rows, created_at, created_by FROM datasets ORDER BY id DESC"
            ).fetchall()
        frame = pd.DataFrame(rows, columns=["id", "name", "content_hash", "format", "n_rows", "created_at", "created_by"])
        frame["created_by"] = pd.Series([row[6] for row in rows], dtype=object)  # None (unknown) stays None
        return frame

    def rename_dataset(self, dataset_id: int, name: str) -> None:
        """Give a dataset a new name (it must not be empty)."""
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "UPDATE datasets SET name = ? WHERE id = ?", (_clean_name(name, "dataset"), dataset_id)
            )
        if not cursor.rowcount:
            raise KeyError(f"no dataset with id {dataset_id}")

    def dataset_dependents(self, dataset_id: int) -> dict[str, int]:
        """What deleting a dataset takes with it: {"runs": n, "results": n, "claims": n}."""
        with self._lock:
            runs, results, claims = self._conn.execute(
                "SELECT (SELECT COUNT(*) FROM runs WHERE dataset_id = ?),"
                " (SELECT COUNT(*) FROM results WHERE run_id IN (SELECT id FROM runs WHERE dataset_id = ?)),"
                " (SELECT COUNT(*) FROM claims WHERE run_id IN (SELECT id FROM runs WHERE dataset_id = ?))",
                (dataset_id, dataset_id, dataset_id),
            ).fetchone()
        return {"runs": int(runs), "results": int(results), "claims": int(claims)}

    def delete_dataset(self, dataset_id: int) -> None:
        """Delete a dataset with all its runs, results and claims (see `dataset_dependents`);
        the verdict cache is kept. Raises RunInUse while one of its runs is being evaluated."""
        with self._lock, self._immediate():
            self._refuse_while_evaluated("SELECT id FROM runs WHERE dataset_id = ?", (dataset_id,))
            self._conn.execute("DELETE FROM datasets WHERE id = ?", (dataset_id,))  # cascades

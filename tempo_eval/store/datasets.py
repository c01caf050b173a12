"""The datasets of the run store: stored once per (content hash, column mapping), read back as
frames, columns or rows, renamed and deleted (with every run on them).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from tempo_eval.common.identity import user_name
from tempo_eval.store.packing import (  # the rows' text is made by packing: one call a batch
    _TAG_ZLIB,
    _frame_rows,  # noqa: F401  (re-exported: the store's runs and the distributed output use it)
    _json_text_of_container,
    _pack,
    _plain_texts_json,  # noqa: F401  (re-exported, as before the move)
    _unpack,
    dumps,
    frame_rows_json,
    packed_frame_rows,
)

#: the rows of a streamed dataset's record: its rows are in `dataset_chunks`
_NO_ROWS = dumps({"columns": [], "rows": []})


def frame_content_hash(frame: pd.DataFrame) -> str:
    """sha256 of a frame's columns and values (for datasets built in memory, without raw bytes)."""
    return hashlib.sha256(frame_rows_json(frame).encode("utf-8")).hexdigest()


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
        existing = self._dataset_state(content_hash, mapping)
        if existing is not None:
            if existing[1]:
                return existing[0]
            # a stream stored part way (its evaluation was killed): the whole frame completes it
            with self._lock, self._conn:
                self._conn.execute("DELETE FROM dataset_chunks WHERE dataset_id = ?", (existing[0],))
                self._conn.execute(
                    "UPDATE datasets SET rows = ?, n_rows = ?, complete = 1 WHERE id = ?",
                    (_pack(frame_rows_json(frame)), len(frame), existing[0]),
                )
            return existing[0]
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
                    _pack(frame_rows_json(frame)),
                    dumps([str(w) for w in (getattr(dataset, "warnings", None) or [])]),
                    user_name(user),
                ),
            )
            if cursor.rowcount:
                return int(cursor.lastrowid)
        found = self._dataset_state(content_hash, mapping)
        assert found is not None  # a concurrent writer inserted the same dataset
        return found[0]

    # -- streamed datasets: stored a batch of rows at a time --------------------------------

    def begin_dataset(
        self, *, name: str, content_hash: str, mapping: Mapping[str, Any] | None, source_format: str | None,
        user: str | None = None,
    ) -> tuple[int, bool]:
        """(id, complete) of the dataset with this content hash and mapping, creating it (empty,
        not complete, made by `user`) when there is none; its rows then come with
        `add_dataset_rows`, the last of them completing it. A dataset left incomplete (a stream
        stopped part way) is found again: its rows are written again as they are read."""
        packed_mapping = dumps(dict(mapping or {}))  # packed once: the key looked up and stored
        found = self._dataset_state(content_hash, packed_mapping)
        if found is not None:
            return found
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "INSERT OR IGNORE INTO datasets (name, content_hash, mapping, format, n_rows, rows, warnings,"
                " complete, created_by) VALUES (?, ?, ?, ?, 0, ?, '[]', 0, ?)",
                (str(name or "dataset"), content_hash, packed_mapping, source_format, _NO_ROWS, user_name(user)),
            )
            if cursor.rowcount:
                return int(cursor.lastrowid), False
        found = self._dataset_state(content_hash, packed_mapping)
        assert found is not None  # a concurrent writer inserted the same dataset
        return found

    def add_dataset_rows(self, dataset_id: int, first_row: int, frame: pd.DataFrame, *,
                         n_rows: int | None = None, warnings: Sequence[str] = ()) -> None:
        """Store rows first_row, first_row + 1, ... of a streamed dataset (again: replaced). With
        `n_rows` (the stream has ended: these are its last rows) the dataset is completed in the
        same transaction, as `finish_dataset` completes it."""
        packed = packed_frame_rows(frame)  # encoded and packed in one call a batch
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO dataset_chunks (dataset_id, first_row, rows) VALUES (?, ?, ?)",
                (dataset_id, int(first_row), packed),
            )
            if n_rows is not None:
                self._complete(dataset_id, n_rows, warnings)

    def finish_dataset(self, dataset_id: int, n_rows: int, warnings: Sequence[str]) -> None:
        """Mark a streamed dataset complete: all its `n_rows` rows are stored."""
        with self._lock, self._conn:
            self._complete(dataset_id, n_rows, warnings)

    def _complete(self, dataset_id: int, n_rows: int, warnings: Sequence[str]) -> None:
        """Inside a transaction: rows from `n_rows` on (a longer earlier read) dropped, the
        dataset marked complete with its row count and warnings (a list of text: plain JSON)."""
        self._conn.execute("DELETE FROM dataset_chunks WHERE dataset_id = ? AND first_row >= ?",
                           (dataset_id, int(n_rows)))
        self._conn.execute(
            "UPDATE datasets SET n_rows = ?, warnings = ?, complete = 1 WHERE id = ?",
            (int(n_rows), json.dumps([str(w) for w in warnings], ensure_ascii=False), dataset_id),
        )

    def _dataset_state(self, content_hash: str, packed_mapping: str) -> tuple[int, bool] | None:
        """(id, complete) of the dataset with this content hash and packed mapping, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id, complete FROM datasets WHERE content_hash = ? AND mapping = ?",
                (content_hash, packed_mapping),
            ).fetchone()
        return None if row is None else (int(row[0]), bool(row[1]))

    def find_dataset(self, content_hash: str, mapping: Mapping[str, Any] | None = None) -> int | None:
        """The id of the dataset with this content hash and mapping, or None."""
        found = self._dataset_state(content_hash, dumps(dict(mapping or {})))
        return None if found is None else found[0]

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

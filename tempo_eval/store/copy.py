"""Copy a whole workspace database into another one (SQLite file or PostgreSQL, either way).

`copy_workspace(source, target)` copies every table of the source (datasets, runs, results,
claims, labels, the verdict cache, the jobs' history, run locks, and any table a later schema
step adds), in the order their foreign keys need (SQLAlchemy's reflection of the source), in one
transaction on the target: a failed copy leaves the target as it was. The source is read in one
snapshot (a read transaction), so an app or worker writing meanwhile changes neither side's count.

The target is brought to the newest schema first and must hold no row (`TargetNotEmpty`
otherwise), apart from the row a new schema seeds in `id_marks`, which the source's replaces.
Each table's rows are counted and checksummed on both sides (`TableCopy`): the checksum is the
sum, modulo 2^256, of the SHA-256 of each row's values, so it needs no common row order (text
sorts differently on the two databases). A value is hashed by what it holds: an int, a float's
exact repr, text and bytes as their bytes (a packed column holds JSON text on SQLite and its
UTF-8 bytes on PostgreSQL: the same bytes).

Ids are copied as they are (a run keeps its id: saved links and `diff 12 15` still mean the
same runs); on PostgreSQL each id sequence is then moved past the highest id copied.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tempo_eval.store.db import connect
from tempo_eval.store.dialect import Dialect

#: tables the copy leaves alone: Alembic's bookkeeping (the target has its own)
SKIPPED = frozenset({"alembic_version"})
#: tables a new schema seeds with rows of its own, replaced by the source's
SEEDED = frozenset({"id_marks"})
_BATCH = 2_000
_MODULUS = 1 << 256


class TargetNotEmpty(ValueError):
    """The target database already holds rows: a copy never mixes two workspaces."""


@dataclass(frozen=True)
class TableCopy:
    table: str
    source_rows: int
    target_rows: int
    source_checksum: str
    target_checksum: str

    @property
    def equal(self) -> bool:
        return self.source_rows == self.target_rows and self.source_checksum == self.target_checksum


def row_digest(row: tuple[Any, ...]) -> int:
    """The SHA-256 of one row's values, as an int (see the module's docstring)."""
    digest = hashlib.sha256()
    for value in row:
        if value is None:
            digest.update(b"N")
        elif isinstance(value, int):  # bool too
            digest.update(b"i" + str(int(value)).encode() + b";")
        elif isinstance(value, float):
            digest.update(b"f" + struct.pack(">d", value))
        else:
            data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            digest.update(b"b" + str(len(data)).encode() + b":" + data)
    return int.from_bytes(digest.digest(), "big")


class _Checksum:
    def __init__(self) -> None:
        self.rows, self.total = 0, 0

    def add(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows += len(rows)
        self.total = (self.total + sum(map(row_digest, rows))) % _MODULUS

    @property
    def hex(self) -> str:
        return f"{self.total:064x}"[:16]


def tables_in_order(location: str) -> list[tuple[str, list[str]]]:
    """(table, its columns) of the database at `location`, parents before the tables whose
    foreign keys name them (SQLAlchemy's reflection)."""
    import sqlalchemy

    from tempo_eval.store.pg import engine, is_postgres_url

    bind = engine(location) if is_postgres_url(location) else sqlalchemy.create_engine(f"sqlite:///{location}")
    try:
        metadata = sqlalchemy.MetaData()
        metadata.reflect(bind=bind)
    finally:
        if not is_postgres_url(location):
            bind.dispose()
    return [(table.name, [column.name for column in table.columns])
            for table in metadata.sorted_tables if table.name not in SKIPPED]


def _read(connection: Any, table: str, columns: list[str]) -> Iterator[list[tuple[Any, ...]]]:
    cursor = connection.execute(f"SELECT {', '.join(columns)} FROM {table}")
    while rows := cursor.fetchmany(_BATCH):
        yield [tuple(row) for row in rows]


def copy_workspace(source: str, target: str, *, progress: Callable[[str, int], None] | None = None) -> list[TableCopy]:
    """Copy the workspace database at `source` into the one at `target` (file paths or
    postgresql:// URLs); returns each table's counts and checksums on both sides."""
    tables = tables_in_order(source)
    source_conn = connect(source)
    target_conn = connect(target)
    try:
        present = {name for name, _ in tables_in_order(target)}
        missing = [name for name, _ in tables if name not in present]
        if missing:
            raise ValueError(f"the target has no table {', '.join(missing)}: upgrade the tempo-eval that made it")
        held = [(name, n) for name, _ in tables if name not in SEEDED
                and (n := target_conn.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0])]
        if held:
            raise TargetNotEmpty(
                "the target already holds data (" + ", ".join(f"{n} rows in {name}" for name, n in held[:4]) +
                "); copy into a new, empty database (or a new SQLite file)")
        source_conn.execute(Dialect.of(source_conn).begin_snapshot)
        sums: dict[str, _Checksum] = {}
        with target_conn:
            for name in SEEDED & {t for t, _ in tables}:
                target_conn.execute(f"DELETE FROM {name}")
            for name, columns in sorted(tables, key=lambda t: t[0] in SEEDED):  # seeded ones last
                sums[name] = _Checksum()
                insert = f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
                for rows in _read(source_conn, name, columns):
                    sums[name].add(rows)
                    target_conn.executemany(insert, rows)
                    if progress is not None:
                        progress(name, sums[name].rows)
            _after_copy(target_conn, [name for name, columns in tables if "id" in columns])
        source_conn.rollback()  # the read snapshot
        copies = []
        for name, columns in tables:
            check = _Checksum()
            for rows in _read(target_conn, name, columns):
                check.add(rows)
            copies.append(TableCopy(name, sums[name].rows, check.rows, sums[name].hex, check.hex))
        return copies
    finally:
        source_conn.close()
        target_conn.close()


def _after_copy(connection: Any, id_tables: list[str]) -> None:
    """On PostgreSQL: each identity sequence past the highest id copied (SQLite needs nothing:
    a new row takes the highest id + 1)."""
    if Dialect.of(connection).name != "postgresql":
        return
    for table in id_tables:
        sequence = connection.execute("SELECT pg_get_serial_sequence(?, 'id')", (table,)).fetchone()[0]
        if sequence:
            connection.execute(f"SELECT setval(?, COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)",
                               (sequence,))

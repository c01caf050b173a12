"""The two SQL dialects of the workspace database, and the one place their differences live.

The store's statements are written once, in SQLite's SQL (`?` parameters, `INSERT OR IGNORE`,
`INSERT OR REPLACE`, `datetime('now')`, ...), and run on SQLite as they are: the SQLite path
costs nothing more than before. On PostgreSQL each statement is translated once (cached by its
text) by `postgres_sql`:

- `?` and `?N` parameters -> `%s` (in the order the parameters are bound), `%` -> `%%`;
- `INSERT OR IGNORE INTO t ...` -> `INSERT INTO t ... ON CONFLICT DO NOTHING`;
- `INSERT OR REPLACE INTO t (cols) ...` -> `... ON CONFLICT (t's key) DO UPDATE SET` the other
  columns (`PRIMARY_KEYS`);
- an `INSERT` into a table with an `id` column gets `RETURNING id`, which the cursor gives as
  `lastrowid`, as sqlite3's does;
- many rows of a plain `INSERT INTO t (cols) VALUES (?, ...)` (the results and claims of a batch)
  go by `COPY t (cols) FROM STDIN`;
- the SQLite functions `datetime('now')`, `julianday(x)`, `group_concat(x)` and
  `printf('%.17g', x)` -> their PostgreSQL equivalents;
- `BEGIN IMMEDIATE` (take the write lock at once) -> `BEGIN` and a transaction-scoped advisory
  lock (`WRITE_LOCK_KEY`), so the writers that relied on SQLite's single writer still take turns.

What a statement needs that differs beyond that is a `Dialect` attribute (`Dialect.skip_locked`,
`Dialect.begin_claim` and `Dialect.lock_claims`, the job queue's claim). `Dialect.of(connection)` says which one a connection speaks.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

#: the primary key of every table an `INSERT OR REPLACE` writes (its conflict target on PostgreSQL)
PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "verdict_cache": ("key",),
    "results": ("run_id", "row_idx", "metric"),
    "claim_labels": ("claim", "premises_hash", "reviewer"),
    "run_locks": ("run_id",),
    "dataset_chunks": ("dataset_id", "first_row"),
    "dataset_qrels": ("dataset_id",),
    "id_marks": ("name",),
}

#: tables whose rows get an id from the database: an INSERT into one returns it (`lastrowid`)
ID_TABLES = frozenset({"datasets", "runs", "jobs"})

#: columns that hold packed values (JSON text, or compressed bytes when long, `store.packing`):
#: SQLite keeps either in the column; PostgreSQL's column is BYTEA, so text goes as its UTF-8
PACKED_COLUMNS: dict[str, frozenset[str]] = {
    "results": frozenset({"details"}),
    "datasets": frozenset({"rows"}),
    "dataset_chunks": frozenset({"rows"}),
}

#: the advisory lock a PostgreSQL `BEGIN IMMEDIATE` takes: one writer of that kind at a time
WRITE_LOCK_KEY = 7_365_482_190

#: the advisory lock a PostgreSQL job claim takes (`Dialect.lock_claims`)
CLAIM_LOCK_KEY = 7_365_482_191

#: text as SQLite's datetime('now') gives it: UTC, 'YYYY-MM-DD HH:MM:SS'
_NOW = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"


@dataclass(frozen=True)
class Dialect:
    """What differs between the workspace's two databases beyond a statement's translation."""

    name: str
    #: appended to the SELECT that picks queued jobs: locked rows (another worker's claim) are
    #: passed over, so workers on several machines claim from one queue at once
    skip_locked: str
    #: how the queue's claim begins its transaction (SQLite: the write lock at once)
    begin_claim: str
    #: a read transaction that sees one snapshot of every table (`store.copy`)
    begin_snapshot: str
    #: run first in a claim's transaction: claims take turns (a few milliseconds each), so each
    #: counts the lanes' running jobs as they are and no lane's limit is passed ('': BEGIN
    #: IMMEDIATE did it)
    lock_claims: str = ""

    @staticmethod
    def of(connection: Any) -> Dialect:
        return getattr(connection, "dialect", SQLITE)


SQLITE = Dialect("sqlite", skip_locked="", begin_claim="BEGIN IMMEDIATE", begin_snapshot="BEGIN")
POSTGRES = Dialect("postgresql", skip_locked=" FOR UPDATE SKIP LOCKED", begin_claim="BEGIN",
                   begin_snapshot="BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                   lock_claims=f"SELECT pg_advisory_xact_lock({CLAIM_LOCK_KEY})")


@dataclass(frozen=True)
class Translated:
    """A statement as PostgreSQL runs it: `sql`; `order`, the positions of the caller's
    parameters in the order `sql` binds them (None: as given); `packed`, positions (of the
    caller's parameters) bound to a packed column, whose text goes as UTF-8 bytes; `returns_id`,
    whether the statement returns the new row's id."""

    sql: str
    order: tuple[int, ...] | None
    packed: tuple[int, ...]
    returns_id: bool
    #: for a plain `INSERT INTO t (cols) VALUES (?, ..., ?)`: the `COPY t (cols) FROM STDIN` that
    #: writes many rows the same way, several times faster (`PgConnection.executemany`)
    copy: str | None = None


_LITERAL = re.compile(r"'(?:[^']|'')*'")
_PLACEHOLDER = re.compile(r"\?(\d*)")
_FUNCTION = re.compile(r"\b(datetime|julianday|group_concat|printf)\s*\(", re.IGNORECASE)
_INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+(IGNORE|REPLACE)\s+)?INTO\s+(\w+)\s*(?:\(([^)]*)\))?", re.IGNORECASE)
_PLAIN_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)\s*\(([^)]*)\)\s*VALUES\s*\(([?,\s]*)\)\s*;?\s*$",
                           re.IGNORECASE)
_UPDATE = re.compile(r"^\s*UPDATE\s+(\w+)\s+SET\s", re.IGNORECASE)
_ASSIGNED_BEFORE = re.compile(r"(\w+)\s*=\s*$")
_VALUES = re.compile(r"\s*VALUES\s*\(", re.IGNORECASE)


def is_begin_immediate(sql: str) -> bool:
    return sql.strip().upper().rstrip(";") == "BEGIN IMMEDIATE"


@functools.lru_cache(maxsize=4096)
def postgres_sql(sql: str) -> Translated:
    """The PostgreSQL form of one store statement (see the module's docstring)."""
    literals: list[str] = []

    def hide(match: re.Match[str]) -> str:
        literals.append(match.group(0))
        return f"\x00{len(literals) - 1}\x00"

    skeleton = _LITERAL.sub(hide, sql)  # no string literal left to confuse the rewrites
    plain = _PLAIN_INSERT.match(skeleton)
    copy = f"COPY {plain.group(1)} ({plain.group(2)}) FROM STDIN" if plain and \
        plain.group(3).replace(" ", "") == ",".join("?" * len(plain.group(2).split(","))) else None
    skeleton = _functions(skeleton, literals)
    packed = _packed_positions(skeleton)
    returns_id = False
    insert = _INSERT.match(skeleton)
    if insert is not None:
        conflict, table, columns = insert.group(1), insert.group(2).lower(), insert.group(3)
        skeleton = skeleton[: insert.start()] + f"INSERT INTO {table}" + (f" ({columns})" if columns else "") + \
            skeleton[insert.end():]
        skeleton = skeleton.rstrip().rstrip(";")
        if conflict is not None and conflict.upper() == "IGNORE":
            skeleton += " ON CONFLICT DO NOTHING"
        elif conflict is not None:
            skeleton += _upsert(table, columns)
        if table in ID_TABLES and "RETURNING" not in skeleton.upper():
            skeleton += " RETURNING id"
            returns_id = True
    numbers = _PLACEHOLDER.findall(skeleton)  # N of each `?N`, '' of each plain `?`, in order
    order = tuple(int(n) - 1 if n else i for i, n in enumerate(numbers)) if any(numbers) else None
    skeleton = _PLACEHOLDER.sub("%s", skeleton.replace("%", "%%"))
    text = re.sub("\x00(\\d+)\x00", lambda m: literals[int(m.group(1))].replace("%", "%%"), skeleton)
    return Translated(text, order, packed, returns_id, copy)


def _upsert(table: str, columns: str | None) -> str:
    if table not in PRIMARY_KEYS or not columns:
        raise ValueError(f"INSERT OR REPLACE INTO {table}: its key is not in store.dialect.PRIMARY_KEYS")
    key = PRIMARY_KEYS[table]
    names = [c.strip() for c in columns.split(",")]
    others = [c for c in names if c not in key]
    if not others:
        return f" ON CONFLICT ({', '.join(key)}) DO NOTHING"
    return f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in others)


def _packed_positions(skeleton: str) -> tuple[int, ...]:
    """Positions of the `?` parameters an INSERT or an UPDATE binds to a packed column."""
    if not (_INSERT.match(skeleton) or _UPDATE.match(skeleton)):
        return ()
    table, columns = bound_columns(skeleton)
    packed = PACKED_COLUMNS.get(table or "", frozenset())
    return tuple(i for i, column in enumerate(columns) if column in packed)


def bound_columns(sql: str) -> tuple[str | None, list[str | None]]:
    """The table a statement writes (INSERT INTO, UPDATE; else the first it reads FROM) and the
    column each `?` binds, in order: an INSERT's column for a plain `?` value, else the column of
    a `column = ?`; None for any other `?`. ValueError for unbalanced parentheses."""
    insert = _INSERT.match(sql)
    named = insert or re.search(r"\b(?:UPDATE|FROM)\s+(\w+)", sql, re.IGNORECASE)
    table = None if named is None else named.group(2 if insert else 1).lower()
    columns: list[str | None] = []
    start = 0
    values = _VALUES.match(sql, insert.end()) if insert and insert.group(3) else None
    if values is not None:
        start = _closing(sql, values.end())
        slots = _split(sql[values.end(): start])
        for name, slot in zip(insert.group(3).split(","), slots, strict=False):
            columns += [name.strip()] if slot == "?" else [None] * slot.count("?")
    for mark in re.finditer(r"\?", sql[start:]):
        assigned = _ASSIGNED_BEFORE.search(sql, 0, start + mark.start())
        columns.append(assigned.group(1) if assigned else None)
    return table, columns


def _functions(skeleton: str, literals: list[str]) -> str:
    """SQLite's functions rewritten for PostgreSQL (innermost arguments first)."""
    out, position = [], 0
    while (match := _FUNCTION.search(skeleton, position)) is not None:
        end = _closing(skeleton, match.end())
        arguments = _split(_functions(skeleton[match.end(): end], literals))
        out.append(skeleton[position: match.start()])
        out.append(_rewrite(match.group(1).lower(), arguments, literals))
        position = end + 1
    out.append(skeleton[position:])
    return "".join(out)


def _rewrite(name: str, arguments: list[str], literals: list[str]) -> str:
    def literal(text: str) -> str | None:
        found = re.fullmatch("\x00(\\d+)\x00", text.strip())
        return literals[int(found.group(1))] if found else None

    if name == "datetime" and len(arguments) == 1 and literal(arguments[0]) == "'now'":
        return _NOW
    if name == "julianday" and len(arguments) == 1:
        return f"(EXTRACT(EPOCH FROM CAST({arguments[0]} AS timestamp)) / 86400.0)"
    if name == "group_concat" and len(arguments) == 1:
        return f"string_agg(CAST({arguments[0]} AS text), ',')"
    if name == "printf" and len(arguments) == 2 and literal(arguments[0]) == "'%.17g'":
        return f"CAST({arguments[1]} AS text)"  # float8's text is the shortest exact one
    raise ValueError(f"no PostgreSQL form for {name}({', '.join(arguments)}) in store.dialect")


def _closing(text: str, start: int) -> int:
    depth = 1
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    raise ValueError(f"unbalanced parentheses in {text!r}")


def _split(arguments: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in arguments:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (char == "(") - (char == ")")
        current += char
    parts.append(current)
    return [p.strip() for p in parts]

"""A PostgreSQL workspace database behind the connection interface the store uses.

The store talks to its database through what `sqlite3.Connection` offers (`execute`,
`executemany`, `commit`, `rollback`, `in_transaction`, `with connection:`, a cursor's `fetchone`
/ `fetchall` / `fetchmany` / `rowcount` / `lastrowid` / `description`). `PgConnection` offers
the same over a psycopg 3 connection that SQLAlchemy opens from the `TEMPO_EVAL_DB` URL, each
statement translated once by `tempo_eval.store.dialect.postgres_sql`, so every store query has
one code path on both databases.

Transactions follow sqlite3's: a statement that writes (INSERT, UPDATE, DELETE) begins one when
none is open, and it lasts until `commit` / `rollback` (or the end of `with connection:`);
reads outside one see each committed write at once and hold no snapshot open. Parameters are
bound on the client (psycopg's `ClientCursor`), as literals, so `? IS NULL` and `GROUP BY
row_idx / ?` mean what they mean on SQLite. A bool is bound as 1 / 0 (the flags are INTEGER
columns) and a sum or average comes back as an int or a float, never a Decimal.

Errors become `WorkspaceError`s naming the database (its URL without the password).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from tempo_eval.common.secrets import mask, masked_url, url_passwords
from tempo_eval.store.dialect import (
    POSTGRES,
    WRITE_LOCK_KEY,
    Translated,
    bound_columns,
    is_begin_immediate,
    postgres_sql,
)
from tempo_eval.store.errors import WorkspaceError

URL_PREFIXES = ("postgresql://", "postgresql+psycopg://", "postgres://")

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def is_postgres_url(location: Any) -> bool:
    return isinstance(location, str) and location.lower().startswith(URL_PREFIXES)


def sqlalchemy_url(url: str) -> str:
    """The URL with SQLAlchemy's psycopg 3 driver named (`postgresql://` means psycopg2 to it)."""
    scheme, rest = url.split("://", 1)
    return f"postgresql+psycopg://{rest}" if scheme.lower() in ("postgresql", "postgres") else url


@functools.lru_cache(maxsize=64)
def engine(url: str) -> Any:
    """The SQLAlchemy engine of a database URL (one per URL and process; no pool: each store
    holds its own connection for as long as it lives)."""
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    return sqlalchemy.create_engine(sqlalchemy_url(url), poolclass=NullPool,
                                    connect_args={"connect_timeout": 10})


def postgres_error(url: str, error: BaseException) -> WorkspaceError:
    """The WorkspaceError saying what a PostgreSQL error means for the workspace at `url`."""
    where = masked_url(url)
    message = _without_password(" ".join(str(error).split()) or type(error).__name__, url, where)
    lowered = message.lower()
    if "connection" in lowered or "could not" in lowered or "timeout" in lowered or "password" in lowered:
        return WorkspaceError(where, f"cannot connect ({message})",
                              "check that the server runs and the URL in TEMPO_EVAL_DB (host, port, user, "
                              "password, database name) is right")
    if "does not exist" in lowered and "database" in lowered:
        return WorkspaceError(where, message, "create the database (createdb), or fix TEMPO_EVAL_DB")
    if "disk full" in lowered or "no space" in lowered:
        return WorkspaceError(where, f"cannot write: {message}", "free disk space on the database server")
    return WorkspaceError(where, f"PostgreSQL error: {message}",
                          "check the server's log; every row finished so far is stored")


def nul_error(where: str, sql: str, rows: Iterable[Sequence[Any]]) -> WorkspaceError | None:
    """What a text value holding a NUL character (which SQLite stores and PostgreSQL's text
    refuses) means: the column and the value that holds it. None when no parameter holds one."""
    for row in rows:
        holding = [(_column_of(sql, i), v) for i, v in enumerate(row or ()) if isinstance(v, str) and "\x00" in v]
        if not holding:
            continue
        column, value = min(holding, key=lambda found: found[0] == "a text value")  # a named column first
        shown = repr(value if len(value) <= 60 else value[:57] + "...")
        return WorkspaceError(where, f"cannot store {column} {shown}: it holds a NUL character "
                              "(\\x00, \\u0000 in JSON), which PostgreSQL text cannot hold",
                              "remove the NUL characters from the input (they are not text), then run "
                              "again; every row finished so far is stored")
    return None


def _column_of(sql: str, index: int) -> str:
    """`table.column` that the `index`-th `?` binds (`bound_columns`), else 'a text value'."""
    try:
        table, columns = bound_columns(sql)
    except ValueError:
        table, columns = None, []
    column = columns[index] if index < len(columns) else None
    if column is None:
        return "a text value"
    return f"{table}.{column}" if table else column


def _without_password(message: str, url: str, shown: str) -> str:
    """An error's text without the URL's password (a driver may quote the URL it could not use)."""
    return mask(message.replace(url, shown), url_passwords(url)) or message


def _adapters(connection: Any) -> None:
    """bool as 1 / 0; numeric (SUM of integers, AVG) as int or float."""
    from psycopg.adapt import Dumper, Loader
    from psycopg.postgres import types

    class BoolAsInt(Dumper):
        oid = types["int8"].oid

        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

        quote = dump

    class Number(Loader):
        def load(self, data: Any) -> int | float:
            text = bytes(data).decode("ascii")
            try:
                return int(text)
            except ValueError:
                return float(text)

    connection.adapters.register_dumper(bool, BoolAsInt)
    connection.adapters.register_loader("numeric", Number)


class PgCursor:
    """The rows of one statement (sqlite3's cursor interface)."""

    def __init__(self, connection: PgConnection, cursor: Any, lastrowid: int | None = None) -> None:
        self._connection, self._cursor, self.lastrowid = connection, cursor, lastrowid

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def description(self) -> Any:
        return self._cursor.description

    def _fetch(self, method: str, *args: Any) -> Any:
        if self._cursor.description is None:
            return None if method == "fetchone" else []
        try:
            return getattr(self._cursor, method)(*args)
        except Exception as error:
            raise self._connection.error(error) from None

    def fetchone(self) -> Any:
        return self._fetch("fetchone")

    def fetchall(self) -> list[Any]:
        return self._fetch("fetchall")

    def fetchmany(self, size: int = 1) -> list[Any]:
        return self._fetch("fetchmany", size)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())

    def close(self) -> None:
        self._cursor.close()


class PgConnection:
    """A workspace database on a PostgreSQL server, used as the store uses a sqlite3 connection."""

    dialect = POSTGRES

    def __init__(self, url: str) -> None:
        import psycopg

        self.url = url
        self.workspace_path = masked_url(url)
        self._idle = psycopg.pq.TransactionStatus.IDLE
        self._open()

    def _open(self) -> None:
        import psycopg

        try:
            self._raw = engine(self.url).raw_connection()
        except Exception as error:
            raise postgres_error(self.url, error) from None
        self._pg = self._raw.driver_connection
        self._pg.rollback()
        self._pg.autocommit = True
        self._pg.cursor_factory = psycopg.ClientCursor
        _adapters(self._pg)

    def _cursor(self) -> Any:
        if self._pg.closed:  # the server restarted or the network dropped: the statement that
            self._raw.invalidate()  # found it failed; the next one connects again
            self._open()
        return self._pg.cursor()

    def error(self, error: BaseException, sql: str = "", rows: Iterable[Sequence[Any]] = ()) -> WorkspaceError:
        if "NUL (0x00)" in str(error):
            return nul_error(self.workspace_path, sql, rows) or postgres_error(self.url, error)
        return postgres_error(self.url, error)

    @property
    def in_transaction(self) -> bool:
        return self._pg.info.transaction_status != self._idle

    def _begin_if_writing(self, cursor: Any, sql: str) -> None:
        if not self.in_transaction and sql.lstrip()[:7].upper().startswith(_WRITES):
            cursor.execute("BEGIN")

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> PgCursor:
        cursor = self._cursor()
        try:
            if is_begin_immediate(sql):  # SQLite's single writer: take turns on an advisory lock
                cursor.execute("BEGIN")
                cursor.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")
                return PgCursor(self, cursor)
            translated = postgres_sql(sql)
            self._begin_if_writing(cursor, sql)
            cursor.execute(translated.sql, _bound(translated, parameters))
            lastrowid = None
            if translated.returns_id:
                row = cursor.fetchone()
                lastrowid = None if row is None else int(row[0])
            return PgCursor(self, cursor, lastrowid)
        except WorkspaceError:
            raise
        except Exception as error:
            raise self.error(error, sql, [parameters]) from None

    def executemany(self, sql: str, seq_of_parameters: Iterable[Sequence[Any]]) -> PgCursor:
        translated = postgres_sql(sql)
        rows = seq_of_parameters if translated.order is None and not translated.packed else \
            (_bound(translated, row) for row in seq_of_parameters)
        cursor = self._cursor()
        row: Sequence[Any] = ()  # the row being written (an error names the value it holds)
        try:
            self._begin_if_writing(cursor, sql)
            if translated.copy is not None:  # the same rows, a few times faster (results, claims)
                with cursor.copy(translated.copy) as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                rows = list(rows)
                cursor.executemany(translated.sql, rows)
        except Exception as error:
            raise self.error(error, sql, rows if translated.copy is None else [row]) from None
        return PgCursor(self, cursor)

    def commit(self) -> None:
        if self.in_transaction:
            try:
                self._pg.execute("COMMIT")
            except Exception as error:
                raise self.error(error) from None

    def rollback(self) -> None:
        if self.in_transaction:
            self._pg.execute("ROLLBACK")

    def close(self) -> None:
        try:
            if not self._pg.closed:
                self.rollback()
        finally:
            self._raw.close()

    def __enter__(self) -> PgConnection:
        return self

    def __exit__(self, kind: Any, *exc: Any) -> bool:
        if kind is None:
            self.commit()
        else:
            self.rollback()
        return False


def _bound(translated: Translated, parameters: Sequence[Any]) -> Sequence[Any]:
    if translated.order is not None:
        parameters = [parameters[i] for i in translated.order]
    if translated.packed:
        parameters = list(parameters)
        for position in translated.packed:
            if isinstance(parameters[position], str):
                parameters[position] = parameters[position].encode("utf-8")
    return parameters


def connect_postgres(url: str) -> PgConnection:
    """A connection to the workspace database at `url`, its schema brought to the newest
    revision first when it is not there (under an advisory lock, in one transaction: several
    processes opening a new database at once migrate it once)."""
    from tempo_eval.store import migrations

    connection = PgConnection(url)
    try:
        revision = migrations.current(connection)
        if revision is not None and revision > migrations.HEAD:
            raise WorkspaceError(connection.workspace_path,
                                 f"its schema is at revision {revision}, newer than this tempo-eval understands "
                                 f"({migrations.HEAD})", "upgrade tempo-eval, or use another TEMPO_EVAL_DB")
        if revision != migrations.HEAD:
            try:
                with engine(url).connect() as bind:
                    bind.exec_driver_sql(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")
                    migrations.upgrade(bind)
                    bind.commit()
            except WorkspaceError:
                raise
            except Exception as error:
                raise postgres_error(url, error) from None
    except BaseException:
        connection.close()
        raise
    return connection

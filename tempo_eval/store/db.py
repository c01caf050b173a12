"""The workspace database: one SQLite file in the workspace directory (the default), or a
PostgreSQL server named by `TEMPO_EVAL_DB`, with a versioned schema.

The workspace is `TEMPO_EVAL_HOME` when set, else `~/.tempo_eval`. Unless `TEMPO_EVAL_DB` names
a server (`postgresql://user:password@host:port/database`), every table lives in one file
(`tempo_eval.sqlite`) so a workspace can be copied, backed up or deleted as a unit. The schema's
steps are Alembic revisions (`tempo_eval.store.migrations`); a database is brought to the newest
when opened, an older SQLite file in place (its `PRAGMA user_version` says how far the steps made
before Alembic, `migrations.legacy.MIGRATIONS`, have come). On PostgreSQL the store's statements are
translated once each (`tempo_eval.store.dialect`) and run through `tempo_eval.store.pg`.

A workspace that cannot be used (not a database, truncated or otherwise damaged, read-only, or
the disk full; a server that cannot be reached) raises `WorkspaceError`, whose message is one
line naming the file (or server), what is wrong and what to do; every SQLite error met through a
connection made here is turned into one. The file's integrity is checked (`PRAGMA quick_check`)
the first time a process opens it, and again whenever its size or modification time has
changed, so damaged pages are found before any stored result is reused.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from tempo_eval.store.dialect import SQLITE

DB_FILENAME = "tempo_eval.sqlite"

from tempo_eval.store.migrations.legacy import MIGRATIONS, SCHEMA_VERSION, _statements  # noqa: E402, F401

#: the id a new run takes, in an INSERT INTO runs (id, ...) VALUES (NEXT_RUN_ID, ...): one above
#: the highest id any run ever had (`id_marks`), so ids are never reused after a delete
NEXT_RUN_ID = "(SELECT high + 1 FROM id_marks WHERE name = 'runs')"



# ---- damaged workspaces ---------------------------------------------------------------------

def json_or(text: Any, default: Any) -> Any:
    """A nullable JSON column's value: `default` where the column is SQL NULL (None, or the NaN /
    pd.NA that pandas puts in its place once the column went through a DataFrame) or empty, else
    the decoded JSON."""
    if not isinstance(text, (str, bytes)) or not text:
        return default
    return json.loads(text)


from tempo_eval.store.errors import _NEW_OR_RESTORE, WorkspaceError, workspace_error  # noqa: E402, F401


def check_free_space(conn: sqlite3.Connection, needed: int, what: str) -> None:
    """WorkspaceError when the disk of the workspace database has less than `needed` bytes free;
    `what` says what would be stored."""
    import shutil

    from tempo_eval.store.dialect import Dialect

    if Dialect.of(conn).name != "sqlite":  # a server's disk is its administrator's
        return
    path = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    if not path:  # an in-memory database
        return
    free = shutil.disk_usage(Path(path).parent).free
    if free < needed:
        raise WorkspaceError(
            path, f"the disk has {free / 1e6:,.0f} MB free; {what} needs about {needed / 1e6:,.0f} MB",
            "free disk space, or use a workspace on another disk (--workspace / TEMPO_EVAL_HOME)",
        )


class _Cursor(sqlite3.Cursor):
    """A cursor whose SQLite errors are WorkspaceErrors (rows may be read lazily, while fetching)."""

    def _fail(self, error: sqlite3.Error) -> WorkspaceError:
        return workspace_error(getattr(self.connection, "workspace_path", "?"), error)

    def execute(self, *args: Any) -> _Cursor:  # type: ignore[override]
        try:
            return super().execute(*args)  # type: ignore[return-value]
        except sqlite3.Error as error:
            raise self._fail(error) from None

    def executemany(self, *args: Any) -> _Cursor:  # type: ignore[override]
        try:
            return super().executemany(*args)  # type: ignore[return-value]
        except sqlite3.Error as error:
            raise self._fail(error) from None

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as error:
            raise self._fail(error) from None

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as error:
            raise self._fail(error) from None

    def fetchmany(self, *args: Any) -> list[Any]:
        try:
            return super().fetchmany(*args)
        except sqlite3.Error as error:
            raise self._fail(error) from None


class WorkspaceConnection(sqlite3.Connection):
    """A connection that reports SQLite errors as WorkspaceError naming its file."""

    workspace_path: str = "?"
    dialect = SQLITE

    def execute(self, *args: Any) -> _Cursor:  # type: ignore[override]
        return self.cursor(_Cursor).execute(*args)

    def executemany(self, *args: Any) -> _Cursor:  # type: ignore[override]
        return self.cursor(_Cursor).executemany(*args)

    def commit(self) -> None:
        try:
            super().commit()
        except sqlite3.Error as error:
            raise workspace_error(self.workspace_path, error) from None

    def __exit__(self, *exc: Any) -> Any:
        try:
            return super().__exit__(*exc)
        except sqlite3.Error as error:  # the commit at the end of `with connection:`
            raise workspace_error(self.workspace_path, error) from None


_checked_lock = threading.Lock()
#: (path, size, mtime_ns) of files this process found intact: checked again when they change
_checked: set[tuple[str, int, int]] = set()


def check_integrity(conn: sqlite3.Connection, path: str | os.PathLike[str], *, force: bool = False) -> None:
    """Raise WorkspaceError unless `PRAGMA quick_check` finds the file intact. Skipped when this
    process already checked the file at its current size and modification time (unless `force`).

    quick_check verifies every page, record and free-list (what a torn write or garbage in the
    middle damages) but not that indexes match their tables, which is O(N log N); see
    bench/runner.py for its cost."""
    try:
        stat = os.stat(path)
    except OSError:
        return
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
    with _checked_lock:
        if key in _checked and not force:
            return
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)").fetchall()]
    if problems != ["ok"]:
        raise WorkspaceError(path, f"the database is damaged (the integrity check found: {'; '.join(problems)[:300]})",
                             _NEW_OR_RESTORE)
    with _checked_lock:
        _checked.add(key)


def workspace_dir() -> Path:
    """The workspace directory (created if missing)."""
    path = Path(os.environ.get("TEMPO_EVAL_HOME") or Path.home() / ".tempo_eval")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _files_root() -> Path:
    configured = os.environ.get("TEMPO_EVAL_FILES", "").strip()
    return Path(configured).expanduser() if configured else \
        Path(os.environ.get("TEMPO_EVAL_HOME") or Path.home() / ".tempo_eval")


def files_dir() -> Path:
    """The folder of the files the workspace keeps beside its database (created if missing):
    `TEMPO_EVAL_FILES` when set, else the workspace directory, for either database. Uploads
    (`uploads/`), saved comparisons and caches (`cache/`), workers' logs (`logs/`) and temporary
    files (`tmp/`) go there; a team whose app processes and workers run on several machines
    points them all at one shared volume."""
    path = _files_root()
    path.mkdir(parents=True, exist_ok=True)
    return path


def comparisons_dir() -> Path:
    """`cache/compare/` of the files folder: the saved comparisons of run files
    (`tempo_eval.compare.saved` writes them, `tempo_eval.store.job_files` sweeps old ones)."""
    return files_dir() / "cache" / "compare"


def default_db_path() -> Path:
    return workspace_dir() / DB_FILENAME


#: the files beside the database that SQLite writes (write-ahead log, shared memory, rollback journal)
DB_COMPANIONS = ("-wal", "-shm", "-journal")
#: the workspace's folders the store and the dashboard's jobs write (saved comparisons, uploads,
#: worker logs, temporary files)
OWNED_FOLDERS = ("cache", "uploads", "logs", "tmp")


def owned_by_workspace(path: str | os.PathLike[str]) -> str | None:
    """What of the workspace's `path` is when the store owns it, so writing there would destroy
    what is stored ("the workspace database", "a file of the workspace's uploads/ folder"), else
    None. Links are resolved; a hard link to the database counts as the database. Creates
    nothing (the workspace may not exist)."""
    workspace = Path(os.environ.get("TEMPO_EVAL_HOME") or Path.home() / ".tempo_eval")
    try:
        target = Path(path).resolve()
        home = workspace.resolve()
    except (OSError, RuntimeError):  # a link loop: not a file of ours; its writer says what it is
        return None
    for suffix in ("", *DB_COMPANIONS):
        database = home / (DB_FILENAME + suffix)
        try:
            same = target == database or (target.exists() and database.exists() and os.path.samefile(target, database))
        except OSError:
            same = False
        if same:
            return "the workspace database" if not suffix else f"the workspace database's {suffix[1:]} file"
    try:
        files = _files_root().resolve()
    except (OSError, RuntimeError):
        files = home
    for root in dict.fromkeys((home, files)):
        for folder in OWNED_FOLDERS:
            if target.is_relative_to(root / folder):
                return f"a file of the workspace's {folder}/ folder"
    return None


#: bytes the write-ahead log (`tempo_eval.sqlite-wal`) is truncated to after a checkpoint
WAL_SIZE_LIMIT = 8 << 20


def _bound_as_is(value: Any) -> Any:
    return value


# sqlite3 binds None and bytes as they are, but only after looking for an adapter and not finding
# one: a tuple key, a registry miss, then an AttributeError raised and cleared on its protocol
# type, for each such parameter (4 of a result's 10: system, reason_code, success, details). With
# this adapter registered the lookup ends at the registry: the same values are bound, 1.1 us a
# result less (3.3 against 2.2 us a row of 4 such parameters, measured). An adapter the program
# registered before is kept: this one only where there is none.
for _type in (type(None), bytes):
    if (_type, sqlite3.PrepareProtocol) not in sqlite3.adapters:
        sqlite3.register_adapter(_type, _bound_as_is)

#: how often a locked or busy database is tried again while a workspace is being opened, and the
#: first wait (doubled each time): other processes may be creating or migrating the same file
_OPEN_ATTEMPTS = 8
_OPEN_BACKOFF = 0.05


def database_url() -> str | None:
    """`TEMPO_EVAL_DB` when it names a PostgreSQL server; None when unset or empty (the SQLite
    file of the workspace). Anything else is a WorkspaceError saying what it should be."""
    url = os.environ.get("TEMPO_EVAL_DB", "").strip()
    if not url:
        return None
    from tempo_eval.store.pg import is_postgres_url

    if not is_postgres_url(url):
        raise WorkspaceError("TEMPO_EVAL_DB", f"{url.split('://')[0]!r} is not a database this tempo-eval uses",
                             "give a postgresql://user:password@host:port/database URL, or unset it to use "
                             "the workspace's SQLite file")
    return url


def database_location() -> str:
    """What `connect()` opens: the `TEMPO_EVAL_DB` URL, else the workspace's SQLite file."""
    return database_url() or str(default_db_path())


def describe_location(location: str | os.PathLike[str] | None = None) -> str:
    """The database as messages name it: a file's path, or a URL with its password hidden."""
    location = database_location() if location is None else str(location)
    from tempo_eval.common.secrets import masked_url
    from tempo_eval.store.pg import is_postgres_url

    return masked_url(location) if is_postgres_url(location) else location


def connect(path: str | os.PathLike[str] | None = None) -> Any:
    """Open (creating and migrating as needed) the workspace database: `path` (a SQLite file, or
    a postgresql:// URL), by default `database_location()`.

    SQLite: WAL mode lets the dashboard read while a batch run writes; `synchronous=NORMAL` keeps
    every committed row across a process kill (only an OS crash can lose the last transactions).
    Several processes may open a new workspace at the same moment: switching to WAL and migrating
    are retried with a short backoff while the file is locked (see `migrate`).
    """
    location = path if path is not None else database_location()
    if isinstance(location, str) and "://" in location:
        from tempo_eval.store.pg import connect_postgres

        return connect_postgres(location)
    db_path = Path(location)
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(db_path, timeout=30.0, check_same_thread=False, factory=WorkspaceConnection)
    except (OSError, sqlite3.Error) as error:
        raise workspace_error(db_path, error) from None
    conn.workspace_path = str(db_path)
    try:
        # SQLite may answer "database is locked" at once, without waiting for the busy timeout,
        # while another connection is switching the same new file to WAL.
        _retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone())
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # SQLite reuses a -wal file without shrinking it: one large transaction, or readers that
        # kept a checkpoint from finishing (the dashboard during a run), left it at 53-82 MB for
        # good. Cut back to this size whenever the log restarts after a checkpoint.
        conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
        check_integrity(conn, db_path)
        _retry_busy(lambda: migrate(conn))
    except BaseException:
        conn.close()
        raise
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Bring a SQLite file's schema up to the newest revision; returns the `user_version` found.

    A current file costs two reads. Otherwise the version is read again, checked and every
    missing step applied in one `BEGIN IMMEDIATE` transaction (`migrations.upgrade_sqlite`):
    when two processes open a new workspace at once, the second waits, then finds the schema
    current and does nothing. A failed step rolls back the whole upgrade, leaving the version
    found intact.
    """
    from tempo_eval.store import migrations

    found = conn.execute("PRAGMA user_version").fetchone()[0]
    _check_version(found, conn)
    if _is_current(conn):  # the common case: no write lock needed
        return found
    migrations.upgrade_sqlite(conn, lambda: _is_current(conn))
    return found


def _is_current(conn: sqlite3.Connection) -> bool:
    from tempo_eval.store import migrations
    from tempo_eval.store.migrations import legacy

    version = conn.execute("PRAGMA user_version").fetchone()[0]
    _check_version(version, conn)
    return version == legacy.SCHEMA_VERSION and migrations.current(conn) == migrations.HEAD


def _check_version(found: int, conn: Any) -> None:
    from tempo_eval.store import migrations

    revision = migrations.current(conn)
    if revision is not None and revision > migrations.HEAD:
        raise WorkspaceError(
            getattr(conn, "workspace_path", "?"),
            f"its schema is at revision {revision}, newer than this tempo-eval understands ({migrations.HEAD})",
            "upgrade tempo-eval, or use another --workspace / TEMPO_EVAL_HOME / TEMPO_EVAL_DB",
        )
    from tempo_eval.store.migrations import legacy

    if found > legacy.SCHEMA_VERSION:
        raise WorkspaceError(
            getattr(conn, "workspace_path", "?"),
            f"it has schema version {found}, newer than this tempo-eval understands ({legacy.SCHEMA_VERSION})",
            "upgrade tempo-eval, or use another --workspace / TEMPO_EVAL_HOME",
        )


T = TypeVar("T")


def _retry_busy(action: Callable[[], T]) -> T:
    """`action()`, tried again with a doubling wait while SQLite reports the file locked or busy."""
    delay = _OPEN_BACKOFF
    for attempt in range(_OPEN_ATTEMPTS):
        try:
            return action()
        except (sqlite3.OperationalError, WorkspaceError) as error:
            message = str(error).lower()
            if attempt == _OPEN_ATTEMPTS - 1 or not ("locked" in message or "busy" in message):
                raise
            time.sleep(delay * (1 + random.random()))  # jitter: the contenders do not retry in step
            delay *= 2
    raise AssertionError("unreachable")

"""The workspace database's schema steps, as Alembic revisions (`versions/NNNN_what.py`).

`upgrade(connection)` brings a database of either kind to the newest revision (`HEAD`), in the
caller's transaction; `current(connection)` is the revision a database is at (None: none yet).
Alembic is imported only when there is something to do: opening a current workspace reads one
row (`alembic_version`) and compares it with `HEAD`, which is read from the file names here.

Revision ids are the file names' four digits, in order ("0001", "0002", ...); each file's
`down_revision` is the one before it. Adding a schema step is adding the next file (see
docs/operations/upgrading.md): its `upgrade()` runs `op.execute` statements that both databases
understand, or branches on `op.get_bind().dialect.name` where they differ.

SQLite workspaces made before Alembic carry their version in `PRAGMA user_version` (0-14, the
list `legacy.MIGRATIONS`); the baseline revision applies the steps such a file
lacks, so it is upgraded in place and loses nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent

_REVISION_FILE = re.compile(r"^(\d{4})_\w+\.py$")

#: the newest revision: the highest numbered file of versions/
HEAD = max(m.group(1) for p in (FOLDER / "versions").iterdir() if (m := _REVISION_FILE.match(p.name)))


def current(connection: Any) -> str | None:
    """The revision the database of a store connection (sqlite3 or `PgConnection`) is at."""
    from tempo_eval.store.dialect import Dialect

    if Dialect.of(connection).name == "sqlite":
        present = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'").fetchone()
    else:
        present = connection.execute("SELECT to_regclass('alembic_version')").fetchone()[0]
    if not present:
        return None
    row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if row is None else str(row[0])


def apply_legacy(bind: Any) -> None:
    """On SQLite: the steps of `legacy.MIGRATIONS` the file lacks (`PRAGMA user_version`)."""
    from tempo_eval.store.migrations import legacy

    found = bind.exec_driver_sql("PRAGMA user_version").scalar() or 0
    for version in range(found, len(legacy.MIGRATIONS)):
        for statement in legacy._statements(legacy.MIGRATIONS[version]):
            bind.exec_driver_sql(statement)
        bind.exec_driver_sql(f"PRAGMA user_version = {version + 1}")


def upgrade(bind: Any) -> None:
    """Bring the database of a SQLAlchemy connection to HEAD, in its open transaction."""
    from alembic import command
    from alembic.config import Config

    if bind.dialect.name == "sqlite":
        apply_legacy(bind)
    config = Config()
    config.set_main_option("script_location", str(FOLDER))
    config.attributes["connection"] = bind
    command.upgrade(config, "head")


class _Borrowed:
    """A sqlite3 connection lent to SQLAlchemy: everything passes through but `close`, which
    the lender does."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)

    def close(self) -> None:
        pass


def upgrade_sqlite(connection: Any, is_current: Any) -> None:
    """`upgrade` on a store's sqlite3 connection, in one `BEGIN IMMEDIATE` transaction: the
    write lock is taken before `is_current()` is asked again, so when several processes open a
    new workspace at once the others wait, then find it current. A failed step rolls the whole
    upgrade back."""
    import sqlalchemy
    from sqlalchemy.pool import StaticPool

    from tempo_eval.store.errors import workspace_error

    borrowed = _Borrowed(connection)
    engine = sqlalchemy.create_engine("sqlite://", creator=lambda: borrowed, poolclass=StaticPool)
    try:
        with engine.connect() as bind:
            if connection.in_transaction:
                connection.commit()
            bind.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                if not is_current():
                    upgrade(bind)
                bind.commit()
            finally:  # a failed step: the whole upgrade rolled back
                if connection.in_transaction:
                    connection.rollback()
    except sqlalchemy.exc.DBAPIError as error:  # SQLite's errors, as the store reports them
        raise workspace_error(getattr(connection, "workspace_path", "?"), error.orig) from None

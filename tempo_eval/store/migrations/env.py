"""Alembic's environment for the workspace database. tempo-eval runs it on the connection that
`tempo_eval.store.migrations.upgrade` hands it (config.attributes["connection"]), inside that
caller's transaction. Run by the `alembic` command instead (script_location pointing here), it
opens the workspace database tempo-eval would: `TEMPO_EVAL_DB`, else the workspace's SQLite file."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is not None:
    context.configure(connection=connection, transaction_per_migration=False)
    with context.begin_transaction():
        context.run_migrations()
else:
    import sqlalchemy

    from tempo_eval.store.db import database_location
    from tempo_eval.store.pg import engine, is_postgres_url

    location = context.config.get_main_option("sqlalchemy.url") or database_location()
    bind = engine(location) if is_postgres_url(location) else sqlalchemy.create_engine(f"sqlite:///{location}")
    with bind.connect() as own:
        context.configure(connection=own)
        with context.begin_transaction():
            context.run_migrations()

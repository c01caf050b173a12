"""Alembic's environment for the workspace database: it runs on the connection that
`tempo_eval.store.migrations.upgrade` hands it (config.attributes["connection"]), inside that
caller's transaction; there is no alembic.ini and no URL here."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transaction_per_migration=False)
with context.begin_transaction():
    context.run_migrations()

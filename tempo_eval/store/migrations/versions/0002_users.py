"""Users and their roles: who may do what in a shared workspace (`store/users.py`,
`common/access.py`). The first admin is named in the settings (TEMPO_EVAL_ADMIN), not here.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""CREATE TABLE users (
        email    TEXT PRIMARY KEY,
        role     TEXT NOT NULL CHECK (role IN ('viewer', 'analyst', 'admin')),
        added_by TEXT NOT NULL DEFAULT '',
        added_at TEXT NOT NULL
    )""")

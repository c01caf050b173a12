"""Who did what: the user who made each dataset, run and job (NULL where nobody was recorded:
rows made before this step), and each reviewer's labels kept apart: the reviewer joins the
labels' key, and the labels given before it are kept under reviewer '' (shown as "unknown"; a
key column cannot be NULL).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("datasets", "runs", "jobs"):
        op.execute(f"ALTER TABLE {table} ADD COLUMN created_by TEXT")
    op.execute("""CREATE TABLE claim_labels_by_reviewer (
        claim         TEXT NOT NULL,
        premises_hash TEXT NOT NULL,
        reviewer      TEXT NOT NULL DEFAULT '',
        label         TEXT NOT NULL,
        note          TEXT NOT NULL DEFAULT '',
        premises      TEXT,
        labelled_at   TEXT NOT NULL,
        PRIMARY KEY (claim, premises_hash, reviewer)
    )""")
    op.execute("INSERT INTO claim_labels_by_reviewer (claim, premises_hash, reviewer, label, note, premises, labelled_at)"
               " SELECT claim, premises_hash, '', label, note, premises, labelled_at FROM claim_labels")
    op.execute("DROP TABLE claim_labels")
    op.execute("ALTER TABLE claim_labels_by_reviewer RENAME TO claim_labels")

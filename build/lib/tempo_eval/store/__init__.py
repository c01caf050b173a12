"""The workspace store: datasets, runs, results, claims and cached verdicts in one SQLite file.

`WorkspaceError` is what every unusable workspace raises (damaged, read-only, disk full)."""

from tempo_eval.store.db import WorkspaceError

__all__ = ["WorkspaceError"]

"""A Ray run written into the workspace as it runs: no second pass over its results.

`evaluate_ray` makes its run a normal run of the workspace from the start (`WorkspaceRun.open`):
the dataset is found or begun by its content hash, as a streamed local evaluation begins it, and
the run is created (or found again, on a resume) by the output directory's id, with its lock
taken. The driver writes each finished block's files in the output directory (which mark it
done), then its rows, encoded by the actor, in one transaction (`record`); the canonical rows go
in as they are read (`store_rows`).

Killed between a block's files and its transaction, a driver leaves a block done in the output
that the workspace lacks: the resumed run writes such a block from its files when it reads its
rows (`block_counts`, `write_from_files`), as `import_results` would.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from tempo_eval.common.secrets import secret_values
from tempo_eval.engine.distributed import checks, output
from tempo_eval.store.results import EncodedRows
from tempo_eval.store.runs import RunStore


class WorkspaceRun:
    """The workspace side of one `evaluate_ray` call: its run, its dataset, its blocks."""

    def __init__(self, store: RunStore, run_id: int, dataset_id: int, dataset_complete: bool,
                 manifest: Mapping[str, Any]) -> None:
        self.store, self.run_id, self.dataset_id = store, run_id, dataset_id
        self.dataset_complete = dataset_complete
        self.manifest = manifest
        self.secrets = secret_values()  # this process's; the actors mask their own

    @classmethod
    def open(cls, store: RunStore, manifest: Mapping[str, Any], *, name: str | None,
             default_name: str, user: str | None = None) -> WorkspaceRun:
        """The run of the output `manifest` describes (created by `user`, or found again by its
        output id), with its lock taken; raises RunInUse while another live process writes it."""
        dataset_id, complete = store.begin_dataset(
            name=manifest["dataset_name"], content_hash=manifest["content_hash"], mapping=manifest["mapping"],
            source_format=manifest["source_format"], user=user,
        )
        run_id, _ = store.import_run(dataset_id, manifest["config"], origin=f"ray-output:{manifest['output_id']}",
                                     name=name, default_name=default_name, user=user)
        return cls(store, run_id, dataset_id, complete, manifest)

    def store_rows(self, first: int, frame: pd.DataFrame) -> None:
        """Rows `first`, `first` + 1, ... of the dataset, unless the workspace has them all already."""
        if not self.dataset_complete:
            self.store.add_dataset_rows(self.dataset_id, first, frame)

    def finish_dataset(self, n_rows: int, warnings: list[str]) -> None:
        """Every row stored: the dataset is complete (its row count and the reader's warnings)."""
        if not self.dataset_complete:
            self.store.finish_dataset(self.dataset_id, n_rows, warnings)
            self.dataset_complete = True

    def record(self, encoded: EncodedRows) -> None:
        """One block's rows (encoded by an actor for this run) in one transaction. Texts are
        masked again with this process's secrets when they hold one (an actor masks its own)."""
        if encoded.run_id != self.run_id:
            raise ValueError(f"rows encoded for run {encoded.run_id}, not run {self.run_id}")
        self.store.write_encoded(output.mask_encoded(encoded, self.secrets))

    def block_counts(self, block_size: int) -> dict[int, int]:
        """{block: results stored} of the run, counted by the database (a run of millions of rows
        is not loaded to find the blocks it lacks)."""
        return dict(self.store.connection.execute(
            "SELECT row_idx / ?, COUNT(*) FROM results WHERE run_id = ? GROUP BY row_idx / ?",
            (block_size, self.run_id, block_size),
        ).fetchall())

    def write_from_files(self, out: Path, block: int, rows: range) -> None:
        """The finished block `block` (rows `rows`) of `out`, read from its files and checked as
        `import_results` checks them, in one transaction."""
        found = checks.read_block(output.block_path(out, "results", block), output.block_path(out, "details", block),
                                  rows, self.manifest["metrics"], None)
        self.store.write_encoded(output.encoded_block(self.run_id, found, self.secrets))

    def finish(self, status: str, error: str | None = None) -> None:
        """Record how the call ended ("finished", "cancelled", "failed") and give the run's lock back."""
        try:
            self.store.set_status(self.run_id, status, error)
        finally:
            self.store.release_run(self.run_id)

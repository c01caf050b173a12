"""A Ray run written into the workspace as it runs: no second pass over its results.

`evaluate_ray` makes its run a normal run of the workspace from the start (`open_run`): the
dataset is found or begun by its content hash, as a streamed local evaluation begins it, and the
run is created (or found again, on a resume) by the output directory's id, with its lock taken.
Each block the actors finish is then written twice by the driver: its two files in the output
directory (which mark it done), then its rows in the workspace, in one transaction (`record`).
The actors encode those rows (`tempo_eval.store.results.encode_rows`), so the driver only
inserts them. The canonical rows go in beside the scoring (`store_dataset`), a chunk per block.

Killed between a block's files and its transaction, a driver leaves a block done in the output
that the workspace lacks: the resumed run reads those blocks from their files first
(`catch_up`), as `import_results` would, so the workspace ends with every finished block.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from tempo_eval._secrets import secret_values
from tempo_eval.distributed import checks, output
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
             default_name: str) -> WorkspaceRun:
        """The run of the output `manifest` describes (created, or found again by its output id),
        with its lock taken; raises RunInUse while another live process writes it."""
        dataset_id, complete = store.begin_dataset(
            name=manifest["dataset_name"], content_hash=manifest["content_hash"], mapping=manifest["mapping"],
            source_format=manifest["source_format"],
        )
        run_id, _ = store.import_run(dataset_id, manifest["config"], origin=f"ray-output:{manifest['output_id']}",
                                     name=name, default_name=default_name)
        return cls(store, run_id, dataset_id, complete, manifest)

    def store_dataset(self, frame: pd.DataFrame) -> None:
        """The canonical rows, a chunk per block, unless the workspace has them already."""
        if self.dataset_complete:
            return
        size = int(self.manifest["block_size"])
        for first in range(0, len(frame), size):
            self.store.add_dataset_rows(self.dataset_id, first, frame.iloc[first:first + size])
        self.store.finish_dataset(self.dataset_id, len(frame), list(self.manifest.get("warnings") or []))
        self.dataset_complete = True

    def record(self, encoded: EncodedRows) -> None:
        """One block's rows (encoded by an actor for this run) in one transaction. Texts are
        masked again with this process's secrets when they hold one (an actor masks its own)."""
        if encoded.run_id != self.run_id:
            raise ValueError(f"rows encoded for run {encoded.run_id}, not run {self.run_id}")
        self.store.write_encoded(output.mask_encoded(encoded, self.secrets))

    def catch_up(self, out: Path, done: Iterable[int]) -> int:
        """Write the finished blocks of `out` whose results the run lacks, read from their files
        (checked as `import_results` checks them); the number of blocks written."""
        manifest = self.manifest
        n_rows, block_size, metrics = int(manifest["n_rows"]), int(manifest["block_size"]), manifest["metrics"]
        # results per block, counted by the database: a run of millions of rows is not loaded
        counts = dict(self.store.connection.execute(
            "SELECT row_idx / ?, COUNT(*) FROM results WHERE run_id = ? GROUP BY row_idx / ?",
            (block_size, self.run_id, block_size),
        ).fetchall())
        missing = [b for b in sorted(done)
                   if counts.get(b, 0) < (min(n_rows, (b + 1) * block_size) - b * block_size) * len(metrics)]
        for block in missing:
            rows = checks.read_block(output.block_path(out, "results", block), output.block_path(out, "details", block),
                                     range(block * block_size, min(n_rows, (block + 1) * block_size)), metrics, None)
            self.store.write_encoded(output.encoded_block(self.run_id, rows, self.secrets))
        return len(missing)

    def finish(self, status: str, error: str | None = None) -> None:
        """Record how the call ended ("finished", "cancelled", "failed") and give the run's lock back."""
        try:
            self.store.set_status(self.run_id, status, error)
        finally:
            self.store.release_run(self.run_id)

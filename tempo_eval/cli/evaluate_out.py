"""What `evaluate` writes besides its progress: --out, a part at a time while the rows are
scored (`StreamedOut`), and the summary's scores gathered from the same parts (`ScoresOf`), so the
results are read once, for both, with the memory of a part whatever the size of the run."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class ScoresOf:
    """What a run's summary reads of its results (`RunStore.scores_frame`'s frame: metric, score,
    reason_code of NaN results, reason of each metric's first result), gathered from the results
    frames as they pass (`gather`) on their way to the output file, in flat arrays: the store is
    read once for both, and the memory is that of the scores, not of the results."""

    def __init__(self) -> None:
        self._names: dict[str, int] = {}  # metric -> its code, in order of first appearance
        self._metrics: list[Any] = []
        self._scores: list[Any] = []
        self._codes: dict[int, Any] = {}  # position -> reason_code, of NaN results
        self._reasons: dict[str, Any] = {}  # metric -> the reason of its first result
        self._size = 0

    def gather(self, frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        for part in frames:
            yield self.add(part)

    def add(self, part: pd.DataFrame) -> pd.DataFrame:
        """Gather the next part of the results (in order); returns it."""
        self.add_columns(part["metric"].tolist(), part["score"].to_numpy(dtype=float),
                         part["reason_code"].to_numpy(dtype=object), lambda i: part["reason"].iloc[i])
        return part

    def add_columns(self, metrics: list[str], scores: Any, codes: Any, reason: Any) -> None:
        """Gather the next part from its columns: metric names, scores (None or NaN: not
        measurable), reason codes, and `reason(i)`, the reason of the part's result i."""
        import numpy as np

        for metric in dict.fromkeys(metrics):
            if metric not in self._names:
                self._names[metric] = len(self._names)
                self._reasons[metric] = reason(metrics.index(metric))
        names = self._names
        self._metrics.append(np.fromiter((names[m] for m in metrics), dtype=np.int32, count=len(metrics)))
        scores = np.asarray(scores, dtype=float)  # None: NaN
        self._scores.append(scores)
        nan = np.flatnonzero(np.isnan(scores))
        self._codes.update(zip((nan + self._size).tolist(), [codes[i] for i in nan.tolist()], strict=True))
        self._size += len(metrics)

    def frame(self) -> pd.DataFrame:
        import numpy as np
        import pandas as pd

        codes = np.concatenate(self._metrics) if self._metrics else np.empty(0, dtype=np.int32)
        reason_codes = np.full(self._size, None, dtype=object)
        reason_codes[list(self._codes)] = list(self._codes.values())
        reasons = np.full(self._size, None, dtype=object)
        for metric, code in self._names.items():  # each metric's first result, in order
            reasons[int(np.argmax(codes == code))] = self._reasons[metric]
        return pd.DataFrame({
            "metric": pd.Categorical.from_codes(codes, categories=list(self._names)),
            "score": np.concatenate(self._scores) if self._scores else np.empty(0),
            "reason_code": pd.Series(reason_codes, dtype=object),
            "reason": pd.Series(reasons, dtype=object),
        })


class ResultsOut:
    """evaluate's `on_results` for the command line: each part of the results gathered into
    `scores` and written to `out`; the batches scored by worker processes are taken as written
    (`take_encoded`), in columns, without a frame made of them: 1.3 against 4.1 us a result for
    --out (Parquet) and the summary (measured on the issue-27 bench's results)."""

    def __init__(self, out: StreamedOut, scores: ScoresOf) -> None:
        self.out, self.scores = out, scores

    def __call__(self, part: pd.DataFrame) -> None:
        self.out.write(self.scores.add(part))

    def take_encoded(self, encoded: Any) -> None:
        from tempo_eval.store.results import encoded_columns

        columns = encoded_columns(encoded)
        self.scores.add_columns(columns["metric"], columns["score"], columns["reason_code"],
                                columns["reason"].__getitem__)
        self.out.write_columns(columns)


class StreamedOut:
    """--out written a part at a time during the run (`tempo_eval.io.export.PartsWriter`) into
    a file beside it, named from it with a ".partial" suffix; `finish` puts it in place of --out,
    `discard` removes it (an interrupted or failed run leaves --out as it was)."""

    def __init__(self, out: str) -> None:
        self.out = Path(out)
        self.partial = self.out.with_name(f".{self.out.stem}.partial{self.out.suffix}")
        self._writer: Any = None

    @staticmethod
    def suits(out: str) -> bool:
        """Whether --out can be written beside and put in place: a plain file or a new name. A
        symlink (to /dev/full, to a file elsewhere) or a device is written through at the end,
        as before: replacing it would replace the link, not write where it points."""
        path = Path(out)
        if path.is_symlink():
            return False
        return not path.exists() or path.is_file()

    def write(self, part: pd.DataFrame) -> None:
        self._open().write(part)

    def write_columns(self, columns: dict[str, list[Any]]) -> None:
        """Write the next part given as `encoded_columns`' lists (Parquet: with no frame made)."""
        self._open().write_columns(columns)

    def _open(self) -> Any:
        if self._writer is None:
            from tempo_eval.io.export import PartsWriter

            self._writer = PartsWriter(self.partial).__enter__()
        return self._writer

    def finish(self) -> None:
        """Complete the file and put it at --out (an empty run: an empty file, as before)."""
        from tempo_eval.io.errors import output_error
        from tempo_eval.io.export import write_frames

        if self._writer is None:  # no result at all: the file a run without results writes
            write_frames([], self.out)
            return
        self._writer.close()
        self._writer = None
        try:
            os.replace(self.partial, self.out)
        except OSError as error:
            raise output_error(self.out, error) from None

    def discard(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(OSError):
                self._writer.close(complete=False)
            self._writer = None
        with contextlib.suppress(OSError):
            self.partial.unlink()

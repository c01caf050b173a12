"""The results of the run store: one (row, metric) score with its reason and details, written a
dataset row per transaction with the row's claims (one verified claim of a result, with its
verdict and evidence), read back as frames, summaries or one result.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from tempo_eval.common.packed_details import PackedDetails
from tempo_eval.common.schema import (
    RESULT_COLUMNS,
    MetricResult,
    frame_of_result_rows,
    is_retryable,
)
from tempo_eval.common.secrets import redact
from tempo_eval.common.values import is_na
from tempo_eval.store.packing import _maskable_when_packed, _pack_details, _unpack_details, dumps
from tempo_eval.store.run_records import _HEARTBEAT_SECONDS

CLAIM_COLUMNS = [
    "row", "query_id", "run", "metric", "idx", "claim", "verdict", "evidence",
    "probabilities", "reason", "confidence", "error", "side",
]


def _claim_extra(extra: str | None) -> tuple[str | None, str | None]:
    """(error, side) from a claim row's `extra` JSON: the verifier's error text (ERROR verdicts)
    and the Factual Correctness side."""
    if not extra:
        return None, None
    found = json.loads(extra)
    error, side = found.get("error"), found.get("side")
    return (None if error is None else str(error)), (None if side is None else str(side))


def _claim_record(claim: Any) -> dict[str, Any]:
    """A claim entry of `details["claims"]` as a dict (a ClaimVerdict, a mapping, or any text)."""
    if hasattr(claim, "to_record"):
        return dict(claim.to_record())
    if isinstance(claim, Mapping):
        return dict(claim)
    return {"claim": str(claim)}


#: result rows `scores_frame` reads at a time
_SCORES_PART = 20_000
#: the dataset rows first <= row < end of a run (bound after its run id)
_ROW_RANGE = " AND row_idx >= ? AND row_idx < ?"


#: the columns of a row of the results table, in the order `encode_rows` gives them
RESULT_ROW_FIELDS = ("run_id", "row_idx", "query_id", "system", "metric", "score", "reason", "reason_code",
                     "success", "details")


@dataclass
class EncodedRows:
    """Rows for the results and claims tables (`encode_rows`), ready for `write_encoded`."""

    run_id: int
    results: list[tuple[Any, ...]] = field(default_factory=list)
    claims: list[tuple[Any, ...]] = field(default_factory=list)


def encode_rows(
    run_id: int, rows: Iterable[tuple[int, str, Iterable[MetricResult], str | None]], secrets: Iterable[str],
) -> EncodedRows:
    """The database rows of (row, query_id, results, system) items, as `record_rows` stores them:
    `details["claims"]` goes to the claims table, the rest of `details` is JSON packed with the
    result, NaN scores are NULL, and `secrets` are masked in every text. Needs no connection, so
    the process that scored the rows can encode them (a Ray actor) and another write them."""
    secrets = list(secrets)
    maskable = _maskable_when_packed(secrets)
    encoded = EncodedRows(run_id)
    result_rows, claim_rows = encoded.results, encoded.claims
    for row, query_id, results, system in rows:
        for result in results:
            details = result.details
            claims = []
            if type(details) is PackedDetails:  # no claims: stored packed, not expanded
                pass
            elif not details:
                details = {}
            elif type(details) is not dict or "claims" in details:  # most details: no copy needed
                details = dict(details)
                claims = details.pop("claims", None) or []
            score = None if result.score is None or math.isnan(result.score) else float(result.score)
            result_rows.append((
                run_id, row, str(query_id), system, result.metric, score,
                redact(result.reason or "", secrets), result.reason_code,
                None if result.success is None else int(bool(result.success)),
                _pack_details(details, secrets, maskable=maskable),
            ))
            for idx, claim in enumerate(claims):
                record = _claim_record(claim)
                probabilities = record.pop("probabilities", None)
                verdict = record.pop("verdict", None)
                confidence = record.pop("confidence", None)
                extra = {k: v for k, v in record.items() if k not in ("claim", "evidence", "reason")}
                evidence = record.get("evidence")
                claim_rows.append((
                    run_id, row, result.metric, idx, redact(str(record.get("claim", "")), secrets),
                    None if verdict is None else str(getattr(verdict, "value", verdict)),
                    redact(evidence, secrets) if isinstance(evidence, str) else evidence,
                    None if probabilities is None else dumps(probabilities),
                    redact(record.get("reason"), secrets),
                    redact(dumps(extra), secrets) if extra else None,
                    None if is_na(confidence) else float(confidence),
                ))
    return encoded


class ResultRecords:
    """Per-row results and their claims in the workspace database: a part of
    `tempo_eval.store.runs.RunStore`, which supplies the connection `_conn`, the lock `_lock`
    and the other parts' methods."""

    def record_row(self, run_id: int, row: int, query_id: str, results: Iterable[MetricResult], *,
                   system: str | None = None) -> None:
        """Write every metric's result for one dataset row in one transaction, as `encode_rows`
        says (`details["claims"]`, claim records or ClaimVerdicts, to the claims table)."""
        self.record_rows(run_id, [(row, query_id, results, system)])

    def record_rows(self, run_id: int,
                    rows: Iterable[tuple[int, str, Iterable[MetricResult], str | None]]) -> None:
        """`record_row` for many rows, (row, query_id, results, system) each, in one transaction
        (a batch of rows scored together is committed together)."""
        self.write_encoded(encode_rows(run_id, rows, self._secrets))

    def write_encoded(self, encoded: EncodedRows) -> None:
        """Write rows made by `encode_rows` (here or in another process) in one transaction: the
        results replace any stored for the same (row, metric), and so do their claims."""
        if not encoded.results:
            return
        run_id = encoded.run_id
        with self._lock, self._conn:
            # claims of an earlier recording of these results (a re-run of the row) go first; a
            # first recording (no claim of the run in these rows' range) has none to delete
            rows = [r[1] for r in encoded.results]
            span = (run_id, min(rows), max(rows))
            if self._conn.execute("SELECT EXISTS (SELECT 1 FROM claims WHERE run_id = ? AND row_idx BETWEEN ? AND ?)",
                                  span).fetchone()[0]:
                self._conn.executemany("DELETE FROM claims WHERE run_id = ? AND row_idx = ? AND metric = ?",
                                       [(run_id, r[1], r[4]) for r in encoded.results])
            # plain INSERT on a first recording (no result of the run in these rows' range, the
            # common case), each (row, metric) given once: OR REPLACE looks for the claims of each
            # row it might replace (a fifth of writing a result, measured: 16.2 against 18.7-21.9 us
            # a row of the issue-27 bench); a (row, metric) given twice keeps the last, as before
            replacing = len(set(map(_ROW_METRIC_OF_ENCODED, encoded.results))) < len(encoded.results) or \
                self._conn.execute("SELECT EXISTS (SELECT 1 FROM results WHERE run_id = ? AND row_idx BETWEEN ? AND ?)",
                                   span).fetchone()[0]
            self._conn.executemany(
                f"INSERT {'OR REPLACE ' if replacing else ''}INTO results ({', '.join(RESULT_ROW_FIELDS)})"
                f" VALUES ({', '.join('?' * len(RESULT_ROW_FIELDS))})",
                encoded.results,
            )
            if encoded.claims:
                self._conn.executemany(
                    "INSERT INTO claims (run_id, row_idx, metric, idx, claim, verdict, evidence,"
                    " probabilities, reason, extra, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    encoded.claims,
                )
            beat = self._held.get(run_id)
            now = time.time()
            if beat is not None and now - beat > _HEARTBEAT_SECONDS:  # in this row's transaction
                self._held[run_id] = now
                self._conn.execute(
                    "UPDATE run_locks SET heartbeat = ? WHERE run_id = ? AND token = ?",
                    (now, run_id, self._lock_token),
                )

    def completed_between(self, run_id: int, first: int, end: int, *,
                          retry_failed: bool = False) -> set[tuple[int, str]]:
        """`completed` for the rows first <= row < end (a batch of a streamed dataset)."""
        return self._completed(run_id, retry_failed, _ROW_RANGE, (first, end))

    def completed(self, run_id: int, *, retry_failed: bool = False) -> set[tuple[int, str]]:
        """The (row, metric) pairs that have a stored result in this run.

        With `retry_failed`, results that failed (NaN with a retryable reason code, see
        `is_retryable`) do not count as completed, so a resumed run computes them again.
        """
        return self._completed(run_id, retry_failed)

    def _completed(self, run_id: int, retry_failed: bool, rows_sql: str = "",
                   args: tuple[int, ...] = ()) -> set[tuple[int, str]]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT row_idx, metric, score IS NULL, reason_code FROM results"
                f" WHERE run_id = ?{rows_sql}", (run_id, *args),
            ).fetchall()
        return {(int(r), m) for r, m, is_nan, code in rows
                if not (retry_failed and is_nan and is_retryable(code))}

    def results_frame(self, run_id: int) -> pd.DataFrame:
        """One row per (row, metric): row, query_id, run, metric, score (NaN when not measurable),
        reason_code, reason; sorted by row then metric. `run` is the dataset's run column."""
        return self._results(run_id)

    def results_rows(self, run_id: int, first: int, last: int) -> pd.DataFrame:
        """`results_frame` of the dataset rows `first` to `last` (both included) only: one range
        of the primary key, so a page of a 400,000-result run costs what the page holds."""
        return self._results(run_id, " AND row_idx BETWEEN ? AND ?", (int(first), int(last)))

    def _results(self, run_id: int, rows_sql: str = "", args: tuple[int, ...] = ()) -> pd.DataFrame:
        with self._lock:
            rows = self._conn.execute(
                "SELECT row_idx, query_id, system, metric, score, reason_code, reason FROM results"
                f" WHERE run_id = ?{rows_sql} ORDER BY row_idx, metric", (run_id, *args),
            ).fetchall()
        return frame_of_result_rows(rows)

    def metric_counts(self, run_id: int) -> pd.DataFrame:
        """Per metric of a run: n (results stored), n_nan (without a score) and last_row (the
        highest dataset row with a result); one aggregate query, nothing loaded."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT metric, COUNT(*), COUNT(*) - COUNT(score), MAX(row_idx) FROM results WHERE run_id = ?"
                " GROUP BY metric ORDER BY metric", (run_id,)).fetchall()
        return pd.DataFrame(rows, columns=["metric", "n", "n_nan", "last_row"])

    def system_summary(self, run_id: int) -> pd.DataFrame:
        """One line per (system, metric) of a run: system (None when the dataset has no run
        column), metric, n (results), n_scored (with a score; NaN results are stored as NULL),
        mean (of the scores; NaN when none), and answer currency's label counts current,
        outdated and other (0 for other metrics; the label leads the stored reason: `current:
        ...`). One aggregate query: nothing is loaded, whatever the run's size."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT system, metric, COUNT(*), COUNT(score), AVG(score) FROM results"
                " WHERE run_id = ? GROUP BY system, metric ORDER BY system, metric", (int(run_id),),
            ).fetchall()
            # the labels apart: carrying every result's reason through the grouping costs more
            # than a second pass over the answer-currency results alone, and that pass reads
            # every result of the run (the key leads with the row): only when there are some
            labels = []
            if any(metric == "answer_currency" for _, metric, *_ in rows):
                labels = self._conn.execute(
                    "SELECT system, COUNT(CASE WHEN substr(reason, 1, 8) = 'current:' THEN 1 END),"
                    " COUNT(CASE WHEN substr(reason, 1, 9) = 'outdated:' THEN 1 END),"
                    " COUNT(CASE WHEN substr(reason, 1, 6) = 'other:' THEN 1 END) FROM results"
                    " WHERE run_id = ? AND metric = 'answer_currency' GROUP BY system",
                    (int(run_id),)).fetchall()
        frame = pd.DataFrame(rows, columns=["system", "metric", "n", "n_scored", "mean"])
        frame["mean"] = pd.to_numeric(frame["mean"], errors="coerce").astype(float)
        counts = {system: rest for system, *rest in labels}
        keys = list(zip(frame["system"], frame["metric"], strict=True))
        for index, name in enumerate(("current", "outdated", "other")):
            frame[name] = [int(counts[system][index])
                           if metric == "answer_currency" and system in counts else 0
                           for system, metric in keys]
        return frame

    def last_row(self, run_id: int) -> int | None:
        """The highest dataset row with a result in the run (None: no result): one seek of the
        primary key, whatever the run's size (a COUNT reads every result of the run)."""
        with self._lock:
            (last,) = self._conn.execute(
                "SELECT MAX(row_idx) FROM results WHERE run_id = ?", (int(run_id),)).fetchone()
        return None if last is None else int(last)

    def metric_scores(self, run_id: int, metric: str) -> tuple[np.ndarray, np.ndarray, dict[int, str | None]]:
        """One metric of a run: the rows with a result, their scores (NaN when not measured; in
        the order of the results index, not by row) and {row: reason code} of the rows not
        measured. Read from the covering index `results_scores`, never a result's details, as
        two lists of numbers in one text each (1,000,000 results: 0.7 s, against 1.3 s as
        tuples); `%.17g` keeps every score exact."""
        with self._lock:
            rows, scores = self._conn.execute(
                "SELECT group_concat(row_idx), group_concat(CASE WHEN score IS NULL THEN 'nan'"
                " ELSE printf('%.17g', score) END) FROM results WHERE run_id = ? AND metric = ?",
                (run_id, metric)).fetchone()
            codes = dict(self._conn.execute(
                "SELECT row_idx, reason_code FROM results WHERE run_id = ? AND metric = ? AND score IS NULL",
                (run_id, metric)).fetchall())
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty(0), {}
        return np.fromstring(rows, dtype=np.int64, sep=","), np.fromstring(scores, sep=","), codes

    def results_frames(self, run_id: int, rows_per_frame: int = 50_000) -> Iterator[pd.DataFrame]:
        """`results_frame` in parts of `rows_per_frame` dataset rows, in order: a run of any size
        is written out with the memory of one part."""
        last = self.last_row(run_id)
        for first in range(0, (last if last is not None else -1) + 1, rows_per_frame):
            frame = self._results(run_id, _ROW_RANGE, (first, first + rows_per_frame))
            if len(frame):
                yield frame

    def scores_frame(self, run_id: int) -> pd.DataFrame:
        """What a run's summary reads, small at any size: metric, score, reason_code (of NaN
        results; None for the others) and reason (of each metric's first result only), one row
        per result in `results_frame`'s order.

        Read a part at a time into flat arrays (the metric as a category, the codes of NaN
        results only): the result tuples of a whole run (1.5 million for a 1 GB file), or a
        string per result, held at once cost more memory than the evaluation itself."""
        names: dict[str, int] = {}  # metric -> its code, in order of first appearance
        metric_parts: list[np.ndarray] = []
        score_parts: list[np.ndarray] = []
        nan_codes: dict[int, str | None] = {}  # position -> reason_code, of NaN results
        with self._lock:
            cursor = self._conn.execute(
                "SELECT metric, score, reason_code FROM results WHERE run_id = ? ORDER BY row_idx, metric",
                (run_id,),
            )
            position = 0
            while part := cursor.fetchmany(_SCORES_PART):
                metric_parts.append(np.fromiter((names.setdefault(m, len(names)) for m, _, _ in part),
                                                dtype=np.int32, count=len(part)))
                score_parts.append(np.fromiter((math.nan if s is None else s for _, s, _ in part),
                                               dtype=float, count=len(part)))
                nan_codes.update((position + i, code) for i, (_, s, code) in enumerate(part) if s is None)
                position += len(part)
            firsts = dict(self._conn.execute(
                "SELECT metric, reason FROM results AS r WHERE run_id = ? AND row_idx ="
                " (SELECT MIN(row_idx) FROM results WHERE run_id = r.run_id AND metric = r.metric)",
                (run_id,),
            ).fetchall())
        metric_codes = np.concatenate(metric_parts) if metric_parts else np.empty(0, dtype=np.int32)
        codes = np.full(position, None, dtype=object)
        codes[list(nan_codes)] = list(nan_codes.values())
        reasons = np.full(position, None, dtype=object)
        for metric, code in names.items():  # each metric's first result, in order
            reasons[int(np.argmax(metric_codes == code))] = firsts.get(metric)
        return pd.DataFrame({
            "metric": pd.Categorical.from_codes(metric_codes, categories=list(names)),
            "score": np.concatenate(score_parts) if score_parts else np.empty(0),
            "reason_code": pd.Series(codes, dtype=object),
            "reason": pd.Series(reasons, dtype=object),
        })

    def claims_frame(self, run_id: int) -> pd.DataFrame:
        """One row per verified claim: row, query_id, run, metric, idx, claim, verdict, evidence,
        probabilities (dict or None), reason, confidence (NaN when the verifier gave none), error
        (the verifier's error text for ERROR verdicts, else None), side (Factual Correctness:
        "response" or "reference", else None)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT c.row_idx, r.query_id, r.system, c.metric, c.idx, c.claim, c.verdict,"
                " c.evidence, c.probabilities, c.reason, c.confidence, c.extra FROM claims c"
                " JOIN results r ON r.run_id = c.run_id AND r.row_idx = c.row_idx"
                " AND r.metric = c.metric"
                " WHERE c.run_id = ? ORDER BY c.row_idx, c.metric, c.idx",
                (run_id,),
            ).fetchall()
        rows = [
            (*r[:8], None if r[8] is None else json.loads(r[8]), r[9],
             math.nan if r[10] is None else float(r[10]), *_claim_extra(r[11]))
            for r in rows
        ]
        frame = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
        frame["probabilities"] = pd.Series([r[8] for r in rows], dtype=object)
        frame["confidence"] = pd.to_numeric(frame["confidence"], errors="coerce").astype(float)
        return frame

    def get_result(self, run_id: int, row: int, metric: str) -> MetricResult:
        """The stored result of one (row, metric), details with their "claims" put back."""
        with self._lock:
            found = self._conn.execute(
                "SELECT score, reason, reason_code, success, details FROM results"
                " WHERE run_id = ? AND row_idx = ? AND metric = ?",
                (run_id, row, metric),
            ).fetchone()
            claims = self._conn.execute(
                "SELECT claim, verdict, evidence, probabilities, reason, extra, confidence FROM claims"
                " WHERE run_id = ? AND row_idx = ? AND metric = ? ORDER BY idx",
                (run_id, row, metric),
            ).fetchall()
        if found is None:
            raise KeyError(f"run {run_id} has no result for row {row}, metric {metric!r}")
        score, reason, reason_code, success, details_json = found
        details = _unpack_details(details_json)
        if claims:
            details["claims"] = [
                {"claim": c[0], "verdict": c[1], "evidence": c[2],
                 "probabilities": None if c[3] is None else json.loads(c[3]), "reason": c[4],
                 **(json.loads(c[5]) if c[5] else {}), "confidence": c[6]}
                for c in claims
            ]
        return MetricResult(metric, float("nan") if score is None else float(score), reason,
                            reason_code, details, None if success is None else bool(success))


def encoded_frame(encoded: EncodedRows) -> pd.DataFrame:
    """`ResultRecords.results_rows`'s frame of the results `encoded` (as they are stored), without
    reading them back: sorted by row, then metric, as the store sorts them."""
    return frame_of_result_rows(_result_rows(encoded))


def encoded_columns(encoded: EncodedRows) -> dict[str, list[Any]]:
    """`encoded_frame`'s columns (`RESULT_COLUMNS`) as lists, without the frame: a score that is
    NaN in the frame is None here."""
    rows = _result_rows(encoded)
    columns = zip(*rows, strict=True) if rows else [()] * len(RESULT_COLUMNS)
    return {name: list(values) for name, values in zip(RESULT_COLUMNS, columns, strict=True)}


def _result_rows(encoded: EncodedRows) -> list[tuple[Any, ...]]:
    """The `RESULT_COLUMNS` of each result written, by row and metric."""
    return sorted(map(_RESULT_FIELDS, encoded.results), key=_ROW_METRIC)


_RESULT_FIELDS = itemgetter(1, 2, 3, 4, 5, 7, 6)  # an encoded result's row, query_id, run, metric, score, reason_code, reason
_ROW_METRIC = itemgetter(0, 3)
_ROW_METRIC_OF_ENCODED = itemgetter(1, 4)  # an encoded result's row, metric



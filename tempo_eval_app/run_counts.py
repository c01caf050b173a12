"""The result counts of runs (n_results, n_failed) as the pages show them, counted once per change.

Counting a run's results reads every one of its entries in the scores index
(`RunStore.result_counts`: 0.25-0.35 s per 600,000 results on this loaded 2-core machine, and a
long evaluation writes millions). The pages used to count every run they listed on each cache miss,
and their caches were keyed on the whole workspace file (any commit): while a job wrote, every
rerun of every page counted again, runs of other datasets included (issue 29).

So this process keeps each run's last counts, shared by all sessions, with what they were read at:
- a run that is not running: its results change only while it runs, and its row changes when it
  runs again or ends (status, created_at, finished_at: `RunStore.run_stamp`). Counted once per
  stamp: a job that ends, a run resumed or deleted by another process, shows at the next rerun.
- a running run: counted again at most once every `interval`: `REFRESH_S`, or, for a run whose
  count takes long, `1 / COST_SHARE` times its last count's duration (counting then takes at most
  5% of the server's time, however large the run). While one session counts, the others show
  the counts before.
- a run first seen: counted at once.
Limit: a run resumed and ended again within the second of its previous end (finished_at is stored
to the second) by another process, unseen in between, keeps its earlier counts until its row changes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

#: a running run's counts are read again at most this often (seconds)...
REFRESH_S = 1.0
#: ...and at most this share of the time (a count that took 0.3 s waits 6 s for the next)
COST_SHARE = 0.05


@dataclass(frozen=True)
class _Counted:
    stamp: tuple[Any, ...]
    counts: tuple[int, int]
    at: float  # time.monotonic() when counted
    cost: float  # seconds the count took

    def interval(self) -> float:
        return max(REFRESH_S, self.cost / COST_SHARE)

    def serves(self, stamp: tuple[Any, ...], now: float) -> bool:
        """Whether these counts answer for a run whose row now reads `stamp`."""
        return self.stamp == stamp and (stamp[0] != "running" or now - self.at < self.interval())


_memo: dict[tuple[str, int], _Counted] = {}
_locks: dict[tuple[str, int], threading.Lock] = {}
_guard = threading.Lock()


def counts(db: str, store: Any, run_id: int, stamp: tuple[Any, ...] | None) -> tuple[int, int]:
    """(n_results, n_failed) of the run `run_id` of the workspace database `db`, read with `store`
    (a RunStore) by the rules above; `stamp` is the run's `RunStore.run_stamp` as just read
    (None: the run is gone: (0, 0))."""
    if stamp is None:
        return 0, 0
    key = (db, int(run_id))
    found = _memo.get(key)
    if found is not None and found.serves(stamp, time.monotonic()):
        return found.counts
    with _guard:
        lock = _locks.setdefault(key, threading.Lock())
    if found is not None and found.stamp == stamp:  # running, due: one session counts, the others go on
        if not lock.acquire(blocking=False):
            return found.counts
    else:  # first seen, or its row changed: the exact counts, whoever reads them
        lock.acquire()
    try:
        found = _memo.get(key)  # another session may have counted meanwhile
        if found is not None and found.serves(stamp, time.monotonic()):
            return found.counts
        started = time.perf_counter()
        value = store.result_counts(int(run_id))
        _memo[key] = _Counted(tuple(stamp), value, time.monotonic(), time.perf_counter() - started)
        return value
    finally:
        lock.release()


def forget() -> None:
    """Drop every kept count (after a delete in this process: read again at the next rerun)."""
    with _guard:
        _memo.clear()

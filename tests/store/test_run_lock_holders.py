"""A run lock's holder is a process, told apart by pid and start time (issue 28): a lock whose holder had
this very pid but another start time is taken over; a live store's lock is respected."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pandas as pd

from tempo_eval.common.process import own_start_time, process_start_time
from tempo_eval.io.dataset import Dataset
from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore


def _dataset() -> Dataset:
    frame = pd.DataFrame({"query_id": ["q1"], "answer": ["In 2001."]})
    return Dataset(frame=frame, name="d.csv", mapping={}, content_hash="h-lock", source_format="csv", warnings=[])


def test_a_lock_whose_holder_had_this_very_pid_but_another_start_time_is_taken_over(tmp_path: Path) -> None:
    # a restarted container's app often gets the pid of the process that was killed
    store = RunStore(tmp_path / DB_FILENAME)
    run_id, _ = store.create_or_resume_run(store.save_dataset(_dataset()), {"metrics": ["x"]})
    with store.connection:
        store.connection.execute(
            "INSERT OR REPLACE INTO run_locks (run_id, token, pid, host, heartbeat, started)"
            " VALUES (?, 'killed', ?, ?, ?, ?)",
            (run_id, os.getpid(), socket.gethostname(), time.time(), own_start_time() - 1000),
        )
    assert store.acquire_run(run_id) is None  # the holder is dead: taken over


def test_a_lock_held_by_a_live_store_of_this_process_is_still_respected(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    holder = RunStore(path)
    run_id, _ = holder.create_or_resume_run(holder.save_dataset(_dataset()), {"metrics": ["x"]})
    assert holder.acquire_run(run_id) is None
    other = RunStore(path)
    assert other.acquire_run(run_id) == {"pid": os.getpid(), "host": socket.gethostname(),
                                         "heartbeat": other.connection.execute(
                                             "SELECT heartbeat FROM run_locks").fetchone()[0]}


def test_process_start_time_tells_processes_apart() -> None:
    import subprocess
    import sys

    assert own_start_time() == process_start_time(os.getpid()) is not None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert process_start_time(child.pid) is not None
    finally:
        child.kill()
        child.wait()
    assert process_start_time(child.pid) is None


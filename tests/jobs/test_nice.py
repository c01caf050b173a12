"""The dashboard's workers' CPU priority: TEMPO_EVAL_JOB_NICE / `job run --nice` (default 10)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tempo_eval.cli.job import NICE_ENV, job_nice
from tests.support.paths import ROOT


@pytest.mark.parametrize(("value", "expected"), [("", 10), ("0", 0), ("5", 5), (" 7 ", 7), ("40", 19), ("-3", 0)])
def test_the_setting_is_a_nice_value_from_0_to_19(monkeypatch: pytest.MonkeyPatch, value: str, expected: int) -> None:
    monkeypatch.setenv(NICE_ENV, value)
    assert job_nice() == expected


def test_a_setting_that_is_not_a_number_is_refused_with_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NICE_ENV, "low")
    with pytest.raises(SystemExit, match="TEMPO_EVAL_JOB_NICE must be a whole number from 0 to 19, got 'low'"):
        job_nice()


def _priority_after(nice: int) -> tuple[int, str | None]:
    """(process nice, autogroup line) of a process in a session of its own after lower_priority."""
    code = ("import os\nfrom tempo_eval.cli.job import lower_priority\n"
            f"lower_priority({nice})\nprint(os.nice(0))\n"
            "try:\n    print(open('/proc/self/autogroup').read().strip())\nexcept OSError:\n    print('-')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         start_new_session=True).stdout.split("\n")
    return int(out[0]), None if out[1] == "-" else out[1]


def test_the_worker_lowers_its_own_and_its_sessions_priority() -> None:
    base = os.nice(0)
    nice, group = _priority_after(3)
    assert nice == min(19, base + 3)
    if group is not None:  # Linux with scheduler autogroups: the session's group ranks the worker
        assert group.endswith("nice 3"), group
    assert _priority_after(0)[0] == base  # the default changes nothing


def test_job_run_takes_the_setting_and_ends_on_an_empty_queue(tmp_path: Path) -> None:
    env = {**os.environ, NICE_ENV: "2", "TEMPO_EVAL_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "tempo_eval", "job", "run", "--workspace", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, start_new_session=True)
    assert done.returncode == 0, done.stderr
    bad = subprocess.run([sys.executable, "-m", "tempo_eval", "job", "run", "--workspace", str(tmp_path)],
                         cwd=ROOT, env={**env, NICE_ENV: "high"}, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "TEMPO_EVAL_JOB_NICE must be a whole number" in bad.stderr
    assert "Traceback" not in bad.stderr

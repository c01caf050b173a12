"""The Conversation page evaluates through a worker job, as Evaluate does: the verifier's model
(torch, sentence-transformers' MiniLM) loads in the worker process, never in the app's server
process, and the page shows the job's progress, then its result.

The page runs under Streamlit's AppTest in a fresh interpreter (the app's server process here),
with the real detached worker (`python -m tempo_eval job run`); that interpreter then reports
which heavy packages it imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

SCRIPT = r"""
import json, sys, time
from streamlit.testing.v1 import AppTest
from tempo_eval.store.jobs import JobQueue

at = AppTest.from_file("app.py", default_timeout=120).run()
at.switch_page("views/conversation.py").run()
at.button(key="conv_sample_museum").click().run()
at.button(key="conv_run").click().run()
job_id = at.session_state["conv_job_id"]
progress = bool(at.get("progress")) or any("queue" in i.value for i in at.info)
queue = JobQueue()
deadline = time.monotonic() + 300
while queue.get(job_id)["active"]:
    assert time.monotonic() < deadline, "the job did not end"
    time.sleep(0.2)
at.run()
job = queue.get(job_id)
windows = next((t.value for t in at.dataframe if "interactions" in t.value.columns), None)
print(json.dumps({
    "heavy": sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules),
    "status": job["status"], "error": job["error"], "progress": progress,
    "errors": [e.value for e in at.error], "exceptions": [str(e.value) for e in at.exception],
    "windows": None if windows is None else len(windows), "chart": bool(at.get("plotly_chart")),
    "metric": [m.value for m in at.metric],
}))
"""


@pytest.mark.slow
def test_a_conversation_is_evaluated_by_a_worker_and_the_app_loads_no_model(tmp_path: Path) -> None:
    env = {**os.environ, "TEMPO_EVAL_HOME": str(tmp_path / "workspace"), "TEMPO_EVAL_PAGE_WAIT_S": "0"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["heavy"] == [], found  # the app's process never imported a model
    assert found["status"] == "finished", found
    assert found["progress"], found  # the page showed the job waiting or running
    assert not found["errors"] and not found["exceptions"], found
    assert found["windows"] == 4 and found["chart"], found  # the result: the museum sample's 4 windows
    assert found["metric"], found

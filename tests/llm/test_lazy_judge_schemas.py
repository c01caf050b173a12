"""Scoring without a judge never imports pydantic (about 8 MB in the main process and in each
scoring worker): the judge's reply models live in tempo_eval.llm.reply_schemas and the verifier's
prompts in tempo_eval.verify.llm_prompts, imported by the judge paths only."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.paths import ROOT


def test_an_offline_evaluation_does_not_import_pydantic(tmp_path):
    data = tmp_path / "rows.csv"
    data.write_text(
        "query_id,query,answer,contexts\n"
        'q1,What happened in the 1990s?,It reopened in 1991.,"[""The bridge reopened in 1991.""]"\n',
        encoding="utf-8",
    )
    code = (
        "import sys\n"
        "from tempo_eval.cli import main\n"
        f"main(['evaluate', {str(data)!r}, '--metric', 'temporal_faithfulness', '--metric', 'temporal_ndcg',"
        " '--metric', 'factual_correctness', '--processes', '1', '--no-progress',"
        f" '--out', {str(tmp_path / 'out.csv')!r}])\n"
        "print(sorted(m for m in ('pydantic', 'openai') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "TEMPO_EVAL_HOME": str(tmp_path / "ws")})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_the_judge_models_still_validate_as_before():
    from tempo_eval.core.decompose import DECOMPOSE_PROMPT
    from tempo_eval.llm.reply_schemas import ClaimList, JudgedClaims, RelevanceGrade
    from tempo_eval.metrics.factual_correctness import PROMPTS
    from tempo_eval.verify.llm import VERIFY_PROMPT

    assert PROMPTS == {"decompose": DECOMPOSE_PROMPT, "verify": VERIFY_PROMPT}
    assert ClaimList.model_validate({}).claims == []
    assert JudgedClaims.model_validate({"claims": [{"claim": "c", "verdict": "SUPPORTED"}]}).claims[0].evidence == ""
    assert RelevanceGrade.model_validate({"relevance_score": 3}).relevance_score == 3

"""Our TurnFaithfulness against DeepEval's TurnFaithfulnessMetric, scores recorded from deepeval itself.

`tests/data/deepeval_turn_faithfulness.json` was written by
`tests/support/record_deepeval_turn_faithfulness.py`, run by hand in a separate virtualenv with
deepeval installed (see its docstring): DeepEval's real metric, driven offline by a scripted judge
whose verdicts come from `oracle_verdict`. Here our metric runs on the same conversations with a
verifier scripted by the same oracle, and must reproduce DeepEval's window scores, final score
and success. The one documented difference: in strict mode deepeval 4.3.1 averages the clamped
window scores, while we (as DeepEval's documentation and our spec say) return 1 or 0; our
`mean_window_score` is DeepEval's number.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tempo_eval.common.run_sync import run_sync
from tempo_eval.metrics.turn_faithfulness import TurnFaithfulness
from tempo_eval.verify.base import ClaimVerdict, Verdict
from tests.support.record_deepeval_turn_faithfulness import FIXTURE, oracle_verdict

RECORDED = json.loads(Path(FIXTURE).read_text())
CASES = RECORDED["cases"]
_TO_VERDICT = {"yes": Verdict.SUPPORTED, "no": Verdict.CONTRADICTED, "idk": Verdict.NEUTRAL}


class OracleVerifier:
    """Gives each claim the verdict the scripted DeepEval judge gave: `oracle_verdict(claim, truths)`."""

    name = "oracle"
    model_id = "scripted"

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        return run_sync(self.averify(claims, premises))

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        return [ClaimVerdict(c, _TO_VERDICT[oracle_verdict(c, list(premises))]) for c in claims]


def test_the_fixture_covers_at_least_ten_conversations_recorded_by_deepeval() -> None:
    assert len(CASES) >= 10
    assert RECORDED["deepeval_version"]
    assert {"window_size", "penalize_ambiguous_claims", "strict_mode", "truths_extraction_limit"} <= {
        key for case in CASES for key in case["settings"]
    }


@pytest.mark.parametrize("async_mode", [True, False])
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_scores_match_deepeval(case: dict[str, Any], async_mode: bool) -> None:
    metric = TurnFaithfulness(verifier=OracleVerifier(), async_mode=async_mode, **case["settings"])
    result = metric.measure(turns=case["turns"])
    recorded = case["deepeval"]

    assert [w["score"] for w in result.details["windows"]] == pytest.approx(recorded["window_scores"], abs=1e-12)
    assert result.details["mean_window_score"] == pytest.approx(recorded["score"], abs=1e-12)
    if case["settings"].get("strict_mode"):
        assert result.score == (1.0 if recorded["score"] == 1.0 else 0.0)
    else:
        assert result.score == pytest.approx(recorded["score"], abs=1e-12)
    assert result.success is recorded["success"]
    assert metric.threshold == recorded["threshold"]

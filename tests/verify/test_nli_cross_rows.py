"""The NLI verifier at size (issue 27.4): the pairs of many rows go through the model together,
and each row's verdicts equal those made for it alone."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tempo_eval.cli.common import ProgressBar
from tempo_eval.engine.runner import evaluate
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.store.runs import RunStore
from tempo_eval.verify.nli import NLIVerifier
from tests.support.cli import run_cli
from tests.support.tiny_nli import tiny_nli_dir  # noqa: F401

ROWS = [
    (["The tower was completed in 1889."], ["The Eiffel tower was completed in 1889. It is 330 m tall."]),
    (["The war ended in 1945.", "The treaty was signed in 1919."],
     ["The war began in 1939 and ended in 1945.", "A peace treaty was signed in 1919 in Paris."]),
    (["Paris is the capital of France."], []),
    ([], ["Nothing to check."]),
    (["The museum opened in 2020 and closed in 2021 after the election was won."],
     ["The museum in Berlin opened in 2020.", "It closed in 2021.", "The election was held in 2020.",
      "The company sold shares for a million people in 2019 and 2022, which is a long sentence."]),
    (["The university was founded in 1500."], ["The university was founded in 1500 by the king."]),
]


def _same(a, b) -> None:
    assert [(v.claim, v.verdict, v.evidence, v.reason) for v in a] == [(v.claim, v.verdict, v.evidence, v.reason) for v in b]
    for x, y in zip(a, b, strict=True):
        if x.probabilities is None or y.probabilities is None:
            assert x.probabilities == y.probabilities
        else:
            assert x.probabilities.keys() == y.probabilities.keys()
            np.testing.assert_allclose([x.probabilities[k] for k in x.probabilities],
                                       [y.probabilities[k] for k in x.probabilities], atol=1e-5)


@pytest.mark.parametrize("batch_size", [1, 3, 64])
def test_verdicts_made_across_rows_equal_those_made_row_by_row(tiny_nli_dir: Path, batch_size: int) -> None:  # noqa: F811
    verifier = NLIVerifier(str(tiny_nli_dir), batch_size=batch_size, candidates="exhaustive")
    alone = [verifier.verify(claims, premises) for claims, premises in ROWS]
    together = verifier.verify_many(ROWS)
    for a, b in zip(alone, together, strict=True):
        _same(a, b)


def test_rows_in_flight_share_model_calls_and_keep_their_verdicts(
    tiny_nli_dir: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    verifier = NLIVerifier(str(tiny_nli_dir))
    alone = [verifier.verify(claims, premises) for claims, premises in ROWS]
    calls: list[int] = []
    real = verifier.verify_many

    def counted(requests):
        calls.append(len(requests))
        return real(requests)

    monkeypatch.setattr(verifier, "verify_many", counted)
    verifier._cross_rows._verify_many = counted

    async def rows_in_flight():
        return await asyncio.gather(*(verifier.averify(c, p) for c, p in ROWS))

    together = asyncio.run(rows_in_flight())
    assert sum(calls) == len(ROWS) and len(calls) < len(ROWS)  # several rows per model call
    for a, b in zip(alone, together, strict=True):
        _same(a, b)


def test_evaluate_with_rows_in_flight_gives_the_verdicts_of_one_row_at_a_time(tiny_nli_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    frame = pd.DataFrame({
        "query_id": [f"q{i}" for i in range(12)],
        "answer": [f"It was built in {1889 + i}. The war ended in 1945." for i in range(12)],
        "contexts": [[f"The tower was completed in {1889 + i % 3}.", "The war ended in 1945."] for i in range(12)],
    })

    def claims(concurrency: int) -> pd.DataFrame:
        metric = TemporalFaithfulness(verifier=NLIVerifier(str(tiny_nli_dir)))
        result = evaluate(frame, [metric], store=RunStore(tmp_path / f"{concurrency}.sqlite"),
                          max_concurrency=concurrency)
        return result.claims[["row", "claim", "verdict", "evidence"]]

    pd.testing.assert_frame_equal(claims(1), claims(8))


def test_the_progress_bar_counts_pairs() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, interval=0)
    bar(1, 4)
    bar.add_pairs(24)
    bar(2, 4)
    assert "24 pairs" in stream.getvalue().splitlines()[-1].split("\r")[-1]


def test_batch_size_needs_the_nli_verifier(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path / "ws"))
    data = tmp_path / "d.jsonl"
    data.write_text('{"query": "q", "answer": "In 2001.", "contexts": ["In 2001."]}\n', encoding="utf-8")
    code, err = run_cli(["evaluate", str(data), "--metric", "temporal_faithfulness", "--batch-size", "32",
                         "--out", str(tmp_path / "r.csv")], capsys)
    assert code == 2 and "--batch-size" in err and "--verifier nli" in err

"""Hostile TREC inputs (issue 19.12, issue 21): relevance and rank are ASCII integers and scores
ASCII decimals, as trec_eval reads them; Python's int/float would take `1_0` or Arabic-Indic
digits. Every reader (the dict loader and the streaming reader) refuses them naming line and field.
"""

from __future__ import annotations

import pytest

from tempo_eval.io.errors import InputError
from tests.support.trec import load_qrels, load_run

BAD_INTEGERS = ("1_0", "١", "١٢", "１", "1.0", "0x1", " ")
BAD_SCORES = ("1_0", "١٢", "٣.5", "１.5", "0x1p3", "nan", "1e", "1,5")


@pytest.mark.parametrize("rel", [v for v in BAD_INTEGERS if v.strip()])
def test_qrels_relevance_must_be_ascii_integer(rel: str) -> None:
    with pytest.raises(InputError) as caught:
        load_qrels(f"q1 0 d1 1\nq1 0 d2 {rel}\n".encode())
    assert caught.value.line == 2 and caught.value.column == "rel"
    assert "ASCII" in str(caught.value)


@pytest.mark.parametrize("rank", [v for v in BAD_INTEGERS if v.strip()])
def test_run_rank_must_be_ascii_integer(rank: str) -> None:
    with pytest.raises(InputError) as caught:
        load_run(f"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 {rank} 1.0 r\n".encode())
    assert caught.value.line == 2 and caught.value.column == "rank"


@pytest.mark.parametrize("score", BAD_SCORES)
def test_run_score_must_be_ascii_decimal(score: str) -> None:
    with pytest.raises(InputError) as caught:
        load_run(f"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 {score} r\n".encode())
    assert caught.value.line == 2 and caught.value.column == "score"


@pytest.mark.parametrize("score,value", [("1e2", 100.0), ("-.5", -0.5), ("3.", 3.0), ("+2", 2.0), ("-inf", float("-inf"))])
def test_ascii_decimals_still_read(score: str, value: float) -> None:
    assert load_run(f"q1 Q0 d1 1 {score} r\n".encode())["r"].scores["q1"]["d1"] == value

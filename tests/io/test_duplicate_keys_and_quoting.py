"""Datasets whose JSON gives a key twice, or whose CSV quoting is evened by a stray quote, are refused
naming the line (issue 19.4); well-formed quoting still loads."""

from __future__ import annotations

import pytest

from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.io.foreign import load_foreign_results


def _deepeval(metrics: list[str]) -> bytes:
    case = ('{"input": "When did the war end?", "actualOutput": "In 1945.", '
            '"retrievalContext": ["The war ended in 1945."], "metricsData": [' + ", ".join(metrics) + "]}")
    return ('{"testCases": [' + case + "]}").encode("utf-8")


@pytest.mark.parametrize("name, data", [
    ("r.jsonl", b'{"user_input": "q", "response": "a", "faithfulness": 0.5, "faithfulness": 0.9}\n'),
    ("r.json", b'[{"user_input": "q", "response": "a", "faithfulness": 0.5, "faithfulness": 0.9}]'),
    ("run.json", _deepeval(['{"name": "Faithfulness", "score": 0.5, "score": 0.9}'])),
])
def test_json_with_a_key_given_twice_is_refused(name: str, data: bytes) -> None:
    with pytest.raises(InputError, match=rf"{name}.*'(faithfulness|score)' appears twice"):
        load_foreign_results(data, name=name)


# ---- point 4: the fast CSV path ----------------------------------------------------------------

@pytest.mark.parametrize("name, sep", [("data.csv", ","), ("data.tsv", "\t")])
def test_an_unclosed_quote_evened_by_a_stray_quote_is_refused_naming_the_line(name: str, sep: str) -> None:
    # pyarrow read the four rows as two, the first cell holding rows 1-3; the csv module stops
    text = f'query{sep}answer\n"When did it end{sep}1990\nWho won{sep}2000\nWh"at happened{sep}2010\nWhere{sep}2020\n'
    with pytest.raises(InputError, match=rf"{name}, row 1 \(line 4\): found text right after a closing"):
        load_dataset(text.encode("utf-8"), name=name)


def test_well_formed_quoting_still_loads() -> None:
    text = 'query,answer\n"When, did ""it"" end",in 1990\n"Who\nwon",in 2000\nA 5"" screen?,in 2010\n'
    frame = load_dataset(text.encode("utf-8"), name="data.csv").frame
    assert frame["query"].tolist() == ['When, did "it" end', "Who\nwon", 'A 5"" screen?']


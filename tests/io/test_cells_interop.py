"""List cells and missing values as other tools write them (issue 10, part 1)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tempo_eval.io import InputError, load_dataset
from tempo_eval.io.cells import CellError, list_cell


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("['d1' 'd2' 'd3']", ["d1", "d2", "d3"]),
        ("['d1' 'd2'\n 'd3']", ["d1", "d2", "d3"]),  # numpy wraps long reprs onto new lines
        ('["it\'s" \'b\']', ["it's", "b"]),
        ("['only']", ["only"]),
        ("[3 1 2]", ["3", "1", "2"]),
    ],
)
def test_numpy_style_list_reprs_are_read_as_their_items(cell: str, expected: list[str]) -> None:
    assert list_cell(cell, ids=True) == expected


def test_pandas_to_csv_of_array_cells_round_trips(tmp_path) -> None:
    # what RAGAS to_hf_dataset().to_csv() and any pandas/Arrow array column written to CSV do
    frame = pd.DataFrame({
        "user_input": ["q1"],
        "retrieved_context_ids": [np.array(["d1", "d2", "d3"], dtype=object)],
        "reference_context_ids": [np.array(["d1", "d2", "d3"], dtype=object)],
    })
    path = tmp_path / "ragas.csv"
    frame.to_csv(path, index=False)
    assert "['d1' 'd2' 'd3']" in path.read_text()
    dataset = load_dataset(path)
    assert dataset.frame["retrieved_ids"][0] == ["d1", "d2", "d3"]
    assert dataset.frame["gold_ids"][0] == ["d1", "d2", "d3"]


@pytest.mark.parametrize(
    ("cell", "fragment"),
    [
        ("['a', 'b' 'c']", "glue strings together"),
        ("['a' 'b' ... 'z']", "shortened with '...'"),
    ],
)
def test_cells_that_would_glue_strings_are_errors(cell: str, fragment: str) -> None:
    with pytest.raises(CellError, match=fragment):
        list_cell(cell, ids=False)


def test_ambiguous_cell_error_names_column_and_row() -> None:
    data = b'query,contexts\nq1,"[""a""]"\nq2,"[\'a\', \'b\' \'c\']"\n'
    with pytest.raises(InputError) as caught:
        load_dataset(data, name="d.csv")
    assert (caught.value.row, caught.value.column) == (2, "contexts")
    assert "glue" in str(caught.value)


def test_text_that_starts_with_a_bracketed_label_is_text_with_a_warning() -> None:
    rows = [
        {"input": "q1", "actual_output": "a", "retrieval_context": "[Source 1] The dam opened in 1936."},
        {"input": "q2", "actual_output": "a", "retrieval_context": "[Source 1] A | [Source 2] B"},
    ]
    dataset = load_dataset(pd.DataFrame(rows).to_csv(index=False).encode(), name="deepeval.csv")
    assert dataset.frame["contexts"].tolist() == [
        ["[Source 1] The dam opened in 1936."], ["[Source 1] A", "[Source 2] B"]
    ]
    (note,) = [w for w in dataset.warnings if "starts with '['" in w]
    assert "row 1" in note and "'retrieval_context'" in note and "1 more row" in note


def test_a_broken_list_is_still_an_error() -> None:
    for cell in ('["a", ', "[oops", "[1, 2", "['a', 'b'] trailing", "[[1]"):
        with pytest.raises(CellError):
            list_cell(cell, ids=False)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("[1] The first source.", ["[1] The first source."]),
        ("[1], [2] and so on", ["[1], [2] and so on"]),
        ("[a] [b] text | [c] more", ["[a] [b] text", "[c] more"]),
    ],
)
def test_bracket_led_texts_are_text(cell: str, expected: list[str]) -> None:
    notes: list[str] = []
    assert list_cell(cell, ids=False, notes=notes) == expected
    assert len(notes) == 1 and "read as text" in notes[0]


def test_an_entirely_empty_required_column_warns_with_what_the_user_gets() -> None:
    goldens = [{"input": "q1", "actual_output": None, "expected_output": "r", "retrieval_context": None},
               {"input": "q2", "actual_output": None, "expected_output": "r", "retrieval_context": None}]
    dataset = load_dataset(json.dumps(goldens).encode(), name="goldens.json")
    text = "\n".join(dataset.warnings)
    assert "column 'actual_output' (answer) is empty in every row" in text
    assert "column 'retrieval_context' (contexts) is empty in every row" in text
    assert "missing_input" in text


def test_a_json_file_holding_json_lines_is_read_as_json_lines() -> None:
    data = b'{"query": "a", "answer": "x"}\n{"query": "b", "answer": "y"}\n'
    dataset = load_dataset(data, name="data.json")
    assert dataset.frame["query"].tolist() == ["a", "b"]
    assert load_dataset(b'{"data": [{"query": "a", "answer": "x"}]}\n', name="d.json").frame["query"].tolist() == ["a"]


def test_numpy_reprs_of_awkward_strings_round_trip_through_pandas_csv(tmp_path) -> None:
    import random

    rng = random.Random(3)
    alphabet = ["a", "b", " ", "'", '"', "\\", "\n", "[", "]", ",", "é", "1"]
    arrays = [
        np.array(["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 12)))
                  for _ in range(rng.randrange(2, 6))], dtype=object)
        for _ in range(200)
    ]
    frame = pd.DataFrame({"query": [f"q{i}" for i in range(len(arrays))], "contexts": arrays})
    path = tmp_path / "awkward.csv"
    frame.to_csv(path, index=False)
    loaded = load_dataset(path).frame["contexts"].tolist()
    assert loaded == [list(a) for a in arrays]


def test_the_fast_numpy_reading_agrees_with_the_careful_one() -> None:
    from tempo_eval.io.cells import _numpy_style_fast, _numpy_style_items

    for cell in ["['d1' 'd2' 'd3']", "['a\\'b' \"c\"]", "[3 1 2]", "['x'\n 'y']", "[-1 2.5]"]:
        assert _numpy_style_fast(cell) == _numpy_style_items(cell), cell
    assert _numpy_style_fast("['a', 'b']") is None and _numpy_style_fast("['only']") is None


@pytest.mark.parametrize("orient", ["records", "columns", "split", "index_lines"])
def test_a_ragas_result_written_by_pandas_to_json_loads_in_every_orientation(orient: str, tmp_path) -> None:
    frame = pd.DataFrame({"user_input": ["q1", "q2"], "response": ["a 1936", "b"],
                          "retrieved_context_ids": [["d1", "d2"], ["d3"]], "faithfulness": [1.0, 0.5]})
    path = tmp_path / "result.json"
    if orient == "index_lines":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_json(path, orient=orient)
    loaded = load_dataset(path).frame
    assert loaded["query"].tolist() == ["q1", "q2"]
    assert loaded["retrieved_ids"].tolist() == [["d1", "d2"], ["d3"]]
    assert loaded["faithfulness"].tolist() == [1.0, 0.5]

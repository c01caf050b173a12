"""Review labels as CSV (issue 19, points 4 and 9): export guards formulas and imports back unchanged; unclosed quotes,
CR line ends and premises hashes are handled or refused naming the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempo_eval.io.errors import InputError
from tempo_eval.store.labels import LabelStore, premises_hash

# ---- points 4 and 9: labels CSV --------------------------------------------------------------

def _labels(tmp_path: Path) -> LabelStore:
    return LabelStore(tmp_path / "labels.sqlite")


DIGEST = premises_hash(["The war ended in 1945."])
HEADER = "claim,premises_hash,label,note\n"


def test_labels_csv_export_guards_formulas_and_imports_back_unchanged(tmp_path: Path) -> None:
    store = _labels(tmp_path)
    claims = ['=HYPERLINK("http://evil/")', "+1+1", "-2", "@SUM(A1)", "'quoted", "plain"]
    for claim in claims:
        store.set_label(claim, ["The war ended in 1945."], "SUPPORTED")
    exported = store.export("csv").decode("utf-8")
    cells = [line.split(",")[0].strip('"') for line in exported.splitlines()[1:]]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    again = _labels(tmp_path / "again")
    assert again.import_labels(exported.encode("utf-8"), "labels.csv") == len(claims)
    assert sorted(again.frame()["claim"]) == sorted(claims)


def test_labels_csv_with_an_unclosed_quote_and_a_later_stray_quote_is_refused(tmp_path: Path) -> None:
    text = (HEADER + f'"A,{DIGEST},SUPPORTED,\nB,{DIGEST},NEUTRAL,\nC",{DIGEST},CONTRADICTED,\n'
            f"D,{DIGEST},NEUTRAL,\n")
    store = _labels(tmp_path)
    with pytest.raises(InputError, match=r"labels.csv, row 1 \(line 2\), column 'claim'.*quote"):
        store.import_labels(text.encode("utf-8"), "labels.csv")
    assert store.frame().empty


def test_labels_csv_with_an_unclosed_quote_is_refused_naming_its_line(tmp_path: Path) -> None:
    text = HEADER + f'A,{DIGEST},SUPPORTED,\n"B,{DIGEST},NEUTRAL,\nC,{DIGEST},NEUTRAL,\n'
    store = _labels(tmp_path)
    with pytest.raises(InputError, match=r"labels.csv, line 3: .*quot"):
        store.import_labels(text.encode("utf-8"), "labels.csv")
    assert store.frame().empty


def test_labels_csv_with_cr_line_ends_imports(tmp_path: Path) -> None:
    text = HEADER.replace("\n", "\r") + f"A,{DIGEST},SUPPORTED,\rB,{DIGEST},NEUTRAL,\r"
    store = _labels(tmp_path)
    assert store.import_labels(text.encode("utf-8"), "labels.csv") == 2
    assert sorted(store.frame()["claim"]) == ["A", "B"]


@pytest.mark.parametrize("digest", ["garbage", "0" * 63, "g" * 64, DIGEST + "0", "1945"])
def test_labels_with_a_garbage_premises_hash_are_refused(tmp_path: Path, digest: str) -> None:
    store = _labels(tmp_path)
    with pytest.raises(InputError, match=r"labels.csv, row 2, column 'premises_hash'.*64"):
        store.import_labels((HEADER + f"A,{DIGEST},SUPPORTED,\nB,{digest},NEUTRAL,\n").encode(), "labels.csv")
    line = json.dumps({"claim": "B", "premises_hash": digest, "label": "NEUTRAL"})
    with pytest.raises(InputError, match=r"labels.jsonl, row 1, column 'premises_hash'"):
        store.import_labels(line.encode(), "labels.jsonl")
    assert store.frame().empty


def test_labels_without_a_premises_hash_get_it_from_their_premises(tmp_path: Path) -> None:
    store = _labels(tmp_path)
    text = 'claim,premises_hash,label,note,premises\nA,,SUPPORTED,,"[""The war ended in 1945.""]"\n'
    assert store.import_labels(text.encode(), "labels.csv") == 1
    assert store.frame()["premises_hash"].tolist() == [DIGEST]


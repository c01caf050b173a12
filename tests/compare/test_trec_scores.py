"""The streaming TREC path (`tempo_eval.compare.trec_scores`) against pytrec_eval: 0 mismatches per query.

Generated runs with tied scores, scores that tie only in float32, negative grades, judged
documents never retrieved and queries without a relevant document, written in shuffled line
order, read in blocks small enough that queries straddle blocks, compressed three ways.
"""

from __future__ import annotations

import bz2
import gzip
import math
import random
from pathlib import Path

import pyarrow as pa
import pytest
import pytrec_eval

from tempo_eval.compare.trec_scores import per_query_lines, score_trec_files
from tempo_eval.core.ranking import rank_by_trec_eval
from tempo_eval.io.errors import InputError
from tempo_eval.io.trec_stream import QueryCodes, read_qrels, read_runs
from tests.metrics.test_ndcg_trec_eval import _random_collection

CUTOFFS = (1, 3, 5, 10, 20, 100)


def _run_text(run: dict, tag: str, rng: random.Random) -> str:
    lines = [f"{q} Q0 {d} {i} {s!r} {tag}" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def _qrels_text(qrels: dict) -> str:
    return "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())


def _pytrec(qrels: dict, run: dict) -> dict:
    judged = {q: docs for q, docs in qrels.items() if docs}
    measures = {f"ndcg_cut.{','.join(map(str, CUTOFFS))}"}
    return pytrec_eval.RelevanceEvaluator(judged, measures).evaluate(run)


def _mismatches(ours: dict[str, float], expected: dict, qrels: dict, k: int) -> list[str]:
    bad = []
    for qid, values in expected.items():
        theirs = values[f"ndcg_cut_{k}"]
        if not any(g > 0 for g in qrels[qid].values()):
            continue  # trec_eval 0.0, ours not measurable (and not in per_query)
        if ours.get(qid) != theirs:
            bad.append(f"{qid}@{k}: {ours.get(qid)} != {theirs}")
    return bad


@pytest.mark.parametrize("compression", ["plain", "gzip", "bz2", "zstd"])
def test_streamed_ndcg_equals_pytrec_eval_with_zero_mismatches(tmp_path: Path, compression: str) -> None:
    run, qrels = _random_collection(seed=7, n_queries=600)
    rng = random.Random(1)
    data = _run_text(run, "sys", rng).encode()
    if compression == "gzip":
        data = gzip.compress(data)
    elif compression == "bz2":
        data = bz2.compress(data)
    elif compression == "zstd":
        data = pa.compress(data, codec="zstd", asbytes=True)
    path = tmp_path / f"sys.run.{compression}"
    path.write_bytes(data)
    (tmp_path / "qrels").write_text(_qrels_text(qrels))
    expected = _pytrec(qrels, {q: d for q, d in run.items() if d})
    scores = score_trec_files(
        [path], tmp_path / "qrels", metrics=[f"ndcg@{k}" for k in CUTOFFS], missing="drop", curve_k=100
    )
    mismatches = [m for k in CUTOFFS for m in _mismatches(scores.per_query["sys"][f"ndcg@{k}"], expected, qrels, k)]
    assert mismatches == []
    query_ids, curve = scores.curves["sys"]
    for row, qid in enumerate(query_ids):
        for k in CUTOFFS:
            assert curve[row, k - 1] == expected[qid][f"ndcg_cut_{k}"]


def test_small_blocks_and_a_small_keep_give_the_same_top_documents(tmp_path: Path) -> None:
    run, _ = _random_collection(seed=11, n_queries=300)
    text = _run_text(run, "a", random.Random(2)) + _run_text(run, "b", random.Random(3))
    path = tmp_path / "two.run"
    path.write_text(text)
    for keep in (1, 3, 17):
        codes = QueryCodes()
        top = read_runs([path], codes, keep=keep, block_bytes=4096)
        assert set(top) == {"a", "b"}
        for streamed in top.values():
            got: dict[str, list[str]] = {}
            for code, doc in zip(streamed.codes.tolist(), streamed.docids.to_pylist(), strict=True):
                got.setdefault(codes.ids[code], []).append(doc)
            want = {q: rank_by_trec_eval(docs)[:keep] for q, docs in run.items() if docs}  # the whole-run rule
            assert got == want


def test_a_real_tie_at_the_cut_is_decided_by_document_id_descending(tmp_path: Path) -> None:
    lines = [f"q1 Q0 d{i} {i} 1.0 r" for i in range(50)] + ["q1 Q0 top 0 2.0 r"]
    (tmp_path / "r.run").write_text("\n".join(lines) + "\n")
    top = read_runs([tmp_path / "r.run"], QueryCodes(), keep=3, block_bytes=64)["r"]
    assert top.docids.to_pylist() == ["top", "d9", "d8"]


def test_judged_queries_without_results_scored_zero_or_dropped(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 1\nq4 0 x 0\n")
    (tmp_path / "a.run").write_text("q1 Q0 a 1 1.0 A\nq2 Q0 b 1 1.0 A\nq9 Q0 z 1 1.0 A\n")
    (tmp_path / "b.run").write_text("q1 Q0 a 1 1.0 B\n")
    zero = score_trec_files([tmp_path / "a.run", tmp_path / "b.run"], tmp_path / "qrels")
    assert zero.per_query["A"]["ndcg@10"] == {"q1": 1.0, "q2": 1.0, "q3": 0.0}
    assert zero.per_query["B"]["ndcg@10"] == {"q1": 1.0, "q2": 0.0, "q3": 0.0}
    assert (zero.missing, zero.missing_everywhere, zero.n_judged) == ({"A": 1, "B": 2}, 1, 3)
    assert "A 1, B 2; 1 in no run; scored 0" in zero.missing_summary()
    drop = score_trec_files([tmp_path / "a.run", tmp_path / "b.run"], tmp_path / "qrels", missing="drop")
    assert drop.per_query["B"]["ndcg@10"] == {"q1": 1.0}
    assert "left out" in drop.missing_summary()


def test_per_query_lines_are_csv_like_trec_eval_q(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq,2 0 b 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 a 1 1.0 A\n")
    scores = score_trec_files([tmp_path / "a.run"], tmp_path / "qrels", metrics=["ndcg@1"])
    assert "".join(per_query_lines(scores)) == 'run,query_id,metric,value\nA,q1,ndcg@1,1.0\nA,"q,2",ndcg@1,0.0\n'


def test_irregular_whitespace_comments_and_extra_fields_are_read(tmp_path: Path) -> None:
    (tmp_path / "r.run").write_text("# c\n q1\tQ0  a 1 2.0 r extra\r\nq1 Q0 b 2 1.0   r  \n\n")
    top = read_runs([tmp_path / "r.run"], QueryCodes(), keep=5)["r"]
    assert top.docids.to_pylist() == ["a", "b"]
    assert any("more than 6 fields" in note for note in top.notes)


@pytest.mark.parametrize("line,field", [
    ("q1 Q0 d2 1_0 1.0 r", "rank"), ("q1 Q0 d2 ١ 1.0 r", "rank"), ("q1 Q0 d2 2 1_0 r", "score"),
    ("q1 Q0 d2 2 ١٢ r", "score"), ("q1 Q0 d2 2 nan r", "score"),
])
def test_streamed_run_refuses_non_ascii_numbers_naming_line_and_field(tmp_path: Path, line: str, field: str) -> None:
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2.0 r\n" + line + "\n")
    with pytest.raises(InputError) as caught:
        read_runs([tmp_path / "r.run"], QueryCodes(), keep=10)
    assert (caught.value.line, caught.value.column) == (2, field)


@pytest.mark.parametrize("rel", ["1_0", "١", "1.0"])
def test_streamed_qrels_refuse_non_ascii_grades(tmp_path: Path, rel: str) -> None:
    (tmp_path / "q").write_text(f"q1 0 d1 1\nq1 0 d2 {rel}\n")
    with pytest.raises(InputError) as caught:
        read_qrels(tmp_path / "q", QueryCodes())
    assert (caught.value.line, caught.value.column) == (2, "rel")


def test_duplicates_fifo_and_json(tmp_path: Path) -> None:
    (tmp_path / "dup.run").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d1 2 1.0 r\n")
    with pytest.raises(InputError, match="appears twice"):
        read_runs([tmp_path / "dup.run"], QueryCodes(), keep=10)
    (tmp_path / "dup.qrels").write_text("q1 0 d1 1\nq1 0 d1 0\n")
    with pytest.raises(InputError, match="line 1 and at line 2"):
        read_qrels(tmp_path / "dup.qrels", QueryCodes())
    import os

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputError, match="not a regular file"):
        read_runs([tmp_path / "fifo"], QueryCodes(), keep=10)
    (tmp_path / "r.json").write_text('{"q1": {"a": 1.0, "b": 2.0}}')
    (tmp_path / "q.json").write_text('{"q1": {"a": 1}}')
    scores = score_trec_files([tmp_path / "r.json"], tmp_path / "q.json", metrics=["ndcg@2"])
    assert math.isclose(scores.per_query["r"]["ndcg@2"]["q1"], 1 / math.log2(3))


def test_a_byte_order_mark_and_blocks_shorter_than_a_line() -> None:
    top = read_runs([b"\xef\xbb\xbfq1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r"], QueryCodes(), keep=5, block_bytes=8)["r"]
    assert top.docids.to_pylist() == ["a", "b"]


def test_files_are_closed_also_when_a_read_stops_at_a_bad_line(tmp_path):
    import gc
    import warnings

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    good = tmp_path / "run.txt"
    good.write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 2.0 a\n" * 500 + "oops\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        codes = QueryCodes()
        read_qrels(qrels, codes)
        read_runs([good], codes, keep=10)
        with pytest.raises(InputError, match="line 501"):
            read_runs([bad], codes, keep=10, block_bytes=64)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]

"""`compare` says one pair of runs and uses the pages' default test (issue 24)."""

from __future__ import annotations

from tests.support.paths import ROOT


def test_compare_says_one_pair_of_runs_and_uses_the_pages_default_test() -> None:
    from tempo_eval.cli.parser import build_parser
    from tempo_eval.compare.statistics import DEFAULT_TEST, _pairs_text

    assert _pairs_text(1) == "1 pair of runs" and _pairs_text(3) == "3 pairs of runs"
    args = build_parser().parse_args(["compare", "a.trec", "b.trec", "--qrels", "q.txt"])
    assert args.test == DEFAULT_TEST
    source = (ROOT / "views" / "compare.py").read_text(encoding="utf-8")
    assert "[DEFAULT_TEST, *(t for t in TESTS if t != DEFAULT_TEST)]" in source  # the page's first option


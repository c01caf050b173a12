"""User text in plotly figures is escaped once, with what plotly decodes (issue 38.16): a query
with quotes shows its quotes in the hover label, not "&quot;"; markup and template fields still
show as typed."""

from __future__ import annotations

import re

import pandas as pd

from tempo_eval.common.safe_text import plotly_text
from tempo_eval.viz.run_diff import diff_scatter
from tempo_eval.viz.scatter import paired_scatter, paired_scores
from tempo_eval.viz.trends import trend_chart

QUERY = 'Who said "veni, vidi" & didn\'t <b>stop</b> at %{x}?'
#: named references plotly does not decode (it decodes &amp; &lt; &gt; and numeric ones)
UNDECODED = re.compile(r"&(?!amp;|lt;|gt;|#\d+;)[a-zA-Z#][a-zA-Z0-9]*;")


def _strings(figure) -> str:
    return figure.to_json()


def test_plotly_text_escapes_markup_and_fields_but_not_quotes() -> None:
    assert plotly_text(QUERY) == ('Who said "veni, vidi" &amp; didn\'t &lt;b&gt;stop&lt;/b&gt; at '
                                  "%&#123;x&#125;?")


def test_hover_labels_of_the_run_diff_scatter_show_quotes_as_typed() -> None:
    rows = pd.DataFrame({"metric": "m", "key": ["k1", "k2"], "query": [QUERY, 'a "b"'], "baseline": [0.2, 0.5],
                         "candidate": [0.9, 0.5], "delta": [0.7, 0.0], "outcome": ["improved", "unchanged"]})
    figure = diff_scatter(rows, metric="m", baseline='run "one"', candidate="two's")
    text = _strings(figure)
    assert not UNDECODED.search(text), UNDECODED.search(text)
    hover = [t for trace in figure.data for t in trace.text]
    assert plotly_text(QUERY) in hover and 'a "b"' in hover
    assert figure.layout.xaxis.title.text == 'baseline: run "one"'


def test_hover_labels_of_compare_and_trends_show_quotes_as_typed() -> None:
    pairs = paired_scores(pd.Series({QUERY: 0.1}), pd.Series({QUERY: 0.3}))
    figure = paired_scatter(pairs, name_a='"A"', name_b="b", metric="m")
    assert not UNDECODED.search(_strings(figure))
    assert any('said "veni, vidi"' in t for trace in figure.data for t in trace.text)
    trends = pd.DataFrame({"run_id": [1, 2], "name": ['say "x"', "it's"], "metric": "m", "mean": [0.2, 0.4],
                           "ci_low": [0.1, 0.3], "ci_high": [0.3, 0.5], "created_at": ["d1", "d2"]})
    figure = trend_chart(trends)
    assert not UNDECODED.search(_strings(figure))
    assert list(figure.data[0].x) == ['say "x" #1', "it's #2"]

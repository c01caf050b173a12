"""One standalone HTML file for a report: headings, paragraphs, tables and plotly figures, with
plotly.js embedded once, so the file opens offline and fetches nothing from the network; and the
reports built from them: `diff_html` (a run diff), `comparison_html` (a comparison of runs) and
`slices_html` (scores over time).

    standalone_html("Run diff", [heading("Figures"), table(frame), figure(fig)])   # a str

Every piece of user text goes through `html.escape` (tables through pandas' escaping).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import pandas as pd

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
"""


def heading(text: str, level: int = 2) -> str:
    return f"<h{level}>{html.escape(str(text))}</h{level}>"


def paragraph(text: str) -> str:
    return f"<p>{html.escape(str(text))}</p>"


def table(frame: pd.DataFrame, *, float_format: str = "{:.3f}") -> str:
    """The frame as an HTML table, text escaped, numbers with `float_format`, NaN as an em dash."""
    return frame.to_html(index=False, escape=True, na_rep="—", float_format=float_format.format, border=0)


def figure(fig: Any) -> str:
    """A plotly figure as a <div> (the script tag of plotly.js is added once by `standalone_html`)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, default_height="480px")


def standalone_html(title: str, blocks: Sequence[str], *, figures: bool = True) -> str:
    """The document: `title`, plotly.js inline (with `figures`: some block is a `figure`), then
    `blocks`."""
    body = "\n".join(blocks)
    script = ""
    if figures:
        from plotly.offline import get_plotlyjs

        script = f'<script type="text/javascript">{get_plotlyjs()}</script>'
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(str(title))}</title>\n<style>{_STYLE}</style>\n{script}\n</head>\n"
        f"<body>\n{heading(title, 1)}\n{body}\n</body>\n</html>\n"
    )


# ---- the reports ----------------------------------------------------------------------------

def diff_html(report: Any, *, top: int = 50) -> str:
    """A run diff (`tempo_eval.compare.run_diff.RunDiff`) as one file: its headline, the figures per
    metric, the mean change with its CI, a baseline-against-candidate scatter per metric, the
    `top` worst regressions and the rows without a partner."""
    from tempo_eval.viz.run_diff import change_chart, diff_scatter

    blocks = [paragraph(report.headline()), heading("Per metric"), table(report.summary_table())]
    if report.metrics:
        blocks.append(figure(change_chart(report.summary)))
    for metric in report.metrics:
        rows = report.rows[report.rows["metric"] == metric]
        blocks.append(figure(diff_scatter(rows, metric=metric, baseline=str(report.baseline.get("name")),
                                          candidate=str(report.candidate.get("name")))))
    worst = report.rows_table(outcome=["regressed", "became not measurable"]).head(top)
    blocks += [heading(f"Worst regressions (top {len(worst)})"), table(worst)]
    for side, keys in (("baseline", report.matching.unmatched_baseline),
                       ("candidate", report.matching.unmatched_candidate)):
        if keys:
            blocks += [heading(f"Only in the {side} ({len(keys)})", 3), table(pd.DataFrame({"query": keys}))]
    title = f"Run diff: {report.baseline.get('name')} → {report.candidate.get('name')}"
    return standalone_html(title, blocks, figures=bool(report.metrics))


def comparison_html(report: Any, *, board: pd.DataFrame | None = None) -> str:
    """A comparison of runs (`tempo_eval.compare.statistics.ComparisonReport`) as one file: a chart of each
    run's mean per metric, the table with its caption (`board`, e.g. with each mean's CI
    beside it, `tempo_eval.compare.statistics.cis_columns`; by default `report.to_dataframe()`), the run
    pairs with p-values and W / T / L."""
    from tempo_eval.viz.means import means_figure

    board = report.to_dataframe() if board is None else board
    board = board.rename(columns={"label": "#"})
    pairs = report.pairs_frame().rename(columns={
        "run_a": "run A", "run_b": "run B", "mean_a": "mean A", "mean_b": "mean B", "p_value": "p-value",
        "p_adjusted": "adjusted p-value", "n_queries": "queries compared",
    })
    blocks = [
        figure(means_figure(report.means, report.metrics)),
        heading("Runs"), table(board), paragraph(report.caption(screen=True)),
        heading("Run pairs"), table(pairs, float_format="{:.4g}"),
    ]
    return standalone_html("Comparison of " + ", ".join(report.runs), blocks)


def slices_html(report: Any) -> str:
    """Scores over time (`tempo_eval.slices.SliceReport`) as one file: the curves with their bands
    and change points, the differences, the table of bins, the change points and the rows not
    measured with their reasons."""
    from tempo_eval.viz.slices import slices_figure

    blocks = [figure(slices_figure(report)), heading("Bins"), table(report.frame())]
    changes = [{"run": r.run, "change at": c["start"], "mean before": c["before"]["mean"],
                "mean after": c["after"]["mean"], "drop": c["drop"]["value"], "drop low": c["drop"]["low"],
                "drop high": c["drop"]["high"], "p-value": c["p_value"]}
               for r in report.runs for c in r.changepoints]
    tested = [r for r in report.runs if r.changepoint_tested]
    if tested:
        blocks.append(heading("Change points"))
        blocks.append(table(pd.DataFrame(changes)) if changes else paragraph("No change point found."))
    reasons = report.reasons_frame()
    if not reasons.empty:
        blocks += [heading("Rows not measured or not placed in time"), table(reasons)]
    for diff in report.differences:
        blocks += [heading(f"Run #{diff.b} minus run #{diff.a}, rows measured in both", 3),
                   table(pd.DataFrame(diff.bins))]
    return standalone_html(f"{report.metric} over time ({report.by.replace('_', ' ')}, by {report.bin})", blocks)

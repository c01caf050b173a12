"""One standalone HTML file for a report: headings, paragraphs, tables and plotly figures, with
plotly.js embedded once, so the file opens offline and fetches nothing from the network.

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

"""User text (run names, query ids, dataset names) made safe where it is printed or pasted.

    terminal_safe("a\\x1b[31mb")   # 'a\\\\x1b[31mb': the escape sequence shown, not obeyed
    one_line("two\\nlines")         # 'two lines': a terminal listing, one item a line
    md_cell("a|b*c")               # 'a\\\\|b\\\\*c': a Markdown table cell (diff, compare)

`terminal_safe` is the one function every text output of the command line passes user data
through: C0 controls (ESC, BEL, backspace, carriage return, ...), DEL, C1 controls, and the
characters that reorder or break a line on screen (bidi embeddings, overrides and isolates, the
directional marks, the Unicode line and paragraph separators) become visible escapes (`\\x1b`,
`\\u202e`, `\\n`); everything else is left as typed. `md_cell` is the one Markdown escaping, used by
`tempo-eval diff --format markdown` and by Compare's Markdown (command line and page download).
"""

from __future__ import annotations

import re
from typing import Any

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: characters that Markdown (GitHub's included) reads as markup inside a table cell
_MD_SPECIAL = "\\|*_`[]<>#"


def _visible(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: Any) -> str:
    """`text` with every control and bidi character written as a visible escape (see the module
    docstring): printing it cannot move the cursor, recolour, retitle or reorder the terminal."""
    return _CONTROLS.sub(_visible, str(text))


#: what JSON leaves raw that a terminal may obey: DEL, C1 controls, bidi and line separators
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_safe(text: str) -> str:
    """JSON text (`json.dumps(..., ensure_ascii=False)`) with the characters it leaves raw that a
    terminal may obey written as `\\uXXXX` escapes: the same JSON value, nothing lost (they only
    occur inside strings; json.dumps escapes the C0 controls itself)."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def one_line(text: Any) -> str:
    """`terminal_safe` text on one line: runs of whitespace (newlines included) as one space."""
    return terminal_safe(" ".join(str(text).split()))


def md_cell(text: Any) -> str:
    """Text made inert in a Markdown table cell: on one line, pipes (which would end the cell) and
    the characters of emphasis, code, links, HTML and headings backslash-escaped, controls visible
    (`terminal_safe`: the Markdown is also printed to a terminal)."""
    cleaned = " ".join(str(text).split())
    return terminal_safe("".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in cleaned))


#: what plotly's text renderer reads as markup in user text, and its replacement: plotly decodes
#: only &amp; &lt; &gt; (and a few symbols) and numeric references, so a quote escaped as &quot;
#: would show as "&quot;"; quotes are left as typed (no tag can open without "<"); braces as
#: numeric references, so "%{x}" in a name is not a hover template's field
_PLOTLY = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "{": "&#123;", "}": "&#125;"})


def plotly_text(text: Any) -> str:
    """User text (query ids and texts, run and metric names) made inert, once, for plotly's
    titles, legends, axis labels, hover text and templates (`tempo_eval.viz`); shown as typed,
    quotes included."""
    return str(text).translate(_PLOTLY)

"""Markdown injection (issue 19.8): user text reaches Streamlit markdown only through
`formatting.md_escape`.

Two parts: a unit test of the helper (what it escapes, and that the reader still sees the
original characters), and a static check over app.py, views/ and tempo_eval_app/ that every
string handed to a markdown-rendering call (st.markdown, st.error, st.warning, st.info,
st.success, st.caption, st.toast, st.write, headings, widget labels, `help=` tooltips, tab labels,
progress text) is a constant, an `md_escape(...)` call, a number, or an f-string / concatenation /
join built only from those. The browser check is in tests/browser/test_markdown_injection.py.
"""

from __future__ import annotations

import ast
import re
import string

import pytest

from tempo_eval_app.formatting import WORD_JOINER, md_escape
from tests.support.paths import ROOT

SOURCES = sorted([ROOT / "app.py", *(ROOT / "views").glob("*.py"), *(ROOT / "tempo_eval_app").glob("*.py")])

#: calls whose first argument (or `body=` / `label=` / `text=`) Streamlit renders as markdown
MARKDOWN_CALLS = {
    "markdown", "error", "warning", "info", "success", "caption", "toast", "write", "title", "header",
    "subheader", "expander", "popover", "metric", "radio", "selectbox", "multiselect", "checkbox",
    "toggle", "button", "download_button", "link_button", "form_submit_button", "text_input",
    "text_area", "number_input", "slider", "select_slider", "file_uploader", "date_input", "status", "table",
}
TEXT_KEYWORDS = ("body", "label", "text", "help")
#: receivers that are not Streamlit (a logger's .error / .warning / .info)
NOT_STREAMLIT = {"logger", "logging", "log", "handle", "file", "sys"}
#: calls whose value is a number or a fixed string, never user text: the score formatters and len
SAFE_CALLS = {"md_escape", "fmt_score", "fmt_count", "fmt_p", "plural", "_fmt", "len", "int",
              "verdict_label"}  # verdict_label: the constant display name of an engine verdict
#: f-string format specs that only a number accepts (".3f", "+.2f", "d", ",")
NUMERIC_SPEC = re.compile(r"^[+\- ]?,?(\.\d+)?[dfeg%]?$")
#: names proven to hold app-made text, with why (keep this short; anything else goes through md_escape)
ALLOWED_NAMES = {
    ("runs.py", "question"): "a local function whose f-string escapes the run and dataset names",
    ("evaluate.py", "line"): "built just above from an icon, a constant description and md_escape(why)",
    ("evaluate.py", "endpoint"): "md_escape(judge_url) or a constant",
    ("evaluate.py", "key_source"): "a constant phrase from verifier_choice.judge_api_key (never the key)",
    ("evaluate.py", "note"): "a constant sentence or empty",
    ("selection.py", "hint"): "a constant sentence or empty",
    ("overview.py", "label"): "a key of the page's constant dict of metric titles",
    ("datasets.py", "canonical"): "a name from the constant CANONICAL_COLUMNS",
    ("widgets.py", "message"): "empty_state's note, written by the calling page (constant sentences and counts)",
    ("widgets.py", "label"): "a label of the constant PAGES",
    ("agreement.py", "_p_text"): "a p-value formatted by fmt_p (digits or '< 0.001')",
    ("heatmaps.py", "_merged_note"): "a constant sentence naming bin widths (years, decades, centuries)",
    ("claims.py", "label"): "a counter title from the page's constant tuple",
    ("claims.py", "verdict"): "a verdict name from the page's constant tuple",
    ("evaluate.py", "unavailable"): "metric labels (words.METRIC_LABELS) and the column names they need (constants)",
    ("evaluate.py", "TF_MODE_HELP"): "the page's constant help text of the Mode box",
    ("overview.py", "shown"): "a table whose every cell, index label and column name went through md_escape just above",
    ("evaluate.py", "NDCG_MODE_HELP"): "the page's constant help text of the Mode box",
}


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _callee(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _safe(node: ast.AST, file: str) -> bool:
    """True when `node` can only produce escaped or app-made text."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.JoinedStr):
        return all(_safe(part, file) for part in node.values)
    if isinstance(node, ast.FormattedValue):
        spec = node.format_spec
        constant_spec = isinstance(spec, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in spec.values)
        if constant_spec and NUMERIC_SPEC.match("".join(str(v.value) for v in spec.values)):
            return True  # a numeric format spec raises on anything but a number
        return _safe(node.value, file)
    if isinstance(node, ast.Call):
        name = _callee(node)
        if name in SAFE_CALLS:
            return True
        if name == "join" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Constant):
            return len(node.args) == 1 and _safe(node.args[0], file)
        return isinstance(node.func, ast.Name) and (file, node.func.id) in ALLOWED_NAMES
    if isinstance(node, (ast.GeneratorExp, ast.ListComp)):
        return _safe(node.elt, file)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_safe(e, file) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _safe(node.left, file) and _safe(node.right, file)
    if isinstance(node, ast.IfExp):
        return _safe(node.body, file) and _safe(node.orelse, file)
    if isinstance(node, ast.Name):
        return (file, node.id) in ALLOWED_NAMES
    return False


def _rendered_args(call: ast.Call, name: str) -> list[ast.AST]:
    args: list[ast.AST] = [kw.value for kw in call.keywords if kw.arg in TEXT_KEYWORDS]
    if name == "tabs":
        return args + list(call.args[:1])
    if name in MARKDOWN_CALLS and call.args:
        args.append(call.args[0])
    if name == "progress" and len(call.args) > 1:
        args.append(call.args[1])
    return args


def unescaped_calls(source: str, file: str) -> list[str]:
    """`file:line name(...)` for every markdown-rendering call given text that may be unescaped."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = node.func.attr
        root = _root_name(node.func.value)
        if root in NOT_STREAMLIT:
            continue
        if name == "write" and root != "st":
            continue
        if name not in MARKDOWN_CALLS and name not in ("tabs", "progress") and not any(kw.arg == "help" for kw in node.keywords):
            continue
        if root == "st" and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "column_config":
            args = [kw.value for kw in node.keywords if kw.arg == "help"]  # column headers are plain text
        else:
            args = _rendered_args(node, name)
        for arg in args:
            if not _safe(arg, file):
                problems.append(f"{file}:{node.lineno} {name}({ast.unparse(arg)[:80]})")
    return problems


def test_every_markdown_call_in_the_app_escapes_what_it_is_given() -> None:
    problems = [p for path in SOURCES for p in unescaped_calls(path.read_text(encoding="utf-8"), path.name)]
    assert problems == [], "user text may reach markdown unescaped (wrap it in formatting.md_escape):\n" + "\n".join(problems)


@pytest.mark.parametrize("snippet", [
    'st.error(str(error))',
    'st.caption(f"Run {name}")',
    'st.markdown("**" + name + "**")',
    'st.expander(f"Rows of {dataset}")',
    'col.metric(f"{metric}: score", 1)',
    'st.tabs([name, "Other"])',
    'st.toast(message)',
    'st.selectbox("Pick", options, help=f"From {path}")',
    'st.column_config.NumberColumn("x", help=note)',
    'st.sidebar.warning(", ".join(names))',
    'st.progress(0.5, text=label)',
    'st.caption(f"{n:>10}")',
])
def test_the_check_catches_unescaped_text(snippet: str) -> None:
    assert unescaped_calls(snippet, "views_x.py"), snippet


@pytest.mark.parametrize("snippet", [
    'st.error(formatting.md_escape(str(error)))',
    'st.caption(f"Run **{md_escape(name)}** · {len(rows)} rows · {score:.3f} · {fmt_score(x)}")',
    'st.markdown("a" + md_escape(b) if c else "d")',
    'st.caption(" · ".join(f"{md_escape(m)}: {n:d}" for m, n in pairs))',
    'logger.error(f"x {y}")',
    'st.column_config.NumberColumn(metric, format="%.3f")',
])
def test_the_check_accepts_escaped_and_constant_text(snippet: str) -> None:
    assert unescaped_calls(snippet, "views_x.py") == [], snippet


# ---- the helper -----------------------------------------------------------------------------------

HOSTILE = [
    "![x](http://127.0.0.1:9/x.png)",
    "[click](http://evil.example)",
    "<http://auto.example>",
    "see http://bare.example/p, www.bare.example and me@mail.example",
    "<img src=x onerror=alert(1)> <b>bold</b> &lt;",
    "$x^2$ and $$y$$",
    ":red[red] :material/home: :smile:",
    "**bold** _it_ ~~s~~ `code` # h | t | \\",
]


def _unescape(text: str) -> str:
    """What markdown shows for escaped text: backslash escapes resolved, word joiners invisible."""
    return re.sub(r"\\(.)", r"\1", text).replace(WORD_JOINER, "")


@pytest.mark.parametrize("text", HOSTILE)
def test_md_escape_keeps_the_visible_text(text: str) -> None:
    assert _unescape(md_escape(text)) == text


@pytest.mark.parametrize("text", HOSTILE)
def test_md_escape_leaves_no_markdown_or_html_syntax(text: str) -> None:
    escaped = md_escape(text)
    # every ASCII punctuation character comes as a backslash escape, none bare
    i = 0
    while i < len(escaped):
        if escaped[i] == "\\":
            assert i + 1 < len(escaped) and escaped[i + 1] in string.punctuation, (text, escaped)
            i += 2
        else:
            assert escaped[i] not in string.punctuation, (text, escaped, i)
            i += 1
    # bare URLs, www. and e-mail addresses are broken for GFM's autolink literals
    plain = escaped.replace("\\", "")
    assert not re.search(r"https?://|www\.|\w@\w", plain, re.IGNORECASE), plain


def test_md_escape_accepts_any_value_and_leaves_plain_words_alone() -> None:
    assert md_escape(3) == "3"
    assert md_escape(None) == "None"
    assert md_escape("Apollo 11 landed in 1969") == "Apollo 11 landed in 1969"
    assert md_escape("a.b") == "a\\.b"

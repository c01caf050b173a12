"""The README and docs/ say what is true: their Python runs as written and prints what its comments
say, their commands are the ones that work on a fresh machine, their links resolve, and every NaN
reason code the engine can give is documented.

Snippets that need a judge run against the local scripted OpenAI-compatible server
(tests/support/openai_server.py), reached through OPENAI_BASE_URL and OPENAI_API_KEY as a user's
own endpoint would be: the snippet text stays what a user types.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAIServer, json_reply, last_user_message
from tests.support.paths import ROOT
from tests.verify.test_llm_verifier import _section, judge_claim, judge_reply, sentences

README = ROOT / "README.md"
DOCS = ROOT / "docs"
METRICS_DOC = DOCS / "metrics.md"
MARKDOWN = [README, *sorted(DOCS.rglob("*.md"))]
#: the pages whose every command runs on the bundled sample (tests/docs/test_docs_site.py)
TOUR_PAGES = [README, *sorted((DOCS / "guide").glob("*.md"))]

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)
NEEDS_JUDGE = re.compile(r'make_verifier\("llm"|OpenAIProvider\(')


def fenced(path: Path, language: str | None = None) -> list[tuple[int, str, str]]:
    """(line number, language, body) of every fenced block of `path`."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        if language is None or match.group(1) == language:
            blocks.append((text.count("\n", 0, match.start()) + 1, match.group(1), match.group(2)))
    return blocks


def python_blocks() -> list[Any]:
    """One test parameter per python block; blocks that load a verifier's model are slow."""
    return [
        pytest.param(
            path, line, body, id=f"{path.relative_to(ROOT)}:{line}",
            marks=[pytest.mark.slow] if "verifier" in body else [],
        )
        for path in MARKDOWN
        for line, _, body in fenced(path, "python")
    ]


# ---- a judge for the snippets ----------------------------------------------------------------

def snippet_judge(request: dict[str, Any]) -> Reply:
    """The claim verifier's judge (`judge_reply`), plus Temporal Faithfulness's LLM-mode prompt:
    each answer sentence with a year is a temporal claim, judged against the context sentences."""
    prompt = last_user_message(request)
    if "## Answer\n" in prompt and "## Context\n" in prompt:
        context = [
            s for line in _section(prompt, "Context").splitlines()
            for s in sentences(re.sub(r"^\[\d+\]\s*", "", line))
        ]
        claims = []
        for claim in sentences(_section(prompt, "Answer")):
            if re.search(r"\b(1\d{3}|20\d{2})\b", claim):
                verdict = judge_claim(claim, context)
                label = {"NEUTRAL": "NOT_SUPPORTED"}.get(verdict["verdict"], verdict["verdict"])
                claims.append({"claim": claim, **verdict, "verdict": label})
        return json_reply({"claims": claims})
    return judge_reply(request)


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(snippet_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        yield server


# ---- the snippets run as written ---------------------------------------------------------------

def test_the_readme_and_the_metrics_page_have_python_examples():
    assert fenced(README, "python")
    assert fenced(METRICS_DOC, "python")


def test_no_python_hides_in_a_non_python_block():
    for path in MARKDOWN:
        for line, language, body in fenced(path):
            if language != "python":
                assert not re.search(r"^\s*(from tempo_eval|import tempo_eval)", body, re.M), (
                    f"{path.name}:{line}: Python in a ```{language} block is never run; mark it python"
                )


@pytest.mark.parametrize(("path", "line", "block"), python_blocks())
def test_python_example_runs_and_prints_what_its_comments_promise(path, line, block, judge_env):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile("\n" * (line) + block, str(path), "exec"), {})
    printed = out.getvalue().splitlines()
    printing_lines = [source for source in block.splitlines() if source.startswith("print(")]
    assert len(printed) == len(printing_lines), printed
    promised = 0
    for source, output in zip(printing_lines, printed, strict=True):
        comment = re.search(r"#\s*(.+)$", source)
        if comment is None:
            continue
        promised += 1
        expected = comment.group(1).strip()
        if expected.endswith("..."):
            assert output.startswith(expected[:-3].rstrip()), (source, output)
        else:
            assert output == expected, (source, output)
    assert promised, "an example should say what it prints"
    # a snippet that needs a judge really asked the one it was pointed at
    assert bool(judge_env.requests) == bool(NEEDS_JUDGE.search(block)), len(judge_env.requests)


# ---- commands --------------------------------------------------------------------------------

def _commands(path: Path) -> list[str]:
    """Every command line of the ```bash blocks and every inline `code` span of `path`."""
    text = path.read_text(encoding="utf-8")
    lines = [c for _, _, body in fenced(path, "bash") for c in body.splitlines() if c.strip()]
    without_fences = FENCE.sub("", text)
    return lines + re.findall(r"`([^`\n]+)`", without_fences)


def test_commands_use_the_venv_python_not_a_bare_python():
    for path in MARKDOWN:
        for command in _commands(path):
            for part in re.split(r"&&|\|\||;|\|", command):
                words = part.split()
                if not words or not re.fullmatch(r"python3?", words[0]):
                    continue
                # the only bare python is the one that makes the venv
                assert words[1:3] == ["-m", "venv"], f"{path.name}: {command!r} runs a bare python"


CLI_LINE = re.compile(r"^(?:\.venv/bin/python -m tempo_eval|(?:\.venv/bin/)?tempo-eval) (\S+)(.*)$")


def cli_commands(path: Path) -> list[str]:
    """The tempo-eval command lines of the ```bash blocks of `path`, in order."""
    return [line.strip() for _, _, body in fenced(path, "bash") for line in body.splitlines()
            if CLI_LINE.match(line.strip())]


@pytest.mark.slow
@pytest.mark.parametrize("path", TOUR_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_line_of_the_readme_and_the_user_guide_runs_as_written(path: Path, tmp_path: Path):
    """Each page's commands, in order, in one fresh workspace, from a folder holding the
    repository's data/, with this interpreter standing in for .venv/bin/python (or the
    installed tempo-eval): what a newcomer types on the bundled sample works."""
    import shlex

    commands = cli_commands(path)
    if path == README:
        assert {CLI_LINE.match(c).group(1) for c in commands} >= {"evaluate", "compare"}
    (tmp_path / "data").symlink_to(ROOT / "data")
    env = {**os.environ, "TEMPO_EVAL_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    for command in commands:
        found = CLI_LINE.match(command)
        argv = [sys.executable, "-m", "tempo_eval", found.group(1), *shlex.split(found.group(2), comments=True)]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    # the runs are in the workspace, and nothing is written into the folder the commands ran from
    assert {p.name for p in tmp_path.iterdir()} <= {"data", "home"}
    if path == README:
        from tempo_eval.store.db import DB_FILENAME
        from tempo_eval.store.runs import RunStore

        assert len(RunStore(tmp_path / "home" / DB_FILENAME).list_runs()) >= 3


def test_the_cli_help_points_to_the_metric_semantics():
    from tempo_eval.cli import build_parser

    assert "docs/metrics.md" in build_parser().format_help()


# ---- the app's address -----------------------------------------------------------------------

def test_the_readme_gives_the_apps_address_and_how_to_stop_it():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    port = config.get("server", {}).get("port", 8501)  # Streamlit's default
    text = README.read_text(encoding="utf-8")
    assert f"http://localhost:{port}" in text
    assert "Ctrl+C" in text


# ---- links -----------------------------------------------------------------------------------

def _local_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return [t for t in targets if not re.match(r"[a-z]+://|#|mailto:", t)]


def test_every_local_link_and_image_exists():
    for path in MARKDOWN:
        for target in _local_links(path):
            assert (path.parent / target.split("#")[0]).exists(), f"{path.name} links to missing {target}"


def test_the_readme_shows_every_walkthrough_screenshot():
    from tests.browser.test_walkthrough_screenshots import STEPS

    links = set(_local_links(README))
    for step in STEPS:
        assert f"docs/screenshots/{step}.png" in links, step


def test_the_readme_no_longer_points_outside_the_repository():
    assert "../shared" not in README.read_text(encoding="utf-8")


# ---- every reason code is documented ---------------------------------------------------------

def _code_values(node: ast.AST | None, names: set[str]) -> set[str]:
    """The strings an expression used as a reason code can take: literals, both branches of a
    conditional; a bare name is added to `names` (resolved later); calls give nothing here."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _code_values(node.body, names) | _code_values(node.orelse, names)
    if isinstance(node, ast.Name):
        names.add(node.id)
    return set()


def _is_reason_target(target: ast.AST) -> bool:
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "reason_code"


@functools.cache
def reason_codes_in_code() -> frozenset[str]:
    """The reason codes the engine can give, read from its source:

    the code argument of `not_measurable(...)` and of `MetricResult(...)` (4th positional or
    `reason_code=`), values assigned to `reason_code` (also in tuple assignments), and what the
    helpers that choose a code return (`failure_reason_code`, `_empty_reason`). A name used as a
    code (`ROW_ERROR`, `MISSING_INPUT`) is resolved to the string constant assigned to it.
    """
    constants: dict[str, set[str]] = {}
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in (ROOT / "tempo_eval").rglob("*.py")]
    codes: set[str] = set()
    code_names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                        constants.setdefault(target.id, set()).add(node.value.value)
                    elements = target.elts if isinstance(target, ast.Tuple) else [target]
                    for position, element in enumerate(elements):
                        if not _is_reason_target(element):
                            continue
                        value = node.value
                        if isinstance(value, ast.Tuple) and len(value.elts) == len(elements):
                            value = value.elts[position]
                        codes |= _code_values(value, code_names)
            elif isinstance(node, ast.Call):
                func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                argument = None
                if func == "not_measurable" and len(node.args) >= 2:
                    argument = node.args[1]
                elif func == "MetricResult":
                    argument = node.args[3] if len(node.args) >= 4 else next(
                        (k.value for k in node.keywords if k.arg == "reason_code"), None
                    )
                codes |= _code_values(argument, code_names)
            elif isinstance(node, ast.FunctionDef) and node.name in ("failure_reason_code", "_empty_reason"):
                for ret in (n for n in ast.walk(node) if isinstance(n, ast.Return)):
                    value = ret.value.elts[0] if isinstance(ret.value, ast.Tuple) else ret.value
                    codes |= _code_values(value, code_names)
    for name in code_names:
        codes |= constants.get(name, set())
    return frozenset(codes)


def test_the_reason_code_reader_finds_the_codes_of_every_kind_of_source():
    codes = reason_codes_in_code()
    # one of each way a code is written: a literal argument, a helper's return, a module constant,
    # a tuple-returning helper, an attribute assignment
    assert {"no_temporal_claims", "verifier_error", "missing_input", "row_error", "no_response_claims",
            "no_truths", "no_retrieval_context"} <= codes, codes


def test_every_reason_code_the_engine_gives_is_documented():
    documented = set(re.findall(r"`([a-z_]+)`", METRICS_DOC.read_text(encoding="utf-8")))
    missing = sorted(reason_codes_in_code() - documented)
    assert not missing, f"reason codes used in tempo_eval but not explained in docs/metrics.md: {missing}"

"""The documentation site holds together: it builds with `mkdocs build --strict` (no broken link,
no page missing from the navigation), every setting the code reads is in the settings table, the
command-line reference is what argparse prints, and the README stays a front page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

DOCS = ROOT / "docs"
SETTINGS_PAGE = DOCS / "operations" / "settings.md"
CLI_REFERENCE = DOCS / "reference" / "cli.md"
CODE = [ROOT / "app.py", *(ROOT / "tempo_eval").rglob("*.py"), *(ROOT / "tempo_eval_app").rglob("*.py"),
        *(ROOT / "views").rglob("*.py")]
SETTING = re.compile(r"\bTEMPO_EVAL_[A-Z0-9_]+\b")


def test_the_site_builds_strictly(tmp_path: Path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").exists()


def _settings_table() -> set[str]:
    """The settings named in the first column of the settings page's tables."""
    return set(re.findall(r"^\| `(TEMPO_EVAL_[A-Z0-9_]+)` \|", SETTINGS_PAGE.read_text(encoding="utf-8"), re.M))


def test_every_setting_the_code_reads_is_in_the_settings_table():
    read = {name for path in CODE for name in SETTING.findall(path.read_text(encoding="utf-8"))}
    assert read, "the scan found no setting: the pattern or the paths are wrong"
    missing = read - _settings_table()
    assert not missing, f"settings read by the code but not in docs/operations/settings.md: {sorted(missing)}"


def test_the_settings_table_names_only_settings_that_exist():
    used = {name for path in [*CODE, *(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
            for name in SETTING.findall(path.read_text(encoding="utf-8"))}
    stale = _settings_table() - used
    assert not stale, f"docs/operations/settings.md documents settings nothing reads: {sorted(stale)}"


def test_the_cli_reference_is_what_argparse_prints():
    from tempo_eval.cli.reference import cli_reference

    assert CLI_REFERENCE.read_text(encoding="utf-8") == cli_reference(), (
        "docs/reference/cli.md is stale: run .venv/bin/python -m tempo_eval.cli.reference > docs/reference/cli.md"
    )


def test_the_cli_reference_has_every_command():
    from tempo_eval.cli.parser import build_parser
    from tempo_eval.cli.reference import _subparsers

    text = CLI_REFERENCE.read_text(encoding="utf-8")
    for name, sub in _subparsers(build_parser()):
        assert f"## `tempo-eval {name}`" in text
        for child, _ in _subparsers(sub):
            assert f"## `tempo-eval {name} {child}`" in text


def test_the_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") <= 250
    for page in ("docs/guide/index.md", "docs/reference/cli.md", "docs/metrics.md", "docs/operations/index.md"):
        assert f"]({page})" in text, page


def test_every_page_of_the_dashboard_has_a_user_guide_page():
    app = (ROOT / "app.py").read_text(encoding="utf-8")
    views = re.findall(r'st\.Page\("views/(\w+)\.py"', app)
    assert views
    guide = {p.stem.replace("-", "_") for p in (DOCS / "guide").glob("*.md")}
    missing = [v for v in views if v not in guide]
    assert not missing, f"dashboard pages without a docs/guide page: {missing}"

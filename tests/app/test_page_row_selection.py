"""No page selects rows with a per-row `iloc` loop (issue 28)."""

from __future__ import annotations

from tests.support.paths import ROOT


def test_no_page_selects_rows_with_a_per_row_iloc_loop() -> None:
    # issue 28.9: `[i for i in range(len(frame)) if frame[c].iloc[i] == v]` cost 0.33 s a rerun at 20k rows
    import re

    root = ROOT
    pattern = re.compile(r"for \w+ in range\(len\(\w+\)\).*\.iloc\[|\.iloc\[\w+\][^\n]*for \w+ in \w+\[")
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("views", "tempo_eval_app")
        for path in sorted((root / folder).glob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


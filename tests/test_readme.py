"""The README's Python example runs as written and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_a_python_example():
    assert python_blocks()


def test_readme_python_example_runs_and_prints_the_values_its_comments_promise():
    for block in python_blocks():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), {})
        printed = out.getvalue().splitlines()
        promised = [
            re.search(r"#\s*(.+)$", line).group(1).strip()
            for line in block.splitlines()
            if line.startswith("print(") and "#" in line
        ]
        # every print with a comment promises its output (or its start, when the comment ends in ...)
        printing_lines = [line for line in block.splitlines() if line.startswith("print(")]
        assert len(printed) == len(printing_lines)
        for line, output in zip(printing_lines, printed, strict=True):
            if "#" not in line:
                continue
            expected = re.search(r"#\s*(.+)$", line).group(1).strip()
            if expected.endswith("..."):
                assert output.startswith(expected[:-3].rstrip()), (line, output)
            else:
                assert output == expected, (line, output)
        assert promised

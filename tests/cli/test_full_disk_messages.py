"""A full disk while the command line writes its results (`evaluate --out`, `compare --out`) is one
error line naming the file (issue 19.16)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.cli import run_cli


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("extension", ["csv", "jsonl", "parquet"])
def test_writing_results_to_a_full_disk_names_the_file(
    tmp_path: Path, extension: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text('{"query": "q in 2020", "retrieved_ids": ["a"], "gold_ids": ["a"]}\n', encoding="utf-8")
    out = tmp_path / f"results.{extension}"
    out.symlink_to("/dev/full")
    code, err = run_cli(["evaluate", str(data), "--metrics", "temporal_ndcg", "--out", str(out), "--no-progress"],
                        capsys)
    assert code == 2 and f"could not write {str(out)!r}: no space left on device" in err


# cli.cmd_compare: export.write_text_output(text, args.out), not Path.write_text
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_compare_output_to_a_full_disk_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.run").write_text(f"q1 Q0 d1 1 1.0 {name}\n", encoding="utf-8")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    out = tmp_path / "table.md"
    out.symlink_to("/dev/full")
    code, err = run_cli(["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                         str(tmp_path / "qrels.txt"), "--out", str(out)], capsys)
    assert code == 2 and f"could not write {str(out)!r}: no space left on device" in err


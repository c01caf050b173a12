"""Probe (issue 11): Parquet inputs with a struct or a wrong-typed column must exit with code 2
and one error line, every time, never abort (exit 134, "terminate called without an active
exception" from an Arrow worker thread still starting when the process exits).

    python bench/parquet_exit.py            # 20 runs per file
    python bench/parquet_exit.py --runs 100

Prints, per file, how many runs exited 2 and every other outcome.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(tempfile.mkdtemp(prefix="tempo_eval_parquet_exit_"))
    files = {
        "struct column": pa.table({"query": ["q1", "q2"], "answer": [{"a": 1}, {"a": 2}], "contexts": [["c"], ["d"]]}),
        "wrong-typed column": pa.table({"query": ["q1", "q2"], "answer": ["a", "b"], "contexts": [1.5, 2.5]}),
    }
    for label, table in files.items():
        path = folder / (label.replace(" ", "_") + ".parquet")
        pq.write_table(table, path)
        outcomes: collections.Counter[str] = collections.Counter()
        for _ in range(args.runs):
            done = subprocess.run(
                [sys.executable, "-m", "tempo_eval", "evaluate", str(path), "--metrics", "temporal_faithfulness",
                 "--out", str(folder / "out.csv"), "--workspace", str(folder / "ws"), "--no-progress"],
                cwd=REPO, capture_output=True, text=True,
            )
            lines = done.stderr.strip().splitlines()
            one_line = len(lines) == 1 and lines[0].startswith("error: ")
            outcomes[f"exit {done.returncode}" + ("" if one_line else f" ({done.stderr.strip()[-120:]!r})")] += 1
        print(f"{label}: {dict(outcomes)} of {args.runs} runs")


if __name__ == "__main__":
    main()

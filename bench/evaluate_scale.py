"""Benchmark (issue 27.3): `evaluate` at size, against TempoEval 0.1.0's regex extraction.

    python bench/evaluate_scale.py                    # 200,000 rows (~220 MB CSV), then a 1 GB file
    python bench/evaluate_scale.py --rows 20000 --gb 0 # a quick look

Rows of the issue's shape: a query naming a period, an answer with three dated statements, five
retrieved contexts of two dated sentences each (about 1.1 KB a row). The contexts are drawn from a
corpus of `--corpus-docs` documents, as retrieval from a document collection returns them (the
same document for many queries); `--corpus-docs 0` makes every context unique.

Measured, each in its own child process (time: wall clock of the child; peak memory: the child's
ru_maxrss, from os.wait4):

* ours: `python -m tempo_eval evaluate FILE --metric temporal_faithfulness --metric temporal_ndcg
  --out results.parquet --no-progress` with default options into a fresh workspace: the file
  streamed, the dataset and every result stored, the results written to --out.
* reference: a reimplementation, written for this bench, of TempoEval 0.1.0's regex focus-time
  extraction (`FocusTimeExtractor.extract` with its default REGEX method: explicit years
  1800-2099 matched by `\\b(1[89]\\d{2}|20\\d{2})\\b`, decades such as "the 1990s" matched
  case-insensitively and expanded to their ten years, the years kept as a set) over the same
  texts (query, answer and each context of every row), the rows read one at a time with the csv
  module. Its time counts the extraction only (not reading the file); it stores nothing.

Targets: ours at most 2x the reference's time, with peak memory at most 600 MB, for 200,000 rows
and for a 1 GB file. The machine is shared: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PLACES = ["bridge", "library", "harbour", "museum", "station", "cathedral", "stadium", "tower", "canal",
          "market", "theatre", "observatory"]
EVENTS = ["was founded", "was rebuilt", "was extended", "closed for repairs", "reopened", "was sold",
          "changed hands", "was listed as a monument", "burned down", "was modernised"]
PERIODS = [("the 1990s", 1990, 1999), ("the Cold War", 1947, 1991), ("World War II", 1939, 1945),
           ("the Great Depression", 1929, 1939), ("the 1960s", 1960, 1969), ("the 2000s", 2000, 2009)]


def _document(rng: random.Random, place: str) -> str:
    first, second = rng.randint(1850, 2020), rng.randint(1850, 2020)
    return (f"According to the city archive, the {place} {rng.choice(EVENTS)} in {first}, after a long "
            f"debate among the councillors about its cost and purpose. Records show that it "
            f"{rng.choice(EVENTS)} in {second}, when the surrounding district was redeveloped.")


def make_row(i: int, rng: random.Random, corpus: list[str] | None) -> list[str]:
    place = PLACES[i % len(PLACES)]
    period, low, high = PERIODS[i % len(PERIODS)]
    years = sorted(rng.randint(low, high) for _ in range(3))
    query = f"What happened to the {place} during {period}?"
    answer = (f"The {place} {rng.choice(EVENTS)} in {years[0]}. Later, in {years[1]}, it "
              f"{rng.choice(EVENTS)}. By {years[2]} it {rng.choice(EVENTS)}.")
    if corpus:
        contexts = [corpus[rng.randrange(len(corpus))] for _ in range(5)]
    else:
        contexts = [_document(rng, place) for _ in range(5)]
    return [f"q{i + 1}", query, answer, json.dumps(contexts)]


def write_csv(path: Path, *, rows: int | None = None, min_bytes: int | None = None, corpus_docs: int, seed: int) -> int:
    """Write rows until `rows` rows or `min_bytes` bytes; returns the row count."""
    import csv

    rng = random.Random(seed)
    corpus = [_document(rng, PLACES[d % len(PLACES)]) for d in range(corpus_docs)] if corpus_docs else None
    n = 0
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["query_id", "query", "answer", "contexts"])
        while (rows is not None and n < rows) or (min_bytes is not None and out.tell() < min_bytes):
            writer.writerow(make_row(n, rng, corpus))
            n += 1
    return n


#: the reference, run in a child process: TempoEval 0.1.0's regex extraction reimplemented
REFERENCE = textwrap.dedent(r'''
    import csv, json, re, sys, time
    # TempoEval 0.1.0, FocusTimeExtractor (REGEX method), reimplemented for this benchmark
    YEAR = re.compile(r"\b(1[89]\d{2}|20\d{2})\b")
    DECADE = re.compile(r"\b(?:the\s+)?(1[89]\d0|20\d0)s\b", re.IGNORECASE)

    def extract(text):
        years = {int(y) for y in YEAR.findall(text)}
        for decade in DECADE.findall(text):
            years.update(range(int(decade), int(decade) + 10))
        return years

    csv.field_size_limit(10**8)
    spent = 0.0
    n = 0
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader)
        for _, query, answer, contexts in reader:
            texts = [query, answer, *json.loads(contexts)]
            start = time.perf_counter()
            qft = extract(query)
            aft = extract(answer)
            dfts = [extract(t) for t in texts[2:]]
            spent += time.perf_counter() - start
            n += 1
    print(json.dumps({"seconds": spent, "rows": n}))
''')


def run_measured(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str, str]:
    """(wall seconds, peak resident MB (ru_maxrss of this child alone), stdout, stderr)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command[:5])} failed ({process.returncode}):\n{stderr[-3000:]}")
    return wall, usage.ru_maxrss / 1024, stdout, stderr


def measure(path: Path, label: str, workdir: Path) -> dict[str, float]:
    size_mb = path.stat().st_size / 1e6
    print(f"\n== {label}: {path.name}, {size_mb:,.0f} MB; load average {os.getloadavg()[0]:.2f}", flush=True)
    ref_wall, ref_peak, ref_out, _ = run_measured([sys.executable, "-c", REFERENCE, str(path)])
    reference = json.loads(ref_out)
    print(f"reference (TempoEval 0.1.0 regex, reimplemented): {reference['seconds']:8.1f} s extraction "
          f"({ref_wall:.1f} s with reading the file), peak {ref_peak:6.0f} MB, {reference['rows']:,} rows", flush=True)

    workspace = workdir / f"workspace-{label}"
    env = {**os.environ, "TEMPO_EVAL_HOME": str(workspace)}
    env.pop("TEMPO_EVAL_MAX_INPUT_MB", None)
    out = workdir / f"results-{label}.parquet"
    command = [sys.executable, "-m", "tempo_eval", "evaluate", str(path), "--metric", "temporal_faithfulness",
               "--metric", "temporal_ndcg", "--out", str(out), "--no-progress"]
    wall, peak, _, stderr = run_measured(command, env)
    store_mb = sum(p.stat().st_size for p in workspace.iterdir()) / 1e6
    rows = reference["rows"]
    print(f"ours (evaluate, everything stored):               {wall:8.1f} s, peak {peak:6.0f} MB, "
          f"{rows / wall:,.0f} rows/s; workspace {store_mb:,.0f} MB", flush=True)
    print(textwrap.indent(stderr.strip()[-600:], "    "))
    ratio = wall / reference["seconds"]
    print(f"ratio time ours / reference: {ratio:5.2f}x (target <= 2x)  peak {peak:,.0f} MB (target <= 600 MB)"
          f"  -> {'met' if ratio <= 2 and peak <= 600 else 'NOT met'}; load average after {os.getloadavg()[0]:.2f}",
          flush=True)
    return {"ratio": ratio, "peak": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the first file (0: skip it)")
    parser.add_argument("--gb", type=float, default=1.0, help="size of the second file in GB (0: skip)")
    parser.add_argument("--corpus-docs", type=int, default=50_000,
                        help="distinct documents the contexts are drawn from (0: every context unique)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="tempo_eval_scale_"))
    print(f"work directory {workdir}; {os.cpu_count()} CPUs; corpus of {args.corpus_docs:,} documents")
    try:
        if args.rows > 0:
            data = workdir / "rows.csv"
            n = write_csv(data, rows=args.rows, corpus_docs=args.corpus_docs, seed=args.seed)
            print(f"{n:,} rows, {data.stat().st_size / n:,.0f} bytes a row")
            measure(data, f"{n // 1000}k", workdir)
            data.unlink()
        if args.gb > 0:
            big = workdir / "big.csv"
            n = write_csv(big, min_bytes=int(args.gb * 1e9), corpus_docs=args.corpus_docs, seed=args.seed + 1)
            print(f"\n{n:,} rows in {big.stat().st_size / 1e9:.2f} GB")
            measure(big, f"{args.gb:g}GB", workdir)
    finally:
        if not args.keep:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Benchmark (issue 27.3): `evaluate` at size, against TempoEval 0.1.0's regex extraction.

    python bench/evaluate_scale.py                    # 200,000 rows (~220 MB CSV), then a 1 GB file
    python bench/evaluate_scale.py --rows 20000 --gb 0 # a quick look

Rows of the issue's shape: a query naming a period, an answer with three dated statements, five
retrieved contexts of two dated sentences each (about 1.1 KB a row). The contexts are drawn from a
corpus of `--corpus-docs` documents, as retrieval from a document collection returns them (the
same document for many queries); `--corpus-docs 0` makes every context unique.

Measured, each in its own child process (time: wall clock of the child; peak memory: the peak of
the sum of the proportional set sizes (PSS, /proc/PID/smaps_rollup) of the child and all its
descendants, sampled every 50 ms: the scoring worker processes count, and memory they share is
counted once; the child's own ru_maxrss, from os.wait4, is printed beside it):

* ours: `python -m tempo_eval evaluate FILE --metric temporal_faithfulness --metric temporal_ndcg
  --out results.parquet --no-progress` with default options into a fresh workspace: the file
  streamed, the dataset and every result stored, the results written to --out. The default
  `--processes` scores in worker processes, one per usable CPU (at most 4); `--processes auto,1`
  measures the default and one process in the same run.
* reference: a reimplementation, written for this bench, of TempoEval 0.1.0's regex focus-time
  extraction (`FocusTimeExtractor.extract` with its default REGEX method: explicit years
  1800-2099 matched by `\\b(1[89]\\d{2}|20\\d{2})\\b`, decades such as "the 1990s" matched
  case-insensitively and expanded to their ten years, the years kept as a set) over the same
  texts (query, answer and each context of every row), the rows read one at a time with the csv
  module. Its time counts the extraction only (not reading the file); it stores nothing.

Before measuring, each tree's modules are compiled to bytecode (`compile_bytecode`), as an
installed package has them.

Targets: ours at most 2x the reference's time, with peak memory at most 600 MB, for 200,000 rows
and for a 1 GB file. The machine is shared: the load average is printed before and after.

With `--db postgresql://user@host:port/database`, each turn of ours runs again with the workspace
database on that PostgreSQL server (`TEMPO_EVAL_DB`; a new database made for the turn beside the
one named, dropped after), and prints its time against the SQLite turn's just before (target:
at most 1.3x) and its peak memory (the same 600 MB bound).

    python bench/evaluate_scale.py --gb 0 --db postgresql://postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
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


def compile_bytecode(tree: Path) -> None:
    """Compile the tree's modules to bytecode first, as an installed package has them (pip compiles
    at install; Python writes them on a clone's first run): where the environment sets
    PYTHONDONTWRITEBYTECODE, each measured run would otherwise compile every module of ours again,
    in the main process and in the scoring workers' fork server (0.3-0.7 s each)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "tempo_eval")], env=env, check=True)


def _descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from each task's /proc/PID/task/TID/children)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as children:
                    todo.extend(int(child) for child in children.read().split())
            except OSError:
                pass
    return found


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds `pid` has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


class TreeMemory:
    """The peak of the summed PSS of a process and its descendants, sampled every `every` seconds
    in a thread, the most processes seen at once, and the CPU seconds each used (last sample)."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        self.pid, self.every = pid, every
        self.peak_kb = 0
        self.processes = 0
        self.cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            pids = _descendants(self.pid)
            self.processes = max(self.processes, len(pids))
            self.peak_kb = max(self.peak_kb, sum(_pss_kb(pid) for pid in pids))
            for pid in pids:
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), _cpu_seconds(pid))
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_measured(command: list[str], env: dict[str, str] | None = None, cwd: Path = REPO) -> dict[str, object]:
    """wall (seconds), peak (MB: the process tree's summed PSS), maxrss (MB: ru_maxrss of the child
    alone), processes (the most in the tree at once), cpu (CPU seconds of the child, from wait4),
    cpu_others (of its descendants, sampled), stdout, stderr."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        tree = TreeMemory(process.pid)  # the child is not reaped before wait4: its /proc stays
        _, status, usage = os.wait4(process.pid, 0)
        tree.stop()
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command[:5])} failed ({process.returncode}):\n{stderr[-3000:]}")
    others = sum(seconds for pid, seconds in tree.cpu.items() if pid != process.pid)
    return {"wall": wall, "peak": tree.peak_kb / 1024, "maxrss": usage.ru_maxrss / 1024,
            "processes": tree.processes, "cpu": usage.ru_utime + usage.ru_stime, "cpu_others": others,
            "stdout": stdout, "stderr": stderr}


def _fresh_database(url: str, name: str) -> str:
    """A new, empty database `name` on the server of `url`; returns its URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name}")
        connection.execute(f"CREATE DATABASE {name}")
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def _drop_database(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name}")


def _on_postgres(command: list[str], env: dict[str, str], tree: Path, db_url: str, tag: str, sqlite_wall: float) -> None:
    """The same evaluation with the workspace database on PostgreSQL; its time against SQLite's."""
    name = "bench_" + "".join(c if c.isalnum() else "_" for c in tag).lower()
    url = _fresh_database(db_url, name)
    try:
        ours = run_measured(command, {**env, "TEMPO_EVAL_DB": url}, cwd=tree)
    finally:
        _drop_database(db_url, name)
    wall, peak = float(ours["wall"]), float(ours["peak"])  # type: ignore[arg-type]
    print(f"ours on PostgreSQL (TEMPO_EVAL_DB): {wall:8.1f} s, peak {peak:6.0f} MB (PSS; ru_maxrss {ours['maxrss']:.0f}"
          f" MB); CPU {ours['cpu']:.1f} s in the main process, {ours['cpu_others']:.1f} s in the others", flush=True)
    print(textwrap.indent(str(ours["stderr"]).strip()[-600:], "    "))
    ratio = wall / sqlite_wall
    print(f"ratio time PostgreSQL / SQLite: {ratio:5.2f}x (target <= 1.3x)  peak {peak:,.0f} MB (target <= 600 MB)"
          f"  -> {'met' if ratio <= 1.3 and peak <= 600 else 'NOT met'}", flush=True)


def measure(path: Path, label: str, workdir: Path, processes: list[str], trees: list[Path] | None = None,
            repeat: int = 1, db_url: str | None = None) -> dict[str, float]:
    size_mb = path.stat().st_size / 1e6
    print(f"\n== {label}: {path.name}, {size_mb:,.0f} MB; load average {os.getloadavg()[0]:.2f}", flush=True)
    found: dict[tuple[str, Path], list[float]] = {}  # ratios to the reference, turn by turn
    trees = trees or [REPO]
    # each repetition measures the reference again, then every setting and tree in turn: a ratio
    # is taken against the reference of its own repetition, measured moments before
    turns = [(repetition, setting, tree) for repetition in range(repeat) for setting in processes for tree in trees]
    walls: dict[tuple[str, Path], list[float]] = {}
    cpus: dict[tuple[str, Path], list[float]] = {}  # CPU seconds of the main process
    reference: dict[str, float] = {}
    for turn, (repetition, setting, tree) in enumerate(turns):
        if turn == 0 or turns[turn - 1][0] != repetition:
            ref = run_measured([sys.executable, "-c", REFERENCE, str(path)])
            reference = json.loads(str(ref["stdout"]))
            print(f"reference (TempoEval 0.1.0 regex, reimplemented){f', turn {repetition + 1}' if repeat > 1 else ''}: "
                  f"{reference['seconds']:8.1f} s extraction ({ref['wall']:.1f} s with reading the file), peak "
                  f"{ref['peak']:6.0f} MB (PSS; ru_maxrss {ref['maxrss']:.0f} MB), {reference['rows']:,} rows",
                  flush=True)
        tag = f"{label}-{turn}-p{setting}"  # a fresh workspace each time: a setting measured twice computes twice
        workspace = workdir / f"workspace-{tag}"
        env = {**os.environ, "TEMPO_EVAL_HOME": str(workspace)}
        env.pop("TEMPO_EVAL_MAX_INPUT_MB", None)
        env.pop("TEMPO_EVAL_DB", None)
        out = workdir / f"results-{tag}.parquet"
        command = [sys.executable, "-m", "tempo_eval", "evaluate", str(path), "--metric", "temporal_faithfulness",
                   "--metric", "temporal_ndcg", "--out", str(out), "--no-progress"]
        if setting != "auto":
            command += ["--processes", setting]
        ours = run_measured(command, env, cwd=tree)
        wall, peak = float(ours["wall"]), float(ours["peak"])  # type: ignore[arg-type]
        walls.setdefault((setting, tree), []).append(wall)
        cpus.setdefault((setting, tree), []).append(float(ours["cpu"]))  # type: ignore[arg-type]
        store_mb = sum(p.stat().st_size for p in workspace.iterdir()) / 1e6
        rows = reference["rows"]
        which = f" from {tree}" if len(trees) > 1 else ""
        print(f"ours (evaluate --processes {setting}{which}, everything stored): {wall:8.1f} s, peak {peak:6.0f} MB "
              f"(process tree, PSS; ru_maxrss of the main process {ours['maxrss']:.0f} MB), "
              f"{ours['processes']} processes, {rows / wall:,.0f} rows/s; workspace {store_mb:,.0f} MB; CPU "
              f"{ours['cpu']:.1f} s in the main process, {ours['cpu_others']:.1f} s in the others", flush=True)
        print(textwrap.indent(str(ours["stderr"]).strip()[-600:], "    "))
        ratio = wall / reference["seconds"]
        print(f"ratio time ours (--processes {setting}) / reference: {ratio:5.2f}x (target <= 2x)  peak "
              f"{peak:,.0f} MB (target <= 600 MB)  -> {'met' if ratio <= 2 and peak <= 600 else 'NOT met'}; "
              f"load average after {os.getloadavg()[0]:.2f}", flush=True)
        found.setdefault((setting, tree), []).append(ratio)
        if db_url:
            _on_postgres(command, {**env, "TEMPO_EVAL_HOME": str(workspace) + "-pg"}, tree, db_url, tag, wall)
    for setting in processes:
        for tree in trees:
            which = f" from {tree}" if len(trees) > 1 else ""
            print(f"--processes {setting}{which}: median of {repeat} turn(s): ratio to the reference "
                  f"{statistics.median(found[(setting, tree)]):.2f}x, "
                  f"main process CPU {statistics.median(cpus[(setting, tree)]):.1f} s", flush=True)
    if len(trees) > 1:  # the same file, the trees measured in turn: their ratio, turn by turn
        for setting in processes:
            first = walls[(setting, trees[0])]
            for other in trees[1:]:
                ratios = [a / b for a, b in zip(first, walls[(setting, other)], strict=True)]
                cpu_ratios = [a / b for a, b in zip(cpus[(setting, trees[0])], cpus[(setting, other)], strict=True)]
                print(f"--processes {setting}: {trees[0]} / {other}: wall ratio per turn "
                      f"{', '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f}); sums "
                      f"{sum(first):.1f} s / {sum(walls[(setting, other)]):.1f} s = "
                      f"{sum(first) / sum(walls[(setting, other)]):.2f}; main process CPU ratio per turn "
                      f"{', '.join(f'{r:.2f}' for r in cpu_ratios)} (median {statistics.median(cpu_ratios):.2f})",
                      flush=True)
    return {setting: statistics.median(found[(setting, trees[0])]) for setting in processes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the first file (0: skip it)")
    parser.add_argument("--gb", type=float, default=1.0, help="size of the second file in GB (0: skip)")
    parser.add_argument("--corpus-docs", type=int, default=50_000,
                        help="distinct documents the contexts are drawn from (0: every context unique)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--processes", default="auto", metavar="P,Q",
                        help="evaluate's --processes for ours, each measured in turn (default auto: "
                             "the command's default); e.g. auto,1")
    parser.add_argument("--against", type=Path, metavar="TREE",
                        help="also evaluate with the code of another checkout (e.g. the main branch), in turn "
                             "with this one on the same file, and print their ratio")
    parser.add_argument("--repeat", type=int, default=1, help="measure each setting (and tree) this many times, in turn")
    parser.add_argument("--db", metavar="URL", help="also evaluate into PostgreSQL (a postgresql:// URL of a database "
                        "on the server; each turn makes and drops a database of its own there)")
    args = parser.parse_args()
    trees = [REPO, args.against.resolve()] if args.against else [REPO]
    for tree in trees:
        compile_bytecode(tree)

    workdir = Path(tempfile.mkdtemp(prefix="tempo_eval_scale_"))
    processes = [p.strip() for p in args.processes.split(",") if p.strip()]
    print(f"work directory {workdir}; {os.cpu_count()} CPUs ({len(os.sched_getaffinity(0))} usable); "
          f"corpus of {args.corpus_docs:,} documents")
    try:
        if args.rows > 0:
            data = workdir / "rows.csv"
            n = write_csv(data, rows=args.rows, corpus_docs=args.corpus_docs, seed=args.seed)
            print(f"{n:,} rows, {data.stat().st_size / n:,.0f} bytes a row")
            measure(data, f"{n // 1000}k", workdir, processes, trees, args.repeat, args.db)
            data.unlink()
        if args.gb > 0:
            big = workdir / "big.csv"
            n = write_csv(big, min_bytes=int(args.gb * 1e9), corpus_docs=args.corpus_docs, seed=args.seed + 1)
            print(f"\n{n:,} rows in {big.stat().st_size / 1e9:.2f} GB")
            measure(big, f"{args.gb:g}GB", workdir, processes, trees, args.repeat, args.db)
    finally:
        if not args.keep:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()

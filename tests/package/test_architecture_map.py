"""The map of docs/architecture.md and the code agree: every module of `tempo_eval/`,
`tempo_eval_app/`, `views/` and `app.py` has one floor in the map, every entry of the map names
code that exists, and no import (at the top or inside a function, read with `ast`: nothing is
imported) runs from a module to one on a higher floor, nor round a cycle. The engine never
imports streamlit or the dashboard.

The map is the fenced block under the heading "## The map": one `path  floor` per line, a path
ending in `/` covering every module below it, `ground` the floor under floor 0.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
CODE_ROOTS = ("tempo_eval", "tempo_eval_app", "views")
DASHBOARD = ("streamlit", "tempo_eval_app", "views", "app")


def read_map(text: str) -> dict[str, int]:
    """The entries of the map in `text` (docs/architecture.md): path -> floor (ground is -1)."""
    section = re.search(r"^## The map\b.*?^```[a-z]*\n(.*?)^```", text, re.S | re.M)
    assert section, "docs/architecture.md has no '## The map' section with a fenced block of `path  floor` lines"
    entries: dict[str, int] = {}
    for number, line in enumerate(section.group(1).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.split()
        assert len(fields) == 2 and (fields[1] == "ground" or fields[1].isdigit()), (
            f"docs/architecture.md, the map's line {number}: expected `path  floor` (a floor number or "
            f"'ground'), found {line!r}")
        assert fields[0] not in entries, f"docs/architecture.md, the map: {fields[0]} is listed twice"
        entries[fields[0]] = -1 if fields[1] == "ground" else int(fields[1])
    return entries


def code_files(root: Path) -> list[str]:
    """Every module of the engine and the dashboard, as a path relative to `root`."""
    files = [p for top in CODE_ROOTS for p in (root / top).rglob("*.py")] + [root / "app.py"]
    return sorted(p.relative_to(root).as_posix() for p in files if p.exists())


def module_name(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def floors_of(files: list[str], entries: dict[str, int]) -> tuple[dict[str, int], list[str]]:
    """Each file's floor, and the disagreements: a file the map does not cover, or covers twice,
    and an entry that covers no file."""
    floors: dict[str, int] = {}
    problems: list[str] = []
    used: set[str] = set()
    for path in files:
        covering = [e for e in entries if e == path or (e.endswith("/") and path.startswith(e))]
        if not covering:
            problems.append(f"{path} is not in the map of docs/architecture.md: add it with its floor")
        elif len(covering) > 1:
            problems.append(f"{path} is in the map twice ({', '.join(covering)}): keep one entry")
        else:
            floors[path] = entries[covering[0]]
            used.add(covering[0])
    problems += [f"the map of docs/architecture.md lists {e}, which is no module or package: remove it"
                 for e in entries if e not in used]
    return floors, problems


@functools.cache
def imports_of(text: str, path: str, modules: frozenset[str]) -> list[tuple[int, str]]:
    """(line, module) for each import in `text`, the module at `path`, of a module among `modules`,
    or of anything else by its dotted name. `from package import module` is an import of the module."""
    tree = ast.parse(text, filename=path)
    package = module_name(path).split(".")
    if not path.endswith("__init__.py"):
        package = package[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            for alias in node.names:
                found.append((node.lineno, f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base))
    return found


def resolve(name: str, modules: frozenset[str]) -> str | None:
    """The module of ours that `name` names (its longest dotted prefix that is one), or None."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def check(map_text: str, changed: dict[str, str] | None = None) -> list[str]:
    """Every disagreement between the code and the map in `map_text`; `changed` replaces or adds
    modules' text (path -> text), as a scratch copy of the code would."""
    changed = changed or {}
    files = sorted({*code_files(ROOT), *changed})
    texts = {p: changed[p] if p in changed else (ROOT / p).read_text(encoding="utf-8") for p in files}
    floors, problems = floors_of(files, read_map(map_text))
    by_module = {module_name(p): p for p in files}
    modules = frozenset(by_module)
    graph: dict[str, set[str]] = {p: set() for p in files}
    for path in files:
        for line, name in imports_of(texts[path], path, modules):
            if path.startswith("tempo_eval/") and name.split(".")[0] in DASHBOARD:
                problems.append(f"{path}:{line} imports {name}: the engine never imports streamlit or the dashboard")
            target = resolve(name, modules)
            if target is None or by_module[target] == path:
                continue
            graph[path].add(by_module[target])
            low, high = floors.get(path), floors.get(by_module[target])
            if low is not None and high is not None and high > low:
                problems.append(
                    f"{path}:{line} (floor {_floor(low)}) imports {target} ({by_module[target]}, floor "
                    f"{_floor(high)}): an import up a floor; move the shared piece down")
    problems += [f"import cycle: {' -> '.join(cycle)}" for cycle in _cycles(graph)]
    return problems


def _floor(floor: int) -> str:
    return "ground" if floor < 0 else str(floor)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan; the graph is a few hundred modules deep at most
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [[*group, group[0]] for group in groups]


MAP = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _source(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def test_the_code_and_the_map_of_docs_architecture_agree() -> None:
    problems = check(MAP)
    assert problems == [], "\n".join(problems)


def test_the_map_names_every_package_of_the_engine_and_the_dashboard() -> None:
    files = code_files(ROOT)
    assert len(files) > 150 and "app.py" in files and "tempo_eval/jobs/uploads.py" in files
    assert {e.split("/")[0] for e in read_map(MAP)} == {"tempo_eval", "tempo_eval_app", "views", "app.py"}


def test_a_module_missing_from_the_map_is_named() -> None:
    problems = check(MAP, {"tempo_eval/stray.py": '"""A module nobody placed."""\n'})
    assert problems == ["tempo_eval/stray.py is not in the map of docs/architecture.md: add it with its floor"]


def test_an_entry_with_no_module_is_named() -> None:
    block = MAP.index("```", MAP.index("## The map"))
    line_end = MAP.index("\n", block) + 1
    text = MAP[:line_end] + "tempo_eval/engine/retired.py  7\n" + MAP[line_end:]
    assert check(text) == ["the map of docs/architecture.md lists tempo_eval/engine/retired.py, which is no "
                           "module or package: remove it"]


def test_an_import_up_a_floor_is_named_even_inside_a_function() -> None:
    text = _source("tempo_eval/io/errors.py").rstrip("\n")
    late = text + "\n\n\ndef _late():\n    from tempo_eval.store import runs\n    return runs\n"
    problems = check(MAP, {"tempo_eval/io/errors.py": late})
    assert problems[0] == (f"tempo_eval/io/errors.py:{text.count(chr(10)) + 5} (floor 3) imports "
                           "tempo_eval.store.runs (tempo_eval/store/runs.py, floor 4): an import up a floor; "
                           "move the shared piece down")
    assert all(p.startswith("import cycle: ") for p in problems[1:])  # the store reads through io/errors


def test_the_engine_importing_the_dashboard_is_named() -> None:
    job = _source("tempo_eval/jobs/uploads.py") + "\nimport streamlit as st  # noqa\n"
    problems = check(MAP, {"tempo_eval/jobs/uploads.py": job})
    assert len(problems) == 1 and "imports streamlit: the engine never imports streamlit or the dashboard" in problems[0]


def test_an_import_cycle_on_one_floor_is_named() -> None:
    errors = _source("tempo_eval/io/errors.py") + "\nfrom tempo_eval.io import mapping  # noqa\n"
    problems = check(MAP, {"tempo_eval/io/errors.py": errors})
    assert problems and all(p.startswith("import cycle: ") for p in problems)
    assert any("tempo_eval/io/errors.py" in p and "tempo_eval/io/mapping.py" in p for p in problems)


def test_only_the_worker_runs_the_page_jobs() -> None:
    """The engine's page jobs (`tempo_eval/jobs/`) are run by the command line's worker alone; the
    dashboard only queues them."""
    files = code_files(ROOT)
    modules = frozenset(module_name(p) for p in files)
    importers = sorted(p for p in files if not p.startswith("tempo_eval/jobs/")
                       and any((resolve(n, modules) or "").startswith("tempo_eval.jobs")
                               for _, n in imports_of(_source(p), p, modules)))
    assert importers == ["tempo_eval/cli/job.py"]


def test_the_trec_ranking_rule_sits_below_readers_and_metrics() -> None:
    modules = frozenset(module_name(p) for p in code_files(ROOT))
    for user in ("tempo_eval/io/trec_stream.py", "tempo_eval/metrics/ndcg.py"):
        assert "tempo_eval.core.ranking" in {resolve(n, modules) for _, n in imports_of(_source(user), user, modules)}
    ranking = "tempo_eval/core/ranking.py"
    assert [n for _, n in imports_of(_source(ranking), ranking, modules) if n.startswith("tempo_eval")] == []

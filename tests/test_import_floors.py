"""The floors of docs/architecture.md, checked on the code: every import of every module under
`tempo_eval/`, at the top or inside a function, read with `ast` (nothing is imported).

The engine never imports the dashboard (streamlit, `tempo_eval_app`, `views`); the readers (`io`)
and the metrics never climb to the floors above them; the storage primitives of floor 0 import
only the ground; the worker's page jobs (`tempo_eval.jobs`) are the engine's and only the
command line's worker runs them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "tempo_eval"
GROUND = ("tempo_eval.schema", "tempo_eval.packed_details", "tempo_eval._values", "tempo_eval._async",
          "tempo_eval._secrets", "tempo_eval._process", "tempo_eval._extras")
#: floor 0 of the store: the workspace database and what is built on it alone
STORE_FLOOR_0 = ("tempo_eval.store.db", "tempo_eval.store.packing", "tempo_eval.store.verdict_cache",
                 "tempo_eval.store.jobs", "tempo_eval.store.job_files", "tempo_eval.store.errors",
                 "tempo_eval.store.dialect", "tempo_eval.store.pg", "tempo_eval.store.migrations",
                 "tempo_eval.store.copy")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """The modules `path` imports anywhere in its text (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return found


MODULES = {_module_name(p): _imports(p) for p in sorted(ENGINE.rglob("*.py"))}


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _breaking(importers: tuple[str, ...], forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    return sorted(f"{module} imports {target}" for module, targets in MODULES.items() if _within(module, importers)
                  for target in targets if _within(target, forbidden) and not _within(target, allowed))


@pytest.mark.parametrize("module", GROUND)
def test_the_ground_imports_nothing_of_the_engine(module: str) -> None:
    assert {t for t in MODULES[module] if _within(t, ("tempo_eval",))} == set()


def test_every_module_of_the_engine_is_read() -> None:
    assert len(MODULES) > 100 and "tempo_eval.jobs.uploads" in MODULES and "tempo_eval.io.trec_dataset" in MODULES


def test_the_engine_never_imports_the_dashboard() -> None:
    assert _breaking(("tempo_eval",), ("streamlit", "tempo_eval_app", "views", "app")) == []


def test_the_readers_never_climb_to_metrics_store_or_engines() -> None:
    above = ("tempo_eval.metrics", "tempo_eval.store", "tempo_eval.scoring", "tempo_eval.runner",
             "tempo_eval.distributed", "tempo_eval.cli", "tempo_eval.jobs", "tempo_eval.trec_scores",
             "tempo_eval.comparison_store", "tempo_eval.compare", "tempo_eval.viz")
    assert _breaking(("tempo_eval.io",), above, allowed=STORE_FLOOR_0) == []


def test_the_metrics_never_import_readers_store_or_engines() -> None:
    above = ("tempo_eval.io", "tempo_eval.store", "tempo_eval.scoring", "tempo_eval.runner",
             "tempo_eval.distributed", "tempo_eval.cli", "tempo_eval.jobs", "tempo_eval.trec_scores",
             "tempo_eval.comparison_store", "tempo_eval.compare")
    assert _breaking(("tempo_eval.metrics",), above) == []


@pytest.mark.parametrize("module", STORE_FLOOR_0)
def test_the_store_floor_0_imports_only_the_ground_and_itself(module: str) -> None:
    engine = {t for t in MODULES[module] if _within(t, ("tempo_eval",))}
    assert {t for t in engine if not _within(t, (*GROUND, *STORE_FLOOR_0, "tempo_eval.store"))} == set()
    assert {t for t in engine if _within(t, ("tempo_eval.store",)) and not _within(t, STORE_FLOOR_0)
            and t != "tempo_eval.store"} == set()


def test_only_the_worker_runs_the_page_jobs() -> None:
    importers = sorted(m for m, targets in MODULES.items() if any(_within(t, ("tempo_eval.jobs",)) for t in targets)
                       and not _within(m, ("tempo_eval.jobs",)))
    assert importers == ["tempo_eval.cli.job"]


def test_the_trec_ranking_rule_sits_below_readers_and_metrics() -> None:
    assert "tempo_eval.core.ranking" in MODULES["tempo_eval.io.trec_stream"]
    assert "tempo_eval.core.ranking" in MODULES["tempo_eval.metrics.ndcg"]
    assert _breaking(("tempo_eval.core.ranking",), ("tempo_eval",)) == []

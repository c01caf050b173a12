"""Load a script under tests/data as a module, by path: nothing is added to sys.path (bench/ on
sys.path once let bench/ray.py shadow the ray package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_script(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

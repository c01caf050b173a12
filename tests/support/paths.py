"""Where things are, for tests in any folder under tests/: the checkout's root and the tests folder.

Tests compute paths from these, never from their own `__file__` (a test moved one folder down
would silently point one folder too high)."""

from __future__ import annotations

from pathlib import Path

#: the repository root (app.py, data/, docs/, bench/)
ROOT = Path(__file__).resolve().parents[2]
#: tests/ (data/, support/)
TESTS = ROOT / "tests"

"""Optional parts of the install: a feature whose extra is missing says which extra to install.

The base install (`pip install tempo-eval`) is the engine's offline path; the model stack, the judge,
the dashboard and Ray come as extras (pyproject.toml). The check is by import spec, so the heavy
package itself is not imported to find out.
"""

from __future__ import annotations

import importlib.util


class MissingExtra(ValueError):
    """A feature needs a package of an extra that is not installed."""


def require_extra(module: str, extra: str, feature: str) -> None:
    """Raise MissingExtra naming `extra` when `module` cannot be imported."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise MissingExtra(
            f"{feature} needs the {module} package, which is not installed: install the [{extra}] extra "
            f"(pip install 'tempo-eval[{extra}]')."
        )

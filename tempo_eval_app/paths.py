"""Paths typed into the app, confined to allowed folders.

The app reads files on the machine it runs on when a user names them (run files on Compare).
Anyone who can open the page could otherwise read any file the app's user can, so a typed path
must lie inside an allowed folder once every link is resolved:

- the workspace (`TEMPO_EVAL_HOME`, default ~/.tempo_eval) and the bundled `data/` folder;
- the folders listed in the environment variable `TEMPO_EVAL_ALLOWED_DIRS` (separated by the
  system's path separator, ":" on Linux).

A path with a `..` part is refused as typed, and so is a link that leads outside (the check is on
the resolved path). Refusals are `PathRefused` (a ValueError) with a message that says why and
which folders are allowed. No engine import here: the Evaluate page reuses it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

ALLOWED_ENV = "TEMPO_EVAL_ALLOWED_DIRS"
ROOT = Path(__file__).resolve().parents[1]


class PathRefused(ValueError):
    """A typed path the app will not read, with the reason."""


def allowed_roots() -> list[Path]:
    """The folders typed paths may lie in, resolved: workspace, data/, then TEMPO_EVAL_ALLOWED_DIRS."""
    workspace = Path(os.environ.get("TEMPO_EVAL_HOME") or Path.home() / ".tempo_eval")
    roots = [workspace, ROOT / "data"]
    roots += [Path(part).expanduser() for part in os.environ.get(ALLOWED_ENV, "").split(os.pathsep) if part.strip()]
    resolved: list[Path] = []
    for root in roots:
        path = root.resolve()
        if path not in resolved:
            resolved.append(path)
    return resolved


def _where() -> str:
    return ", ".join(str(root) for root in allowed_roots()) + f" (add folders with {ALLOWED_ENV})"


def confine(text: str, roots: Sequence[Path] | None = None) -> Path:
    """The resolved path `text` names, when it exists and lies in an allowed folder; else PathRefused."""
    typed = str(text).strip()
    if not typed:
        raise PathRefused("no path given; type the path of a file or folder on this machine")
    path = Path(typed).expanduser()
    if ".." in path.parts:
        raise PathRefused(f"{typed!r} contains '..'; type the path without it (allowed folders: {_where()})")
    if not path.is_absolute():
        path = Path.cwd() / path
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        raise PathRefused(f"{typed!r} does not exist on this machine") from None
    except (OSError, RuntimeError) as error:  # a link loop, a permission
        raise PathRefused(f"{typed!r} cannot be opened ({getattr(error, 'strerror', None) or error})") from None
    inside = roots if roots is not None else allowed_roots()
    if not any(resolved == root or resolved.is_relative_to(root) for root in inside):
        shown = f"{typed!r}" + (f" (a link to {str(resolved)!r})" if resolved != path.absolute() else "")
        raise PathRefused(f"{shown} is outside the folders the app may read: {_where()}")
    return resolved


def files_named(text: str, roots: Sequence[Path] | None = None) -> list[Path]:
    """The regular files a typed path names: the file itself, or the files of a folder (not its
    subfolders, nor hidden files), each confined as `confine` does; PathRefused otherwise."""
    path = confine(text, roots)
    if path.is_dir():
        files = []
        for child in sorted(path.iterdir()):
            if child.name.startswith("."):
                continue
            inner = confine(str(child), roots)
            if stat.S_ISREG(inner.stat().st_mode):
                files.append(inner)
        if not files:
            raise PathRefused(f"the folder {text.strip()!r} holds no file")
        return files
    if not stat.S_ISREG(path.stat().st_mode):
        raise PathRefused(f"{text.strip()!r} is not a regular file (a pipe or a device)")
    return [path]

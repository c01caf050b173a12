"""Paths typed into the app, confined to allowed folders.

The app reads files on the machine it runs on when a user names them (a dataset on Evaluate,
run files on Compare). The rules are the engine's (`tempo_eval._confine`, where the worker that
opens the file later checks it again): a typed path must lie inside an allowed folder once
every link is resolved (the workspace, the bundled `data/` folder and the folders of
`TEMPO_EVAL_ALLOWED_DIRS`); a `..` part, a NUL byte, a link leading outside and a file with
several hard links are refused. Refusals are `PathRefused` (a ValueError) with a message that
says why and which folders are allowed. Here: a typed file or folder as the files it names.
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from pathlib import Path

from tempo_eval._confine import ALLOWED_ENV, ROOT, PathRefused, allowed_roots, confine

__all__ = ["ALLOWED_ENV", "ROOT", "PathRefused", "allowed_roots", "confine", "files_named"]


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

"""Paths typed into the app, confined to allowed folders.

The app reads files on the machine it runs on when a user names them (a dataset on Evaluate,
run files on Compare). The rules are the engine's (`tempo_eval.common.confine`, where the worker that
opens the file later checks it again): a typed path must lie inside an allowed folder once
every link is resolved (the workspace, the bundled `data/` folder and the folders of
`TEMPO_EVAL_ALLOWED_DIRS`); a `..` part, a NUL byte, a link leading outside and a file with
several hard links are refused. Refusals are `PathRefused` (a ValueError) with a message that
says why and which folders are allowed. Here: a typed file or folder as the files it names.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

from tempo_eval.common.confine import ALLOWED_ENV, ROOT, PathRefused, allowed_roots, confine

__all__ = ["ALLOWED_ENV", "ROOT", "PathRefused", "TooManyFiles", "allowed_roots", "confine", "files_named"]


class TooManyFiles(PathRefused):
    """A typed folder holding more files than the page takes (`files_named(limit=...)`)."""

    def __init__(self, typed: str, limit: int) -> None:
        super().__init__(f"the folder {typed!r} holds more than {limit} file{'s' * (limit != 1)}")


#: how many folders' listings are kept (`_listing`)
LISTINGS_KEPT = 64
_listings: dict[tuple[str, int, int | None], list[Path]] = {}
_listings_lock = threading.Lock()


def files_named(text: str, roots: Sequence[Path] | None = None, *, limit: int | None = None) -> list[Path]:
    """The regular files a typed path names: the file itself, or the files of a folder (not its
    subfolders, nor hidden files), each confined as `confine` does; PathRefused otherwise.

    A folder's entries are counted before anything is checked: with more than `limit` files
    the answer is TooManyFiles at once, after reading at most `limit` + 1 names (a folder of
    100,000 files costs what one of `limit` does). A folder's answer is kept by its path and
    modification time (`LISTINGS_KEPT` folders), so a page that reruns does not list it again
    until a file is added, removed or renamed in it (the worker checks each file again when it
    opens it, `tempo_eval.common.confine`)."""
    path = confine(text, roots)
    if path.is_dir():
        return _listing(path, text.strip(), roots, limit)
    if not stat.S_ISREG(path.stat().st_mode):
        raise PathRefused(f"{text.strip()!r} is not a regular file (a pipe or a device)")
    return [path]


def _listing(folder: Path, typed: str, roots: Sequence[Path] | None, limit: int | None) -> list[Path]:
    key = (str(folder), folder.stat().st_mtime_ns, limit)
    with _listings_lock:
        kept = _listings.get(key)
    if kept is not None:
        if limit is not None and len(kept) > limit:
            raise TooManyFiles(typed, limit)
        return list(kept)
    names: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:  # the kind from the folder's entry (no stat): a subfolder is not counted
            if entry.name.startswith(".") or entry.is_dir(follow_symlinks=False):
                continue
            names.append(entry.name)
            if limit is not None and len(names) > limit:
                break
    if limit is not None and len(names) > limit:
        files = [folder / name for name in names]  # the count is what is kept: more than `limit`
    else:
        files = []
        for name in sorted(names):
            inner = confine(str(folder / name), roots)
            if stat.S_ISREG(inner.stat().st_mode):
                files.append(inner)
        if not files:
            raise PathRefused(f"the folder {typed!r} holds no file")
    with _listings_lock:
        if len(_listings) >= LISTINGS_KEPT:
            _listings.pop(next(iter(_listings)))
        _listings[key] = files
    if limit is not None and len(files) > limit:
        raise TooManyFiles(typed, limit)
    return list(files)

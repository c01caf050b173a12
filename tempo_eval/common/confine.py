"""Paths typed into the dashboard, confined to the allowed folders when they are checked and again
when they are opened.

The dashboard reads files on its machine when a user names them (a dataset on Evaluate, run
files on Compare); anyone who can open a page could otherwise read any file the app's user can.
So a typed path must lie, every link resolved, inside an allowed folder: the workspace
(`TEMPO_EVAL_HOME`, default ~/.tempo_eval), the bundled `data/` folder, and the folders of
`TEMPO_EVAL_ALLOWED_DIRS` (separated by the system's path separator, ":" on Linux).

`confine` is the page's check (a `..` part, a NUL byte, a missing file, a link leading outside
and a file with several hard links are refused, each with its reason). A worker opens the path
later (a queued job, a Resume after a worker died), and the file may have been swapped
meanwhile, so it runs every job inside `reads_confined_to(allowed_roots())`: every path the
readers open (`tempo_eval.io._source.open_regular`, and `open_binary` below `io`) goes through
`open_confined`, which resolves and checks the path again, then opens it one component at a
time from "/" without following any link (O_NOFOLLOW on each, relative to its parent's
descriptor): what is opened is the checked path even if a link appears in between, and it must
have one name (st_nlink 1).

Why refuse hard links instead of comparing the opened file with the checked path: a hard link
made inside an allowed folder to a file outside *is* the checked path (same device and inode),
and nothing on the file says where its other names lie; a file with one name lies where its path
says. Uploads are written by the app (one name each), a data file rarely has two names, and the
refusal says to copy the file into an allowed folder.

The worker reads the allowed folders from its own environment, which the app gives it
(`tempo_eval_app.worker_jobs.spawn_worker`): the server's start settings, also for a job resumed
after a restart.
"""

from __future__ import annotations

import contextvars
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

ALLOWED_ENV = "TEMPO_EVAL_ALLOWED_DIRS"
#: the repository (its data/ folder is allowed)
ROOT = Path(__file__).resolve().parents[2]

_confined_to: contextvars.ContextVar[tuple[Path, ...] | None] = contextvars.ContextVar("confined_to", default=None)


class PathRefused(ValueError):
    """A typed path the app will not read, with the reason (the readers say it as an InputError
    naming the file)."""


def allowed_roots() -> list[Path]:
    """The folders typed paths may lie in, resolved: workspace, data/, then TEMPO_EVAL_ALLOWED_DIRS."""
    workspace = Path(os.environ.get("TEMPO_EVAL_HOME") or Path.home() / ".tempo_eval")
    roots = [workspace, ROOT / "data"]
    roots += [Path(part).expanduser() for part in os.environ.get(ALLOWED_ENV, "").split(os.pathsep) if part.strip()]
    return list(dict.fromkeys(root.resolve() for root in roots))


def where(roots: Sequence[Path] | None = None) -> str:
    """The allowed folders, as a refusal says them."""
    inside = allowed_roots() if roots is None else roots
    return ", ".join(str(root) for root in inside) + f" (add folders with {ALLOWED_ENV})"


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _resolved(typed: str, roots: Sequence[Path]) -> tuple[Path, Path]:
    """(the path as typed made absolute, the path with every link resolved), or PathRefused."""
    if "\x00" in typed:
        raise PathRefused(f"{typed!r} contains a NUL byte, which no file name holds; type the path without it")
    path = Path(typed).expanduser()
    if ".." in path.parts:
        raise PathRefused(f"{typed!r} contains '..'; type the path without it (allowed folders: {where(roots)})")
    if not path.is_absolute():
        path = Path.cwd() / path
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        raise PathRefused(f"{typed!r} does not exist on this machine") from None
    except (OSError, RuntimeError) as error:  # a link loop, a permission
        raise PathRefused(f"{typed!r} cannot be opened ({getattr(error, 'strerror', None) or error})") from None
    if not _inside(resolved, roots):
        shown = f"{typed!r}" + (f" (a link to {str(resolved)!r})" if resolved != path.absolute() else "")
        raise PathRefused(f"{shown} is outside the folders the app may read: {where(roots)}")
    return path, resolved


def _one_name(typed: str, info: os.stat_result, roots: Sequence[Path]) -> None:
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        raise PathRefused(
            f"{typed!r} has {info.st_nlink} hard links (other names, maybe outside the allowed folders); the "
            f"app reads only files with one name: copy the file into {where(roots)}"
        )


def confine(text: str, roots: Sequence[Path] | None = None) -> Path:
    """The resolved path `text` names, when it exists, lies in an allowed folder and (a file) has
    one name; else PathRefused saying why."""
    typed = str(text).strip()
    if not typed:
        raise PathRefused("no path given; type the path of a file or folder on this machine")
    inside = allowed_roots() if roots is None else roots
    _, resolved = _resolved(typed, inside)
    try:
        _one_name(typed, resolved.stat(), inside)
    except OSError as error:
        raise PathRefused(f"{typed!r} cannot be opened ({error.strerror or error})") from None
    return resolved


@contextmanager
def reads_confined_to(roots: Sequence[Path]) -> Iterator[None]:
    """While inside, every path the readers open (`open_regular`, in this thread and the tasks
    it starts) is opened with `open_confined(path, roots)`."""
    token = _confined_to.set(tuple(roots))
    try:
        yield
    finally:
        _confined_to.reset(token)


def confined_roots() -> tuple[Path, ...] | None:
    """The folders reads are confined to here (`reads_confined_to`), None when they are not."""
    return _confined_to.get()


#: open flags: a directory of the path, then its last part; neither may be a link
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_confined(path: str | os.PathLike[str], roots: Sequence[Path]) -> int:
    """A descriptor of the file `path` names, opened as module docstring says (not blocking: the
    caller checks the kind of file with fstat); PathRefused when it lies outside `roots`, when a
    part of it became a link after it was resolved, or when it has several names."""
    typed = os.fspath(path)
    _, resolved = _resolved(typed, roots)
    if not (hasattr(os, "O_NOFOLLOW") and os.open in os.supports_dir_fd):  # no descriptor walk here
        fd = os.open(resolved, _FILE_FLAGS)
    else:
        fd = _walk(resolved, typed, roots)
    try:
        _one_name(typed, os.fstat(fd), roots)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _walk(resolved: Path, typed: str, roots: Sequence[Path]) -> int:
    """`resolved` opened from "/" one part at a time, each relative to its parent, none followed."""
    parts = resolved.parts
    fd = os.open(parts[0], _DIR_FLAGS)
    for depth, part in enumerate(parts[1:], start=1):
        try:
            child = os.open(part, _FILE_FLAGS if depth == len(parts) - 1 else _DIR_FLAGS, dir_fd=fd)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise PathRefused(
                    f"{typed!r}: {str(Path(*parts[:depth + 1]))!r} became a link after the path was checked; "
                    f"the app follows no link when it opens a file (allowed folders: {where(roots)})"
                ) from None
            raise
        finally:
            os.close(fd)
        fd = child
    return fd


def open_binary(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` open for reading in binary, through `open_confined` inside `reads_confined_to`
    (for readers below `tempo_eval.io`, which cannot use `open_regular`)."""
    roots = confined_roots()
    if roots is None:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    fd = open_confined(path, roots)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PathRefused(f"{os.fspath(path)!r} is not a regular file; expected a file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise

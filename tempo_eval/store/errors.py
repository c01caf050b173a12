"""WorkspaceError: a workspace database that cannot be used, said in one line (file or server,
what is wrong, what to do), and what a SQLite error means for the workspace file."""

from __future__ import annotations

import os


class WorkspaceError(RuntimeError):
    """The workspace database cannot be used. `str(error)` is one line: the file, what is wrong,
    what to do; `path`, `problem` and `advice` hold the parts."""

    def __init__(self, path: str | os.PathLike[str], problem: str, advice: str) -> None:
        problem = " ".join(problem.split())  # one line, whatever SQLite reported
        self.path, self.problem, self.advice = str(path), problem, advice
        super().__init__(f"workspace database {self.path}: {problem}; {advice}")


_NEW_OR_RESTORE = (
    "restore it from a backup, or move it away (or use another --workspace / TEMPO_EVAL_HOME) to "
    "start a new workspace"
)


def workspace_error(path: str | os.PathLike[str], error: BaseException) -> WorkspaceError:
    """The WorkspaceError saying what a SQLite error means for the workspace file at `path`."""
    message = " ".join(str(error).split()) or type(error).__name__
    lowered = message.lower()
    if "not a database" in lowered:
        return WorkspaceError(path, "this file is not a SQLite database (its header is damaged or "
                              "it is another kind of file)", _NEW_OR_RESTORE)
    if "malformed" in lowered or "corrupt" in lowered:
        return WorkspaceError(path, f"the database is damaged ({message})", _NEW_OR_RESTORE)
    if "full" in lowered:
        return WorkspaceError(path, f"cannot write: {message}",
                              "free disk space (or use a workspace on another disk), then run again; "
                              "every row finished so far is stored")
    if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
        return WorkspaceError(path, f"cannot open it for writing ({message})",
                              "make the file and its directory writable, or use another --workspace")
    if "locked" in lowered or "busy" in lowered:
        return WorkspaceError(path, f"another process holds it ({message})",
                              "wait for the other evaluation to finish, then run again")
    return WorkspaceError(path, f"SQLite error: {message}", _NEW_OR_RESTORE)

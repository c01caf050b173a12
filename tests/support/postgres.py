"""A throwaway PostgreSQL cluster for the tests: started once per test session, stopped at its end.

    cluster = PostgresCluster.start(folder)   # initdb + pg_ctl start on a free 127.0.0.1 port
    url = cluster.new_database()              # a fresh, migrated database (CREATE DATABASE ... TEMPLATE)
    cluster.stop()

The binaries are looked for on PATH, then in Debian's /usr/lib/postgresql/<version>/bin. Run as
root, the cluster is made and run by the `postgres` user (PostgreSQL refuses to run as root), in
a folder that user owns. Authentication is `trust` on 127.0.0.1 only. `missing_reason()` says why
there is no cluster to start (the PostgreSQL tests are then skipped with that reason, unless
TEMPO_EVAL_REQUIRE_POSTGRES=1, where it fails them).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.app_server import free_port

_BINARIES = ("initdb", "pg_ctl", "postgres")


def bin_folder() -> Path | None:
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True):
        if all((Path(folder) / name).exists() for name in _BINARIES):
            return Path(folder)
    return None


def missing_reason() -> str | None:
    """Why no cluster can be started here, or None."""
    if bin_folder() is None:
        return ("PostgreSQL is not installed (no initdb / pg_ctl on PATH or in /usr/lib/postgresql/*/bin; "
                "Debian: apt-get install postgresql)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no `postgres` user to run PostgreSQL as"
    return None


class PostgresCluster:
    def __init__(self, folder: Path, port: int, user: str | None) -> None:
        self.folder, self.port, self._user = folder, port, user
        self.data = folder / "data"
        self._numbers = itertools.count(1)
        self._template: str | None = None

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", self._user, "--"] if self._user else []
        return subprocess.run([*prefix, *command], check=check, capture_output=True, text=True, timeout=120,
                              cwd="/")

    @classmethod
    def start(cls, folder: str | os.PathLike[str] | None = None) -> PostgresCluster:
        binaries = bin_folder()
        if binaries is None:
            raise RuntimeError(missing_reason())
        folder = Path(folder or tempfile.mkdtemp(prefix="tempo-eval-pg-"))
        folder.mkdir(parents=True, exist_ok=True)
        user = "postgres" if os.geteuid() == 0 else None
        if user:
            entry = pwd.getpwnam(user)
            os.chown(folder, entry.pw_uid, entry.pw_gid)
            folder.chmod(0o700)
        cluster = cls(folder, free_port(), user)
        cluster._run(str(binaries / "initdb"), "-D", str(cluster.data), "-U", "postgres", "--auth=trust",
                     "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        options = (f"-c listen_addresses=127.0.0.1 -c port={cluster.port} -c unix_socket_directories={folder} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        done = cluster._run(str(binaries / "pg_ctl"), "-D", str(cluster.data), "-l", str(folder / "server.log"),
                            "-o", options, "-w", "-t", "60", "start", check=False)
        if done.returncode != 0:
            log = (folder / "server.log").read_text(errors="replace")[-2000:] if (folder / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stdout}{done.stderr}{log}")
        cluster._binaries = binaries
        return cluster

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _admin(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(statement)

    def new_database(self, *, migrated: bool = True) -> str:
        """The URL of a new, empty database: a copy of a migrated template (fast), or with
        `migrated=False` one without any table."""
        name = f"test_{next(self._numbers)}"
        if migrated:
            if self._template is None:
                from tempo_eval.store.db import connect

                self._admin("CREATE DATABASE template_workspace")
                connect(self.url("template_workspace")).close()
                self._template = "template_workspace"
            self._admin(f"CREATE DATABASE {name} TEMPLATE {self._template}")
        else:
            self._admin(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        self._run(str(self._binaries / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)

"""Start the dashboard with `streamlit run` on a free 127.0.0.1 port, for browser tests.

    with AppServer(home=tmp_path) as server:
        page.goto(server.url)

`AppServer(home, wait=False)` returns as soon as the process is started; `wait_healthy()` then
waits for it, so a browser can start while the server boots (each takes seconds on a loaded machine).

The server runs headless from the repository root (or `root`: another checkout's app, for a
benchmark comparing two trees) with its own TEMPO_EVAL_HOME and offline model hubs; its output goes
to `server.log_path`, which a failing test can print.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType

from tests.support.paths import ROOT


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class AppServer:
    """`streamlit run app.py` in a child process; `url` once healthy; stopped on exit."""

    def __init__(self, home: Path, *, start_timeout: float = 90.0, root: Path = ROOT, wait: bool = True) -> None:
        self.home = Path(home)
        self.root = Path(root)
        self.wait = wait
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.home / "streamlit.log"
        self.start_timeout = start_timeout
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> AppServer:
        self.home.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "TEMPO_EVAL_HOME": str(self.home),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        env.pop("OPENAI_API_KEY", None)
        log = self.log_path.open("wb")
        self._process = subprocess.Popen(
            self.command(), cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        self._deadline = time.monotonic() + self.start_timeout
        if self.wait:
            self.wait_healthy()
        return self

    def wait_healthy(self) -> AppServer:
        """Wait until the server answers its health check (within `start_timeout` of its start)."""
        assert self._process is not None, "the server was not started"
        while time.monotonic() < self._deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self._process.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"streamlit did not become healthy in {self.start_timeout:.0f}s:\n{self.log()}")

    def streamlit_arguments(self) -> list[str]:
        """`streamlit run app.py` on this server's address, headless, with no file watcher."""
        return [
            "run", "app.py",
            "--server.address", "127.0.0.1", "--server.port", str(self.port),
            "--server.headless", "true", "--server.fileWatcherType", "none",
            "--browser.gatherUsageStats", "false",
        ]

    def command(self) -> list[str]:
        """The command that serves the app (a subclass may run Streamlit under a wrapper)."""
        return [sys.executable, "-m", "streamlit", *self.streamlit_arguments()]

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)  # the server's own process group only
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

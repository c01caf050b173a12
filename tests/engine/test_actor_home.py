"""A Ray actor's private workspace folder (`tempo_eval.engine.distributed.shipping.actor_home`): one per
process, gone when the process exits, and the folders of killed processes removed later."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile

from tempo_eval.engine.distributed import shipping

_SHOW_HOME = """
import os, sys
from tempo_eval.engine.distributed.shipping import CacheSource, actor_home, install_default_caches
install_default_caches(CacheSource(None), 0)
home = os.environ["TEMPO_EVAL_HOME"]
assert home == actor_home()
open(os.path.join(home, "made-by-the-actor"), "w").write("x")
print(home, flush=True)
"""


def _run(code: str, tmp_path, *, wait_for_kill: bool = False) -> str:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    if not wait_for_kill:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                              timeout=120)
        return done.stdout.strip()
    process = subprocess.Popen([sys.executable, "-c", code + "\nimport time; time.sleep(600)"], env=env,
                               stdout=subprocess.PIPE, text=True)
    home = process.stdout.readline().strip()
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    return home


def test_the_actor_folder_is_removed_when_its_process_exits(tmp_path):
    home = _run(_SHOW_HOME, tmp_path)
    assert os.path.basename(home).startswith(shipping.ACTOR_HOME_PREFIX)
    assert os.path.dirname(home) == str(tmp_path)
    assert not os.path.exists(home)
    assert os.listdir(tmp_path) == []


def test_a_killed_process_folder_is_removed_by_the_next_actor(tmp_path, monkeypatch):
    orphan = _run(_SHOW_HOME, tmp_path, wait_for_kill=True)
    assert os.path.isdir(orphan)  # killed: nothing ran at exit
    alive = tmp_path / f"{shipping.ACTOR_HOME_PREFIX}{os.getpid()}-abcd"  # a running process's
    alive.mkdir()
    unrelated = tmp_path / f"{shipping.ACTOR_HOME_PREFIX}x1y2z3"  # not named by a process id
    unrelated.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(shipping, "_actor_home", None)
    home = shipping.actor_home()
    try:
        assert not os.path.exists(orphan)
        assert alive.is_dir() and unrelated.is_dir()
        assert os.path.isdir(home) and shipping.actor_home() == home  # one per process
    finally:
        os.rmdir(home)

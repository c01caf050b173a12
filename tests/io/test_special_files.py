"""Special files named as inputs (issue 19.5): a FIFO, a link to an endless device, a file that grows while
it is read, a symlink loop; each is refused at once with a clear error, and a regular file through a link
is still read."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tempo_eval.io._source import read_input
from tempo_eval.io.errors import InputError
from tests.support.cli import run_cli
from tests.support.paths import ROOT

#: fixes that wait for cli.py and io/dataset.py to be split (issue 20); strict: they fail once done,
#: so the mark is removed with the change (see each test for the one call to make)

# ---- 5: special files --------------------------------------------------------------------------


def _read_in_thread(path: Path) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def target() -> None:
        try:
            read_input(path)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            errors.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(10)
    return thread, errors


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "data.csv"
    os.mkfifo(fifo)
    thread, errors = _read_in_thread(fifo)
    if thread.is_alive():  # unblock the reader before failing
        with open(fifo, "wb"):
            pass
        thread.join(5)
        pytest.fail("reading a FIFO hung")
    assert len(errors) == 1 and isinstance(errors[0], InputError)
    message = str(errors[0])
    assert "FIFO" in message and str(fifo) in message and "regular file" in message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_compare_with_a_fifo_as_qrels_ends_with_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.run").write_text(f"q1 Q0 d1 1 1.0 {name}\n", encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    os.mkfifo(qrels)
    result: list[tuple[int, str]] = []
    thread = threading.Thread(
        target=lambda: result.append(run_cli(
            ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels", str(qrels)], capsys
        )),
        daemon=True,
    )
    thread.start()
    thread.join(20)
    if thread.is_alive():
        with open(qrels, "wb"):
            pass
        thread.join(5)
        pytest.fail("compare with a FIFO as qrels hung")
    code, err = result[0]
    assert code == 2 and "qrels.txt" in err and "FIFO" in err and "Traceback" not in err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("command", ["evaluate", "compare", "import"])
def test_a_link_to_an_endless_device_is_refused_within_the_memory_bound(
    tmp_path: Path, device: str, command: str
) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    link = tmp_path / ("results.json" if command == "import" else "data.csv")
    link.symlink_to(device)
    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d1 1 1.0 a\n", encoding="utf-8")
    args = {
        "evaluate": ["evaluate", str(link), "--metrics", "temporal_ndcg", "--out", str(tmp_path / "o.csv"),
                     "--no-progress"],
        "compare": ["compare", str(run), str(link), "--qrels", str(run)],
        "import": ["import", str(link), "--workspace", str(tmp_path / "ws")],
    }[command]
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
    code = limit + f"import sys; from tempo_eval.cli import main; sys.exit(main({args!r}))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "TEMPO_EVAL_HOME": str(tmp_path / "ws")},
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "character device" in done.stderr and str(link) in done.stderr
    assert "Traceback" not in done.stderr


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path: Path) -> None:
    """The bytes are counted as they are read, not taken from stat alone."""
    from tempo_eval.io import _source

    path = tmp_path / "data.csv"
    path.write_bytes(b"a" * 100)
    real_fstat = os.fstat
    # stat says the file is empty (as /proc files and devices do); the reader must still count
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_source.os, "fstat", lambda fd: _StatSize(real_fstat(fd), 0))
        with pytest.raises(InputError, match="the limit is"):
            read_input(path, max_bytes=50)


class _StatSize:
    def __init__(self, real: os.stat_result, size: int) -> None:
        self.st_mode, self.st_size = real.st_mode, size


def test_reading_a_symlink_loop_names_the_loop(tmp_path: Path) -> None:
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.symlink_to(second)
    second.symlink_to(first)
    with pytest.raises(InputError, match=r"a.csv.*symbolic-link loop"):
        read_input(first)


# cli._check_out_is_not_an_input: Path.resolve raises RuntimeError on a loop (catch it: the reader then names the loop)
def test_a_symlink_loop_is_a_clear_error_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.symlink_to(second)
    second.symlink_to(first)
    code, err = run_cli(["evaluate", str(first), "--metrics", "temporal_ndcg", "--out",
                         str(tmp_path / "o.csv"), "--no-progress"], capsys)
    assert code == 2 and "a.csv" in err and "symbolic-link loop" in err
    code, err = run_cli(["compare", str(first), str(second), "--qrels", str(first),
                         "--out", str(tmp_path / "o.md")], capsys)
    assert code == 2 and "symbolic-link loop" in err


def test_a_regular_file_through_a_link_is_still_read(tmp_path: Path) -> None:
    target = tmp_path / "real.csv"
    target.write_bytes(b"query,answer\nq,a\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    raw = read_input(link)
    assert raw.data == b"query,answer\nq,a\n" and raw.name == "link.csv"

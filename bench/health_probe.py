"""Polls a Streamlit server's /_stcore/health from a process Chromium cannot starve (issue 29).

    python bench/health_probe.py URL OUT.jsonl [--every 0.25] [--nice -10]

Started by bench/dashboard_load.py in a session of its own (its own scheduler autogroup on Linux),
it raises that autogroup's priority and its own (root only; otherwise it says so in its first
line) so that its waits are the server's, not the time this prober waited for a CPU. One JSON line
per poll: {"t": start (time.monotonic()), "wait": seconds, "ok": bool}.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import urllib.request
from pathlib import Path


def raise_priority(nice: int) -> str:
    """This process's autogroup and itself at `nice`; what was done, in words."""
    done = []
    try:
        Path("/proc/self/autogroup").write_text(str(nice))
        done.append(f"autogroup nice {nice}")
    except OSError as error:
        done.append(f"autogroup unchanged ({error.strerror})")
    try:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
        done.append(f"process nice {nice}")
    except OSError as error:
        done.append(f"process nice unchanged ({error.strerror})")
    return ", ".join(done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("out")
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--nice", type=int, default=-10)
    args = parser.parse_args()
    with open(args.out, "a", buffering=1, encoding="utf-8") as out:
        out.write(json.dumps({"priority": raise_priority(args.nice)}) + "\n")
        parent = os.getppid()
        while os.getppid() == parent:  # until the bench that started it has gone
            started = time.monotonic()
            try:
                with urllib.request.urlopen(args.url + "/_stcore/health", timeout=30) as reply:
                    reply.read()
                ok = True
            except OSError:
                ok = False
            wait = time.monotonic() - started
            out.write(json.dumps({"t": started, "wait": round(wait, 4), "ok": ok}) + "\n")
            time.sleep(max(0.0, args.every - wait))


if __name__ == "__main__":
    main()

"""The server process's heap under many sessions: the app's modules kept out of the cycle collector.

Streamlit's forced full collection after every script run is turned off (.streamlit/config.toml,
runner.postScriptGC); Python's own collector still runs a full (generation 2) collection now and
then, and each one walks every tracked object of the process, most of them the modules the app
imported (streamlit, pandas, pyarrow, plotly: about 120,000 objects, 0.2 s on this machine),
holding the GIL: every session's page run and the event loop (health checks, websocket sends)
wait for it. Under 20 sessions such pauses took 0.2 to 1.1 s each (issue 29).

After the first run of each page in the process (when the modules it imports lazily are loaded),
the garbage is collected and what survives is frozen (`gc.freeze`): later collections skip it.
Frozen objects are still freed by reference counting; only cycles among them would stay, and
they are modules, classes and caches that live as long as the process. At most one freeze per
page, so what a session creates later is collected as usual.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_frozen_after: set[str] = set()


def freeze_heap_once(page: str) -> bool:
    """Collect, then freeze the surviving heap, the first time `page` has run in this process;
    True when it froze."""
    with _lock:
        if page in _frozen_after:
            return False
        _frozen_after.add(page)
        gc.collect()
        gc.freeze()
        return True

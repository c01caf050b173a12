"""The store and the verdict cache mask registered secrets (issue 11)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def test_the_store_and_the_verdict_cache_mask_registered_secrets(tmp_path: Path) -> None:
    from tempo_eval.common.secrets import register_secret
    from tempo_eval.metrics.base import MetricResult
    from tempo_eval.store.runs import RunStore
    from tempo_eval.store.verdict_cache import VerdictCache

    secret = "registered-secret-value-42"
    register_secret(secret)
    path = tmp_path / "ws.sqlite"
    store = RunStore(path)
    dataset = pd.DataFrame({"query_id": ["q1"], "answer": ["a"]})
    from tempo_eval.engine.scoring import as_dataset

    run_id, _ = store.create_or_resume_run(store.save_dataset(as_dataset(dataset)), {"metrics": ["m"]})
    claim = {"claim": f"c {secret}", "verdict": "SUPPORTED", "evidence": f"e {secret}", "reason": f"r {secret}",
             "note": secret}
    store.record_row(run_id, 0, "q1", [MetricResult("m", 1.0, f"why {secret}", None,
                                                    {"claims": [claim], "raw": secret})])
    VerdictCache(path).put_many({"k": {"verdict": "SUPPORTED", "evidence": secret, "reason": secret}})
    store.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert secret.encode() not in stored and b"***" in stored


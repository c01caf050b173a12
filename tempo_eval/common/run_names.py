"""How a run is named: what ran, in a few words, from the metric configs a run stores
(`tempo_eval.engine.scoring.metric_config`), and the short label every page and report gives a run
("#2 · claims TF · lexical"). Plain functions of plain data: the run's id, name and stored config.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

#: how a run name says each metric and its mode
_TF_MODES = {"focus_time": "focus-time TF", "nli": "claims TF", "llm": "LLM TF"}
_SHORT = {"factual_correctness": "FC", "turn_faithfulness": "turn TF"}


def _metric_words(config: Mapping[str, Any]) -> str:
    settings = config.get("settings") or {}
    if config["name"] == "temporal_faithfulness":
        mode = settings.get("mode")
        if mode == "auto":  # as TemporalFaithfulness.resolved_mode: the judge, else the verifier
            mode = "llm" if settings.get("llm") else "nli" if settings.get("verifier") else "focus_time"
        return _TF_MODES.get(str(mode), "TF")
    if config["name"] == "temporal_ndcg":
        mode = settings.get("mode")
        return f"NDCG@{settings.get('k', 10)}" + (f" {str(mode).replace('_', '-')}" if mode not in (None, "auto") else "")
    return _SHORT.get(config["name"], str(config["name"]))


def describe_metrics(configs: Sequence[Mapping[str, Any]]) -> str:
    """What ran, in a few words, from the metric configs a run stores (`metric_config`): each metric
    with its mode, then the verifiers ("claims TF · lexical", "focus-time TF + NDCG@10")."""
    parts = [" + ".join(_metric_words(c) for c in configs)]
    verifiers = []
    for config in configs:
        settings = config.get("settings") or {}
        verifier = settings.get("verifier")
        if isinstance(verifier, dict) and verifier.get("name"):
            verifiers.append(str(verifier["name"]))
        elif settings.get("llm"):
            verifiers.append("llm")
    parts.extend(dict.fromkeys(verifiers))
    return " · ".join(p for p in parts if p)


#: the end of a default run name: " · 24 Nov 14:05"
_DEFAULT_NAME_END = re.compile(r" · \d{1,2} [A-Z][a-z]{2} \d\d:\d\d$")
#: how much of a name a run label keeps
LABEL_NAME_CHARS = 32


def run_label(run_id: int, name: str, config: Mapping[str, Any] | None) -> str:
    """A run's short label, the same wherever a run is named: its id, then what ran, then the name
    a user gave it ("#2 · claims TF · lexical", "#5 · claims TF · lexical · prompt v2"). A default
    name (`default_run_name`) repeats what ran and adds only the dataset and the time, so it is left
    out; a name of its own is cut to LABEL_NAME_CHARS. The id comes first so that no cut ever makes
    two runs look alike."""
    metrics = [m for m in (config or {}).get("metrics") or [] if isinstance(m, Mapping) and m.get("name")]
    described = describe_metrics(metrics) if metrics else ""
    name = " ".join(str(name or "").split())
    parts = [f"#{int(run_id)}", described]
    own_name = not (described and described in name and _DEFAULT_NAME_END.search(name))
    if name and own_name:
        parts.append(name if len(name) <= LABEL_NAME_CHARS else name[: LABEL_NAME_CHARS - 1] + "…")
    return " · ".join(p for p in parts if p)

"""Scripted verifiers for metric tests: verdicts from a table, every call recorded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tempo_eval.common.run_sync import run_sync
from tempo_eval.verify.base import ClaimVerdict, Verdict


class TableVerifier:
    """Each claim's verdict comes from a table; claims not in it are NEUTRAL.

    table: claim -> verdict, or claim -> (verdict, premise): a verdict paired with a premise holds
    only when that premise is among the premises given (else NEUTRAL), and that premise is the
    evidence; otherwise the evidence is the first premise given. ERROR verdicts carry the error
    "scripted failure". `calls` records (claims, premises) of every call.
    """

    name = "table"
    model_id = "scripted"

    def __init__(self, table: Mapping[str, Verdict | tuple[Verdict, str | None]] | None = None) -> None:
        self.table = dict(table or {})
        self.calls: list[tuple[list[str], list[str]]] = []

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        return run_sync(self.averify(claims, premises))

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        self.calls.append((list(claims), list(premises)))
        verdicts = []
        for claim in claims:
            entry = self.table.get(claim, Verdict.NEUTRAL)
            verdict, needs = entry if isinstance(entry, tuple) else (entry, None)
            if needs is not None and needs not in premises:
                verdict = Verdict.NEUTRAL
            evidence = needs if needs is not None else (premises[0] if premises else None)
            error = "scripted failure" if verdict == Verdict.ERROR else None
            verdicts.append(ClaimVerdict(claim, verdict, evidence=evidence, error=error))
        return verdicts


class DroppingVerifier(TableVerifier):
    """A broken verifier: it returns one verdict fewer than the claims it is given."""

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        return (await super().averify(claims, premises))[:-1]

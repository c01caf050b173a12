"""A verifier wrapper that answers from the on-disk verdict cache and asks the inner verifier only for misses.

The key of a claim is `verdict_key(name, model_id, claim, premises, settings)`: the same claim against
the same premises with the same verifier, model and settings is decided once, ever. ERROR verdicts are
not stored, so a failed judge call is retried on the next run.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tempo_eval.common.values import require_text_list
from tempo_eval.store.verdict_cache import VerdictCache, verdict_key
from tempo_eval.verify.base import ClaimVerdict, Verdict, Verifier, check_verdict_count


@dataclass
class CacheStats:
    """Claims answered from the cache (`hits`) and sent to the inner verifier (`misses`)."""

    hits: int = 0
    misses: int = 0

    @property
    def hit_rate(self) -> float:
        """hits / (hits + misses); NaN before any lookup."""
        total = self.hits + self.misses
        return self.hits / total if total else float("nan")


class CachedVerifier:
    """Wrap `verifier` with a `VerdictCache` (default: the workspace database).

    `settings` is part of every key; the inner verifier's own `settings` string (NLI candidate
    selection, lexical thresholds), when it has one, is appended, so changing them never reuses
    verdicts made under other settings. Misses of one `verify` call go to the inner verifier in
    one call, in their original order.
    """

    def __init__(self, verifier: Verifier, cache: VerdictCache | None = None, settings: str = "") -> None:
        self.verifier = verifier
        self.cache = cache if cache is not None else VerdictCache()
        inner = getattr(verifier, "settings", "")
        self.settings = ";".join(part for part in (settings, inner if isinstance(inner, str) else "") if part)
        self.stats = CacheStats()
        self._stats_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.verifier.name

    @property
    def model_id(self) -> str:
        return self.verifier.model_id

    def key(self, claim: str, premises: Sequence[str]) -> str:
        return verdict_key(self.name, self.model_id, claim, list(premises), self.settings)

    def _lookup(self, claims: Sequence[str], premises: Sequence[str]) -> _Pending:
        claims = require_text_list(claims, "claims")
        premises = require_text_list(premises, "premises")
        keys = [self.key(claim, premises) for claim in claims]
        found = self.cache.get_many(keys)
        missing = [claim for claim, key in zip(claims, keys, strict=True) if key not in found]
        with self._stats_lock:
            self.stats.hits += len(claims) - len(missing)
            self.stats.misses += len(missing)
        # the same claim twice in one call is decided once
        return _Pending(claims, premises, keys, found, list(dict.fromkeys(missing)))

    def _complete(self, pending: _Pending, fresh: Sequence[ClaimVerdict]) -> list[ClaimVerdict]:
        check_verdict_count(self.verifier, pending.missing, fresh)
        by_claim = dict(zip(pending.missing, fresh, strict=True))
        to_store = {
            self.key(claim, pending.premises): verdict.to_record()
            for claim, verdict in by_claim.items()
            if verdict.verdict is not Verdict.ERROR
        }
        if to_store:
            self.cache.put_many(to_store)
        return [
            ClaimVerdict.from_record(pending.found[key]) if key in pending.found else by_claim[claim]
            for claim, key in zip(pending.claims, pending.keys, strict=True)
        ]

    def verify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """Cached verdicts for known claims; one inner `verify` call for the rest."""
        pending = self._lookup(claims, premises)
        fresh = self.verifier.verify(pending.missing, pending.premises) if pending.missing else []
        return self._complete(pending, fresh)

    async def averify(self, claims: Sequence[str], premises: Sequence[str]) -> list[ClaimVerdict]:
        """Like `verify`; the database work runs in a thread, misses go to the inner `averify`."""
        pending = await asyncio.to_thread(self._lookup, claims, premises)
        fresh = await self.verifier.averify(pending.missing, pending.premises) if pending.missing else []
        return await asyncio.to_thread(self._complete, pending, fresh)


@dataclass
class _Pending:
    """One call's state between the cache lookup and the inner verifier's answer."""

    claims: list[str]
    premises: list[str]
    keys: list[str]
    found: dict[str, dict[str, Any]]
    missing: list[str]

"""The offsets of a text's claims, for the tests of claim splitting (the product reads the claims
with their spans, `tempo_eval.core.text.atomic_claims`, and needs no list of bare spans)."""

from __future__ import annotations

from tempo_eval.core.text import atomic_claims


def claim_spans(text: str) -> list[tuple[int, int]]:
    """Character offsets of the claims of `text` (the stretch each atomic claim comes from),
    trimmed of whitespace; an apposition, which lies inside its sentence's span, is left out."""
    spans: list[tuple[int, int]] = []
    for claim in atomic_claims(text):
        start, end = claim.start, claim.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if spans and start < spans[-1][1]:
            continue
        spans.append((start, end))
    return spans

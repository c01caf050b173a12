"""Text with claims or years highlighted, as HTML that is safe to render.

Every piece of user text is passed through `html.escape` before any markup is wrapped around it,
so an answer holding ``<script>`` or ``<img onerror=...>`` shows as literal text. The markup we
add is fixed: ``<mark>`` elements with a class and a title; titles are escaped too.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tempo_eval.verify.base import VERDICT_LABELS, verdict_label

#: verdict -> (background, readable label); one colour per verdict, used by every view
VERDICT_COLOURS: dict[str, str] = {
    "SUPPORTED": "#c8e6c9",
    "PARTIALLY_SUPPORTED": "#fff3b0",
    "NEUTRAL": "#e0e0e0",
    "NOT_SUPPORTED": "#ffd8a8",
    "CONTRADICTED": "#ffb3b3",
    "ERROR": "#d0d0ff",
}
YEAR_COLOURS = {"grounded": "#c8e6c9", "ungrounded": "#ffb3b3", "year": "#dbe9ff"}


@dataclass(frozen=True)
class Mark:
    """A highlighted stretch of text: `text[start:end]`, a CSS class suffix and a tooltip."""

    start: int
    end: int
    kind: str
    title: str = ""


def locate(text: str, fragment: str, taken: Sequence[tuple[int, int]] = ()) -> tuple[int, int] | None:
    """Where `fragment` occurs in `text`, avoiding stretches already `taken`.

    Exact match first, then a match that ignores case and runs of whitespace (claims from an LLM
    judge are often re-spaced). Returns (start, end) offsets into `text`, or None.
    """
    fragment = fragment.strip()
    if not fragment:
        return None
    start = 0
    while (found := text.find(fragment, start)) >= 0:
        span = (found, found + len(fragment))
        if not _overlaps(span, taken):
            return span
        start = found + 1
    words = [re.escape(w) for w in fragment.split()]
    pattern = re.compile(r"\s+".join(words), re.IGNORECASE)
    for match in pattern.finditer(text):
        if not _overlaps(match.span(), taken):
            return match.span()
    # an atomic claim may start with a subject carried over from its sentence ("The fire burned
    # ..." for "... and burned ..."): find the rest of it
    for skip in range(1, min(6, len(words) - 2)):
        pattern = re.compile(r"\s+".join(words[skip:]), re.IGNORECASE)
        for match in pattern.finditer(text):
            if not _overlaps(match.span(), taken):
                return match.span()
    return None


def _overlaps(span: tuple[int, int], taken: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def render_marks(text: str, marks: Iterable[Mark]) -> str:
    """`text` as HTML with each mark wrapped in ``<mark class="te-KIND" title=...>``.

    Marks must not overlap (later overlapping marks are dropped). Text and titles are escaped.
    """
    chosen: list[Mark] = []
    for mark in sorted(marks, key=lambda m: (m.start, -m.end)):
        if mark.start >= mark.end or mark.start < 0 or mark.end > len(text):
            continue
        if chosen and mark.start < chosen[-1].end:
            continue
        chosen.append(mark)
    out: list[str] = []
    position = 0
    for mark in chosen:
        out.append(html.escape(text[position : mark.start]))
        out.append(_mark_tag(mark.kind, mark.title) + html.escape(text[mark.start : mark.end]) + "</mark>")
        position = mark.end
    out.append(html.escape(text[position:]))
    return "".join(out)


def claim_marks(text: str, claims: Sequence[Mapping[str, Any]]) -> tuple[list[Mark], list[int]]:
    """Marks for the claims found in `text`, and the indices of claims that could not be located.

    Each claim is a record with "claim" and "verdict" (as stored by the run store); the mark's
    tooltip gives the verdict and, when present, the evidence sentence.
    """
    marks: list[Mark] = []
    missing: list[int] = []
    taken: list[tuple[int, int]] = []
    for index, claim in enumerate(claims):
        span = locate(text, str(claim.get("claim") or ""), taken)
        if span is None:
            missing.append(index)
            continue
        taken.append(span)
        verdict = str(claim.get("verdict") or "ERROR")
        title = verdict_label(verdict)
        evidence = claim.get("evidence")
        if evidence:
            title += f" — evidence: {evidence}"
        marks.append(Mark(span[0], span[1], verdict, title))
    return marks, missing


def year_marks(spans: Iterable[Any], grounded: Iterable[int] | None = None) -> list[Mark]:
    """Marks for the temporal expressions of a focus time (`YearSpan`s with start/end/first/last).

    With `grounded` (the years found in the contexts), a span is "grounded" when all its years are
    in it and "ungrounded" otherwise; without it every span is a plain "year" mark.
    """
    grounded_set = None if grounded is None else set(grounded)
    marks = []
    for span in spans:
        years = set(span.years)
        label = f"{span.first}" if span.first == span.last else f"{span.first}–{span.last}"
        if grounded_set is None:
            kind = "year"
        else:
            kind = "grounded" if years <= grounded_set else "ungrounded"
            label += " (found in the contexts)" if kind == "grounded" else " (not in the contexts)"
        marks.append(Mark(span.start, span.end, kind, label))
    return marks


def legend_html(kinds: Sequence[str] = tuple(VERDICT_COLOURS)) -> str:
    """A row of coloured chips naming the verdicts (or year kinds)."""
    labels = {**VERDICT_LABELS, "grounded": "year found in the contexts",
              "ungrounded": "year not in the contexts", "year": "temporal expression"}
    chips = [_mark_tag(kind, "") + html.escape(labels.get(kind, kind)) + "</mark>" for kind in kinds]
    return '<div class="te-legend" style="font-size: 0.85em">' + " ".join(chips) + "</div>"


def text_block(body_html: str) -> str:
    """Wrap already-safe HTML in a block that keeps line breaks and leaves room for the marks."""
    return f'<div class="te-text" style="line-height: 1.7; white-space: pre-wrap">{body_html}</div>'


def _mark_tag(kind: str, title: str) -> str:
    """The opening tag of a mark. Styles are inline (no stylesheet to lose); the class names
    the kind for tests and for readers of the page source."""
    safe_kind = re.sub(r"[^A-Za-z0-9_-]", "", kind)
    colour = {**VERDICT_COLOURS, **YEAR_COLOURS}.get(kind, "#eeeeee")
    style = f"background: {colour}; color: #111; padding: 0 2px; border-radius: 3px"
    if kind in ("CONTRADICTED", "ungrounded"):
        style += "; text-decoration: underline wavy #b00020"
    title_attr = f' title="{html.escape(title, quote=True)}"' if title else ""
    return f'<mark class="te-{safe_kind}" style="{style}"{title_attr}>'

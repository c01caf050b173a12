"""Splitting text into sentences and claims, with character offsets.

Pure regex and Python, no models: fast enough to run on every answer and context of a dataset.

Sentences
    A sentence ends at ``.``, ``!``, ``?``, ``...`` or ``…`` (plus any closing quotes or brackets)
    followed by whitespace and a token that can start a sentence (an upper-case letter, a digit,
    an opening quote or bracket). A full stop does not end a sentence after a title or reference
    abbreviation ("Dr.", "Mr.", "St.", "No. 3", "c. 1900", "e.g.", "i.e.", "vs."), after a month
    abbreviation before a number ("Jan. 5"), or after an initial ("J. R. R. Tolkien"). After an
    acronym ("U.S."), "etc.", "Inc." or an initial it ends one only when the next word is a
    typical sentence opener ("... in the U.S. The company ..."). Decimals ("3.5", "$2.5bn") never
    split because no whitespace follows their point. A lower-case word after the stop never starts
    a new sentence ('"Stop!" she said').

Lines
    A blank line always separates; so does a single line break, unless the next line starts with
    a lower-case letter or a digit (a wrapped line). Bulleted and numbered lines ("- x", "* x",
    "• x", "1. x", "2) x", "(a) x", "## x") are items of their own; the marker is not part of the
    item's span.

Claims
    Sentences, further split where they join independent clauses: at ``;`` when both sides have
    at least three words, and at ", and" / ", but" / ", while" / ", whereas" / ", yet" / ", so" /
    ", although" / ", though" when both sides look like clauses (each has a verb; the right side
    starts with a subject rather than a verb) and the left side is not inside a relative clause
    (", which ..." not yet closed). So "X happened in 2008, and Y happened in 2009" gives two
    claims, while "Smith and Jones founded it", "He was born in 1950, and moved to Paris" and
    "The tower, which was completed in 1889, is in Paris" stay whole. The joining word is not
    part of the right claim's span.
"""

from __future__ import annotations

import re

__all__ = ["claim_spans", "sentence_spans", "split_claims", "split_sentences"]

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- sentence boundaries -----------------------------------------------------------------------

#: never end a sentence (titles before names, reference words before numbers, Latin shorthands)
_NEVER_END = _words(
    """
    mr mrs ms dr prof st mt ft gen col capt lt sgt cpt maj adm rev hon gov sen rep pres supt
    e.g i.e eg ie c ca cf vs viz approx est al fig figs vol vols pp ch chap sec art op esp dept
    univ assn ave blvd rd
    """
)
#: end a sentence only before a number-less word (so "No. 3" stays, "no. The" splits)
_NUMBER_ABBREVIATIONS = frozenset({"no", "nos", "p", "nr"})
_MONTHS = _words(
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
#: may end a sentence, but only when a typical opener follows
_MAYBE_END = frozenset({"etc", "inc", "ltd", "co", "corp", "jr", "sr", "bros", "plc", "llc", "bc", "ad"})
_SENTENCE_OPENERS = _words(
    """
    the a an he she it they we i you this that these those there here his her its their our my
    in on at after before during however but and so then meanwhile today since when while as
    although because if also moreover furthermore later by from for with despite following
    yet still thus hence nevertheless instead some many most all both each one two three
    """
)

_TERMINAL = re.compile(r"(?:\.{3}|…|[.!?]+)[\"'”’»)\]]*(?=\s)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_ACRONYM = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")
_OPENING = set("\"'“‘«([")
_NEXT_WORD = re.compile(r"[\"'“‘«(\[]*([A-Za-z]+)")

_BULLET = re.compile(
    r"[ \t]*(?:[-*•▪◦‣+–—]|#{1,6}|\(?\d{1,2}[.)]|\(?[a-z][.)]|\([ivx]+\)|[ivx]+\))[ \t]+"
)


def _ends_sentence(block: str, stop_start: int, stop: str, next_pos: int) -> bool:
    """Decide whether the terminal `stop` at `stop_start` ends a sentence; `next_pos` is the next non-space."""
    nxt = block[next_pos]
    if not (nxt.isupper() or nxt.isdigit() or nxt in _OPENING):
        return False
    bare = stop.rstrip("\"'”’»)]")
    if bare != ".":
        return True  # "!", "?", "?!", ellipses: never abbreviations
    # a short look-back window keeps long texts linear (abbreviations are short)
    match = _WORD_BEFORE.search(block, max(0, stop_start - 24), stop_start)
    if match is None:
        return True  # a number, a closing bracket, ...: "completed in 1889."
    word = match.group(1)
    key = word.lower()
    if key in _NEVER_END:
        return False
    if key in _NUMBER_ABBREVIATIONS:
        return not nxt.isdigit()
    if key in _MONTHS and word[0].isupper():
        if nxt.isdigit():
            return False
        return _opener_follows(block, next_pos)
    if key in _MAYBE_END or _ACRONYM.match(word) or (len(word) == 1 and word.isupper()):
        return _opener_follows(block, next_pos)
    return True


def _opener_follows(block: str, next_pos: int) -> bool:
    match = _NEXT_WORD.match(block, next_pos)
    return bool(match) and match.group(1).lower() in _SENTENCE_OPENERS


def _split_block(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans inside one block (a paragraph or a list item) of `text`."""
    spans: list[tuple[int, int]] = []
    sentence_start = start
    for match in _TERMINAL.finditer(text, start, end):
        next_pos = match.end()
        while next_pos < end and text[next_pos].isspace():
            next_pos += 1
        if next_pos >= end:
            break
        if _ends_sentence(text, match.start(), match.group(0), next_pos):
            spans.append((sentence_start, match.end()))
            sentence_start = next_pos
    spans.append((sentence_start, end))
    return spans


def _blocks(text: str) -> list[tuple[int, int]]:
    """Paragraphs and list items as (start, end) offsets, bullet markers excluded."""
    blocks: list[tuple[int, int]] = []
    current: list[int] | None = None  # [start, end] of the block being built
    offset = 0
    for line in text.splitlines(keepends=True):
        line_start, line_end = offset, offset + len(line.rstrip("\r\n"))
        offset += len(line)
        body = text[line_start:line_end]
        if not body.strip():
            if current:
                blocks.append((current[0], current[1]))
            current = None
            continue
        bullet = _BULLET.match(body)
        content_start = line_start + (bullet.end() if bullet else len(body) - len(body.lstrip()))
        first = text[content_start]
        continues = current is not None and not bullet and (first.islower() or first.isdigit())
        if continues:
            current[1] = line_end
        else:
            if current:
                blocks.append((current[0], current[1]))
            current = [content_start, line_end]
    if current:
        blocks.append((current[0], current[1]))
    return blocks


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character offsets ``(start, end)`` of the sentences of `text` (``text[start:end]`` is one).

    Spans are trimmed of surrounding whitespace and exclude list markers; spans without any
    letter or digit (a lone "..." or "-") are dropped. Empty or blank text -> ``[]``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    spans: list[tuple[int, int]] = []
    for block_start, block_end in _blocks(text):
        for start, end in _split_block(text, block_start, block_end):
            start, end = _trim(text, start, end)
            if start < end and any(ch.isalnum() for ch in text[start:end]):
                spans.append((start, end))
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, in order (see the module docstring for the rules)."""
    return [text[start:end] for start, end in sentence_spans(text)]


# --- claims --------------------------------------------------------------------------------------

_AUXILIARIES = _words(
    """
    is are was were be been being am has have had do does did will would shall should can could
    may might must isn't aren't wasn't weren't hasn't haven't hadn't doesn't didn't won't can't
    """
)
_IRREGULAR_VERBS = _words(
    """
    began become became won lost built wrote written made took taken gave given went gone came
    grew grown fell rose left led held met ran saw seen sold bought taught thought found brought
    told said paid spent chose drove flew knew rode spoke stood struck threw understood wore
    fought sank hit set put cut beat broke broken drew drawn ate fled forgot froze hid kept lay
    lit meant overcame rang sang shot shut slept sought split spread stole stuck swore swept swung
    tore won wound became
    lies stands remains contains includes hosts holds serves covers becomes owns employs houses
    """
)
_NOT_VERBS = frozenset({"hundred", "united", "red", "bed", "need", "seed", "speed", "feed", "indeed", "sacred", "naked", "wicked", "kindred"})
_SUBJECT_WORDS = _words(
    """
    he she it they we i you this that these those there his her its their our my the a an some
    many most all both each every no neither either another other such one two three four five
    """
)
_CLAUSE_CONJUNCTION = re.compile(r",\s+(?:and|but|while|whereas|yet|so|although|though)\s+")
_SEMICOLON = re.compile(r";\s*")
_LEADING_CONNECTIVE = re.compile(
    r"(?:and|but|yet|so|while|whereas|however|moreover|also|although|though)\b,?\s*", re.IGNORECASE
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+")
_OPEN_RELATIVE = re.compile(r",\s+(?:which|who|whom|whose|where)\b[^,]*$")


def _is_verb(word: str) -> bool:
    low = word.lower()
    if low in _AUXILIARIES or low in _IRREGULAR_VERBS:
        return True
    return len(low) >= 5 and low.endswith("ed") and low not in _NOT_VERBS and word.islower()


def _is_clause(words: list[str]) -> bool:
    return len(words) >= 2 and any(_is_verb(word) for word in words)


def _starts_with_subject(words: list[str]) -> bool:
    if not words or _is_verb(words[0]):
        return False
    first = words[0]
    return first.lower() in _SUBJECT_WORDS or first[0].isupper() or first[0].isdigit()


def _clause_splits(sentence: str) -> list[tuple[int, int]]:
    """Split one sentence (offsets relative to it) into independent clauses."""
    parts: list[tuple[int, int]] = []
    start = 0
    for match in _SEMICOLON.finditer(sentence):
        left, right = sentence[start : match.start()], sentence[match.end() :]
        if len(_WORD.findall(left)) >= 3 and len(_WORD.findall(right)) >= 3:
            parts.append((start, match.start()))
            start = match.end()
    parts.append((start, len(sentence)))

    clauses: list[tuple[int, int]] = []
    for part_start, part_end in parts:
        start = part_start
        for match in _CLAUSE_CONJUNCTION.finditer(sentence, part_start, part_end):
            left = sentence[start : match.start()]
            right = sentence[match.end() : part_end]
            left_words, right_words = _WORD.findall(left), _WORD.findall(right)
            if (
                _is_clause(left_words)
                and _is_clause(right_words)
                and _starts_with_subject(right_words)
                and not _OPEN_RELATIVE.search(left)
            ):
                clauses.append((start, match.start()))
                start = match.end()
        clauses.append((start, part_end))

    trimmed: list[tuple[int, int]] = []
    for clause_start, clause_end in clauses:
        connective = _LEADING_CONNECTIVE.match(sentence, clause_start, clause_end)
        # only strip a connective that starts a split-off clause, never the sentence's first word
        if connective and clause_start > 0:
            clause_start = connective.end()
        clause_start, clause_end = _trim(sentence, clause_start, clause_end)
        if clause_start < clause_end and any(ch.isalnum() for ch in sentence[clause_start:clause_end]):
            trimmed.append((clause_start, clause_end))
    return trimmed


def claim_spans(text: str) -> list[tuple[int, int]]:
    """Character offsets of the claims of `text`: sentences, split into independent clauses."""
    spans: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        spans.extend((start + a, start + b) for a, b in _clause_splits(text[start:end]))
    return spans


def split_claims(text: str) -> list[str]:
    """The claims of `text`, in order (see the module docstring for the rules)."""
    return [text[start:end] for start, end in claim_spans(text)]

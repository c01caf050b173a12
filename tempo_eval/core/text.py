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
    a new sentence ('"Stop!" she said') unless the whole paragraph is lower-cased ("the wall fell.
    it was 1989." is two sentences).

Lines
    A blank line always separates; so does a single line break, unless the next line starts with
    a lower-case letter or a digit (a wrapped line). Bulleted and numbered lines ("- x", "* x",
    "• x", "1. x", "2) x", "(a) x", "## x") are items of their own; the marker is not part of the
    item's span.

Claims
    Atomic, self-contained claims, each with the offsets of the stretch of text it comes from.
    A sentence is split
    - at ``;`` when both sides have at least three words;
    - at ", and" / ", but" / ", while" / ", whereas" / ", yet" / ", so" / ", although" / ", though"
      when both sides are clauses (each has a verb; the right side starts with its own subject,
      or with a short adverbial before it: ", and by 1351 it had ...");
    - at coordinated verb phrases: "The fire broke out on 2 September 1666 and burned until 6
      September" -> "The fire broke out on 2 September 1666" + "The fire burned until 6
      September" (the subject is carried into the second claim);
    - at a sentence-final relative clause ", which led to X" -> "This led to X";
    - at "when / after / before / while / as / because" clauses that have their own subject
      (", when East Germany opened its border", ", three years after the currency was introduced");
    - at appositions after a name ("the Bastille, a royal fortress, on 14 July 1789" -> "... the
      Bastille on 14 July 1789" + "The Bastille was a royal fortress").
    A relative clause inside the sentence (", which was completed in 1889, is ...") stays whole,
    and so do lists of names ("Smith, Jones, and Brown"). The joining word is not part of a
    claim's span. `atomic_claims` gives the claims with their spans; `split_claims` the texts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Claim", "atomic_claims", "sentence_spans", "split_claims", "split_sentences"]

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


def _ends_sentence(block: str, stop_start: int, stop: str, next_pos: int, lowered: bool = False) -> bool:
    """Decide whether the terminal `stop` at `stop_start` ends a sentence; `next_pos` is the next
    non-space. In lower-cased text (`lowered`) a lower-case word may start a sentence."""
    nxt = block[next_pos]
    if not (nxt.isupper() or nxt.isdigit() or nxt in _OPENING or (lowered and nxt.isalpha())):
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
    if key in _MAYBE_END or _ACRONYM.match(word) or (len(word) == 1 and (word.isupper() or lowered)):
        return _opener_follows(block, next_pos)
    return True


def _opener_follows(block: str, next_pos: int) -> bool:
    match = _NEXT_WORD.match(block, next_pos)
    return bool(match) and match.group(1).lower() in _SENTENCE_OPENERS


def _split_block(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans inside one block (a paragraph or a list item) of `text`."""
    spans: list[tuple[int, int]] = []
    sentence_start = start
    # lower-cased text (no capital at all): full stops must end sentences without one after them
    lowered = not any(ch.isupper() for ch in text[start:end])
    for match in _TERMINAL.finditer(text, start, end):
        next_pos = match.end()
        while next_pos < end and text[next_pos].isspace():
            next_pos += 1
        if next_pos >= end:
            break
        if _ends_sentence(text, match.start(), match.group(0), next_pos, lowered):
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
    tore won wound became woke shook swam bore burnt dealt dug fed felt heard hung lent let rid
    sent shone sat slid stank stung strove sunk sprang
    lies stands remains contains includes hosts holds serves covers becomes owns employs houses
    """
)
_NOT_VERBS = frozenset({"hundred", "united", "red", "bed", "need", "seed", "speed", "feed", "indeed", "sacred", "naked", "wicked", "kindred", "allied", "limited", "aged", "based", "armed", "used", "unrelated", "related"})
_SUBJECT_WORDS = _words(
    """
    he she it they we i you this that these those there his her its their our my the a an some
    many most all both each every no neither either another other such one two three four five
    """
)
_PRONOUNS = _words("he she it they we i you this that these those there")
_PREPOSITIONS = _words(
    "on in at by to from for with after before during since until about around over under into of as than"
)
_ADVERBIAL_OPENERS = _words("by in on at after before during since until within then later now soon eventually")
_CLAUSE_CONJUNCTION = re.compile(r",\s+(?:and|but|while|whereas|yet|so|although|though)\s+")
_VP_CONJUNCTION = re.compile(r",?\s+(?:and|but)\s+")
_VP_ADVERBS = _words("then later also thus subsequently afterwards soon still eventually")
_SUBORDINATE = re.compile(
    r",\s+(?:(?:[a-z0-9]+\s+){0,3}?)(?:when|after|before|while|as|because|since|until)\s+"
)
_RELATIVE_TAIL = re.compile(r",\s+which\s+")
_TIME_ADJUNCT = re.compile(r",\s+(after|before|following|during)\s+")
_PARTICIPLE = re.compile(r",\s+(?=(?:using|arriving|including|killing|leaving|making|becoming|causing|ending|making|destroying|bringing)\s)")
_APPOSITION = re.compile(r"(?<=[a-z]),\s+(?P<body>(?:a|an|the)\s+[a-z][^,;]{2,60}?),\s+")
_SEMICOLON = re.compile(r";\s*")
_LEADING_CONNECTIVE = re.compile(
    r"(?:and|but|yet|so|while|whereas|however|moreover|also|although|though)\b,?\s*", re.IGNORECASE
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+")
_OPEN_RELATIVE = re.compile(r",\s+(?:which|who|whom|whose|where)\b[^,]*$")
_PAST = _words("was were had did")


@dataclass(frozen=True)
class Claim:
    """One atomic claim: `text` stands alone (a carried-over subject may start it); `start`/`end`
    are the offsets of the stretch of the source text it comes from."""

    text: str
    start: int
    end: int


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


def _opens_clause(words: list[str]) -> bool:
    """The right side of ", and ..." is a clause of its own: it starts with its subject ("the
    museum ...", "thousands of homes lost ..."), or with a short adverbial ("by 1351", "in 1990")
    and then a subject and a verb."""
    if _starts_with_subject(words):
        return True
    verb = _first_verb(words)
    if (
        verb is not None and 1 <= verb <= 4 and words[0].lower() not in _PREPOSITIONS
        and not any(w.lower() in _PREPOSITIONS - {"of"} for w in words[:verb])
    ):
        return True
    if words and words[0].lower() in _ADVERBIAL_OPENERS:
        for k in range(1, min(4, len(words) - 1)):
            if words[k].lower() in _PRONOUNS or words[k][0].isupper():
                return _is_clause(words[k:]) and not _is_verb(words[k])
    return False


def _first_verb(words: list[str]) -> int | None:
    return next((i for i, word in enumerate(words) if _is_verb(word)), None)


def _subject(clause: str) -> str | None:
    """The subject of a clause: the noun phrase just before its first verb ("The fire",
    "William of Normandy", "Apollo 11"); None when it cannot be told."""
    tokens = [(m.group(0), m.start()) for m in re.finditer(r"[A-Za-z][A-Za-z'’.-]*|\d+|,", clause)]
    words = [t for t, _ in tokens]
    verb = _first_verb(words)
    if verb is None or verb == 0:
        return None
    start = verb
    while start > 0:
        word = words[start - 1]
        low = word.lower()
        if word == "," or low in _PREPOSITIONS - {"of"}:
            break
        if word.isdigit() and not (start >= 2 and words[start - 2][0].isupper() and len(word) <= 3):
            break
        start -= 1
    if start == verb:
        return None
    subject = clause[tokens[start][1] : tokens[verb - 1][1] + len(words[verb - 1])]
    return subject[0].upper() + subject[1:]


def _past(clause: str) -> bool:
    return any(w.lower() in _PAST or (w.lower().endswith("ed") and _is_verb(w)) or w.lower() in _IRREGULAR_VERBS
               for w in _WORD.findall(clause))


def _carry(subject: str | None, rest: str) -> str:
    """`rest` with the subject put in front when it has none of its own."""
    if subject is None:
        return rest
    return f"{subject} {rest}"


def _split_vp(piece: str, offset: int) -> list[Claim]:
    """Split coordinated verb phrases of one clause: "X broke out on ... and burned until ..."."""
    subject = _subject(piece)
    claims: list[Claim] = []
    start = 0
    for match in _VP_CONJUNCTION.finditer(piece):
        left, right = piece[start : match.start()], piece[match.end() :]
        left_words, right_words = _WORD.findall(left), _WORD.findall(right)
        verb = _first_verb(left_words)
        if verb is None or len(left_words) - verb < 3 or len(right_words) < 2 or _OPEN_RELATIVE.search(left):
            continue  # the left verb needs its object or complement before a split
        right_verb = _first_verb(right_words)
        own_subject = (
            right_verb is not None and 0 < right_verb <= 4 and _starts_with_subject(right_words)
            and "," not in match.group(0)
            and all(w[0].isupper() or w.isdigit() or w.lower() in _SUBJECT_WORDS for w in right_words[:right_verb])
        ) or (
            # lower-cased text: "the wall fell in 1989 and germany was reunified in 1990"
            piece.islower() and right_verb is not None and 0 < right_verb <= 2
            and not any(w.lower() in _PREPOSITIONS for w in right_words[:right_verb])
        )
        starts_with_verb = _is_verb(right_words[0]) or (
            right_words[0].lower() in _VP_ADVERBS and _is_verb(right_words[1])
        )
        if (subject is not None and starts_with_verb) or own_subject:
            claims.append(Claim(piece[start : match.start()].strip(" ,"), offset + start, offset + match.start()))
            if own_subject:  # "... and King Harold II was killed": a clause of its own
                claims.append(Claim(piece[match.end() :], offset + match.end(), offset + len(piece)))
                return claims
            start = match.end()
    if not claims:
        return [Claim(piece, offset, offset + len(piece))]
    claims.append(Claim(_carry(subject, piece[start:]), offset + start, offset + len(piece)))
    return claims


def _split_subordinate(piece: str, offset: int) -> list[Claim]:
    """Split off a final relative clause (", which led to X" -> "This led to X") and "when /
    after / before ..." clauses that have their own subject."""
    relative = None
    for match in _RELATIVE_TAIL.finditer(piece):
        if "," not in piece[match.end() :]:
            relative = match
    if relative is not None and _is_clause(_WORD.findall(piece[relative.end() :])):
        left = piece[: relative.start()]
        rest = piece[relative.end() :]
        return [
            *_split_subordinate(left, offset),
            Claim(f"This {rest}", offset + relative.end(), offset + len(piece)),
        ]
    participle = _PARTICIPLE.search(piece)
    if participle is not None and _is_clause(_WORD.findall(piece[: participle.start()])):
        subject = _subject(piece[: participle.start()])
        if subject is not None:
            return [
                *_split_subordinate(piece[: participle.start()], offset),
                Claim(_carry(subject, piece[participle.end() :]), offset + participle.end(), offset + len(piece)),
            ]
    for match in _SUBORDINATE.finditer(piece):
        left, right = piece[: match.start()], piece[match.end() :]
        right_words = _WORD.findall(right)
        if _is_clause(_WORD.findall(left)) and _starts_with_subject(right_words) and _is_clause(right_words):
            return [Claim(left, offset, offset + match.start()), *_split_subordinate(right, offset + match.end())]
    # ", after a working draft in 2000": a time adjunct with a year of its own; the main clause is
    # one claim and the whole sentence (the order of events) another
    adjunct = _TIME_ADJUNCT.search(piece)
    if adjunct is not None:
        left, right = piece[: adjunct.start()], piece[adjunct.end() :]
        if _is_clause(_WORD.findall(left)) and not _is_clause(_WORD.findall(right)) and re.search(r"\d", right):
            whole = f"{left} {adjunct.group(1)} {right}"
            return [Claim(left, offset, offset + adjunct.start()), Claim(whole, offset, offset + len(piece))]
    return [Claim(piece, offset, offset + len(piece))]


def _split_apposition(piece: str, offset: int) -> list[Claim]:
    """"A crowd stormed the Bastille, a royal fortress and prison, on 14 July 1789" -> the sentence
    without the apposition, and "The Bastille was a royal fortress and prison"."""
    match = _APPOSITION.search(piece)
    if match is None:
        return [Claim(piece, offset, offset + len(piece))]
    before = piece[: match.start()]
    head = re.search(r"((?:the\s+)?(?:[A-Z][\w'’-]*\s+)*[A-Z][\w'’-]*|the\s+[a-z]+)$", before)
    body_words = _WORD.findall(match.group("body"))
    if head is None or any(_is_verb(w) for w in body_words) or not _is_clause(_WORD.findall(before)):
        return [Claim(piece, offset, offset + len(piece))]
    name = head.group(1)
    main = before + " " + piece[match.end() :]
    verb = "was" if _past(piece) else "is"
    apposition = f"{name[0].upper()}{name[1:]} {verb} {match.group('body')}"
    return [Claim(main, offset, offset + len(piece)), Claim(apposition, offset + match.start("body"), offset + match.end("body"))]


def _independent_clauses(sentence: str) -> list[tuple[int, int]]:
    """Split one sentence (offsets relative to it) at ';' and at ', and <subject> ...'."""
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
                and _opens_clause(right_words)
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


def _tidy(claim: Claim) -> Claim | None:
    text = re.sub(r"\s+,", ",", re.sub(r"\s{2,}", " ", claim.text)).strip(" ,;")
    if not any(ch.isalnum() for ch in text):
        return None
    return Claim(text, claim.start, claim.end)


def atomic_claims(text: str) -> list[Claim]:
    """The atomic claims of `text` with their source offsets (rules in the module docstring)."""
    claims: list[Claim] = []
    for sentence_start, sentence_end in sentence_spans(text):
        sentence = text[sentence_start:sentence_end]
        for clause_start, clause_end in _independent_clauses(sentence):
            clause = sentence[clause_start:clause_end]
            base = sentence_start + clause_start
            for sub in _split_subordinate(clause, base):
                verbatim = sub.text == text[sub.start : sub.end]
                for vp in _split_vp(sub.text, sub.start) if verbatim else [sub]:
                    pieces = _split_apposition(vp.text, vp.start) if vp.text == text[vp.start : vp.end] else [vp]
                    for piece in pieces:
                        tidy = _tidy(piece)
                        if tidy is not None:
                            claims.append(tidy)
    return claims


def split_claims(text: str) -> list[str]:
    """The atomic claims of `text`, each able to stand alone (see the module docstring)."""
    return [claim.text for claim in atomic_claims(text)]

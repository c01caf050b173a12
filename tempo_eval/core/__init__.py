"""Focus times, text splitting and conversation turns."""

from tempo_eval.core.extract import (
    FocusTimeExtractor,
    extract_aft,
    extract_dft,
    extract_qft,
    parse_reference_date,
)
from tempo_eval.core.focus import FocusTime, YearSpan, as_year_set
from tempo_eval.core.text import sentence_spans, split_claims, split_sentences
from tempo_eval.core.turn import Turn

__all__ = [
    "FocusTime", "FocusTimeExtractor", "Turn", "YearSpan", "as_year_set", "extract_aft", "extract_dft",
    "extract_qft", "parse_reference_date", "sentence_spans", "split_claims", "split_sentences",
]

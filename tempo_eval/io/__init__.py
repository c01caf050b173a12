"""Loaders for datasets, TREC runs and qrels, and conversations, with clear errors.

Every input problem raises `InputError` (a `ValueError`) naming the file, row or line, column or
field, what was found and what was expected.
"""

from tempo_eval.io.conversation import load_conversations, parse_conversation
from tempo_eval.io.dataset import CANONICAL_COLUMNS, Dataset, detect_mapping, load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.io.trec_stream import QueryCodes, read_qrels, read_runs

__all__ = [
    "CANONICAL_COLUMNS",
    "Dataset",
    "InputError",
    "QueryCodes",
    "detect_mapping",
    "load_conversations",
    "load_dataset",
    "parse_conversation",
    "read_qrels",
    "read_runs",
]

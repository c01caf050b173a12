"""A conversation turn, shaped like DeepEval's `Turn` so test cases port over unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field

ROLES = ("user", "assistant")


@dataclass
class Turn:
    """One message of a conversation.

    `role` is "user" or "assistant"; `retrieval_context` holds the documents the assistant had
    when it wrote this turn (empty for user turns, usually).
    """

    role: str
    content: str
    retrieval_context: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"Turn.role must be 'user' or 'assistant', got {self.role!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"Turn.content must be a string, got {type(self.content).__name__}")
        if self.retrieval_context is None:
            self.retrieval_context = []
        if isinstance(self.retrieval_context, (str, set, frozenset)) or not isinstance(
            self.retrieval_context, (list, tuple)
        ):
            raise TypeError(
                "Turn.retrieval_context must be a list of strings, got "
                f"{type(self.retrieval_context).__name__}"
            )
        for i, doc in enumerate(self.retrieval_context):
            if not isinstance(doc, str):
                raise TypeError(f"Turn.retrieval_context[{i}] must be a string, got {type(doc).__name__}")
        self.retrieval_context = list(self.retrieval_context)

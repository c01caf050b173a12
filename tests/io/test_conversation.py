"""Conversations: DeepEval-style JSON turns and pasted transcripts with context blocks."""

from __future__ import annotations

import json

import pytest

from tempo_eval.core.turn import Turn
from tempo_eval.io.conversation import parse_conversation
from tempo_eval.io.errors import InputError

TURNS = [
    {"role": "user", "content": "When did the Berlin Wall fall?"},
    {"role": "assistant", "content": "In 1989.", "retrieval_context": ["The Wall fell on 9 November 1989."]},
    {"role": "user", "content": "And reunification?", "retrieval_context": None},
    {"role": "assistant", "content": "In 1990.", "retrieval_context": ["Germany reunified in 1990."]},
]
EXPECTED = [
    Turn("user", "When did the Berlin Wall fall?"),
    Turn("assistant", "In 1989.", ["The Wall fell on 9 November 1989."]),
    Turn("user", "And reunification?"),
    Turn("assistant", "In 1990.", ["Germany reunified in 1990."]),
]


def test_json_list_of_turns() -> None:
    assert parse_conversation(json.dumps(TURNS)) == EXPECTED


def test_json_object_with_turns_and_other_keys_ignored() -> None:
    document = {"scenario": "history", "turns": [dict(t, user_id="u1") for t in TURNS]}
    assert parse_conversation(json.dumps(document, indent=2)) == EXPECTED


def test_json_roles_are_case_insensitive() -> None:
    turns = parse_conversation('[{"role": "User", "content": "hi"}, {"role": "ASSISTANT", "content": "hello"}]')
    assert [t.role for t in turns] == ["user", "assistant"]


def test_transcript_with_context_block_before_the_answer() -> None:
    text = """User: When did the Berlin Wall fall?
Context:
- The Wall fell on 9 November 1989.
* Crowds crossed that night.
Assistant: In 1989.
user: And reunification?
Retrieval context: Germany reunified in 1990.
assistant: In 1990.
"""
    assert parse_conversation(text) == [
        Turn("user", "When did the Berlin Wall fall?"),
        Turn("assistant", "In 1989.", ["The Wall fell on 9 November 1989.", "Crowds crossed that night."]),
        Turn("user", "And reunification?"),
        Turn("assistant", "In 1990.", ["Germany reunified in 1990."]),
    ]


def test_transcript_continuation_lines_belong_to_the_turn() -> None:
    text = "User: Tell me\nabout 1989.\n\nAssistant: The Wall fell.\n\nThen, in 1990,\nreunification.\n"
    turns = parse_conversation(text)
    assert turns[0].content == "Tell me\nabout 1989."
    assert turns[1].content == "The Wall fell.\n\nThen, in 1990,\nreunification."


def test_transcript_accepts_human_ai_and_bot_labels() -> None:
    text = "Human: hi\nAI: hello\nHUMAN: how are you?\nBot: fine\n"
    assert [(t.role, t.content) for t in parse_conversation(text)] == [
        ("user", "hi"), ("assistant", "hello"), ("user", "how are you?"), ("assistant", "fine")
    ]


def test_a_context_block_goes_to_the_next_assistant_turn_even_across_a_user_turn() -> None:
    text = "Context:\nplain line doc\n\n- bullet doc\nUser: q\nContexts: second block\nAssistant: a\n"
    turns = parse_conversation(text)
    assert turns == [Turn("user", "q"), Turn("assistant", "a", ["plain line doc", "bullet doc", "second block"])]


def test_transcript_with_windows_line_endings() -> None:
    turns = parse_conversation("User: q\r\nContext:\r\n- doc\r\nAssistant: a\r\n")
    assert turns == [Turn("user", "q"), Turn("assistant", "a", ["doc"])]


def test_labels_inside_a_line_are_text() -> None:
    turns = parse_conversation("User: what did the user: field mean?\nAssistant: It holds the user: name.")
    assert turns[1].content == "It holds the user: name."


def test_errors_are_input_errors_with_the_given_source_name() -> None:
    with pytest.raises(InputError, match=r"^chat\.txt, line 1: found 'hello'"):
        parse_conversation("hello\nAssistant: hi", source="chat.txt")


def test_a_non_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="text must be a string"):
        parse_conversation(TURNS)  # type: ignore[arg-type]

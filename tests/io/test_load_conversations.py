"""load_conversations: one row per conversation, single conversations, ids, and clear errors."""

from __future__ import annotations

import json

import pytest

from tempo_eval.io import InputError, load_conversations

TURNS = [{"role": "user", "content": "When?"},
         {"role": "assistant", "content": "In 1936.", "retrieval_context": ["It opened in 1936."]}]
EXPECTED = [{"role": "user", "content": "When?", "retrieval_context": []},
            {"role": "assistant", "content": "In 1936.", "retrieval_context": ["It opened in 1936."]}]


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (json.dumps(TURNS), "one.json"),
        (json.dumps({"turns": TURNS}), "one.json"),
        ("Context: It opened in 1936.\nUser: When?\nAssistant: In 1936.\n", "one.txt"),
    ],
)
def test_a_single_conversation_in_the_existing_formats_is_one_row_c1(data: str, name: str) -> None:
    dataset = load_conversations(data.encode(), name=name)
    assert dataset.frame["conversation_id"].tolist() == ["c1"]
    turns = dataset.frame["turns"][0]
    assert [t["role"] for t in turns] == ["user", "assistant"]
    assert turns[1]["retrieval_context"] == ["It opened in 1936."]


def test_conversation_ids_come_from_the_file_when_it_has_them() -> None:
    lines = [json.dumps({"conversation_id": "a7", "turns": TURNS}), json.dumps({"name": 12, "turns": TURNS})]
    dataset = load_conversations("\n".join(lines).encode(), name="convs.jsonl")
    assert dataset.frame["conversation_id"].tolist() == ["a7", "12"]
    assert dataset.frame["turns"].tolist() == [EXPECTED, EXPECTED]
    assert dataset.source_format == "jsonl" and len(dataset.content_hash) == 64


def test_ragas_tool_messages_feed_the_next_answer_and_empty_tool_calls_are_dropped() -> None:
    sample = {"user_input": [
        {"type": "human", "content": "When?"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "search", "args": {}}]},
        {"type": "tool", "content": "It opened in 1936."},
        {"type": "tool", "content": "It is a dam."},
        {"type": "ai", "content": "In 1936."},
    ]}
    turns = load_conversations(json.dumps([sample]).encode(), name="multi.json").frame["turns"][0]
    assert turns == [{"role": "user", "content": "When?", "retrieval_context": []},
                     {"role": "assistant", "content": "In 1936.",
                      "retrieval_context": ["It opened in 1936.", "It is a dam."]}]


@pytest.mark.parametrize(
    ("data", "name", "fragment", "place"),
    [
        ("\n".join([json.dumps({"id": "x", "turns": TURNS})] * 2), "c.jsonl", "appears twice", {"row": 2, "line": 2}),
        (json.dumps([{"user_input": [{"type": "human", "content": "q"}, {"type": "ai", "content": "a"},
                                     {"type": "tool", "content": "late"}]}]), "c.json",
         "come after the last assistant message", {"column": "user_input"}),
        (json.dumps([{"user_input": [{"type": "system", "content": "be nice"}]}]), "c.json",
         "expected 'human', 'ai' or 'tool'", {"column": "user_input"}),
        (json.dumps([{"turns": [{"role": "user", "content": "only a question"}]}]), "c.json",
         "no assistant turn", {}),
        (json.dumps([{"query": "q", "answer": "a"}]), "c.json", "found no \"turns\" or \"user_input\"", {}),
        ("", "c.json", "the file is empty", {}),
        (json.dumps([{"scenario": "A user asks about dams", "turns": None}]), "c.json", "only a scenario",
         {"column": "turns"}),
        ("scenario,turns,expected_outcome\nA user asks about dams,,dates\n", "c.csv", "only a scenario",
         {"column": "turns"}),
    ],
)
def test_malformed_conversation_files_name_the_place(data: str, name: str, fragment: str, place: dict) -> None:
    with pytest.raises(InputError) as caught:
        load_conversations(data.encode(), name=name)
    assert fragment in str(caught.value)
    assert name in str(caught.value)
    for key, value in place.items():
        assert getattr(caught.value, key) == value


def test_numpy_reprs_of_messages_read_as_literals_never_evaluated() -> None:
    import ast

    from tempo_eval.io.conversation import _numpy_repr_as_literal

    text = ("[{'content': 'an array(1) of words', 'type': 'human', 'tool_calls': None}\n"
            " {'content': '', 'type': 'ai', 'tool_calls': array([{'name': 's', 'args': {'n': 1}}],\n"
            "       dtype=object)}]")
    assert ast.literal_eval(_numpy_repr_as_literal(text)) == [
        {"content": "an array(1) of words", "type": "human", "tool_calls": None},
        {"content": "", "type": "ai", "tool_calls": [{"name": "s", "args": {"n": 1}}]},
    ]
    with pytest.raises(ValueError):  # a call that is not numpy's array(...) stays a call: refused
        ast.literal_eval(_numpy_repr_as_literal("[__import__('os')]"))


def test_a_broken_conversation_file_says_where_without_a_doubled_at(tmp_path) -> None:
    from tempo_eval.io.conversation import load_conversations
    from tempo_eval.io.errors import InputError

    path = tmp_path / "broken.json"
    path.write_text('{"turns": [{"role": "user", "content": "unterminated}]}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_conversations(path)
    message = str(caught.value)
    assert "starting at character" in message and "at at" not in message

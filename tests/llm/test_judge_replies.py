"""The judge's replies (issue 11): the reply size cap, two answers in one reply, and the key a judge
echoes is masked everywhere it could be stored or printed, whatever variable it came from."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pydantic
import pytest

from tempo_eval.cli import main
from tempo_eval.llm.provider import OpenAIProvider, parse_json_content
from tests.support.openai_server import Reply, ScriptedOpenAIServer, json_reply


class Grade(pydantic.BaseModel):
    relevance_score: int
    reason: str = ""


def _provider(server: ScriptedOpenAIServer, **options: object) -> OpenAIProvider:
    return OpenAIProvider("judge", base_url=server.base_url, api_key="sk-test-0000000000",
                          max_retries=0, **options)  # type: ignore[arg-type]


def test_a_reply_over_the_size_cap_is_an_error_and_is_not_kept_whole() -> None:
    huge = json.dumps({"relevance_score": 1, "reason": "x" * 200_000})
    with ScriptedOpenAIServer(lambda request: Reply(content=huge)) as server:
        reply = _provider(server, max_reply_chars=10_000).judge("grade", Grade)
    assert not reply.ok
    assert reply.error is not None and "200,0" in reply.error and "at most 10,000" in reply.error
    assert reply.raw is not None and len(reply.raw) == 10_000


def test_the_default_cap_accepts_ordinary_replies_and_refuses_megabytes() -> None:
    with ScriptedOpenAIServer(lambda request: json_reply({"relevance_score": 2, "reason": "ok" * 1000})) as server:
        assert _provider(server).judge("grade", Grade).ok
    with ScriptedOpenAIServer(lambda request: json_reply({"relevance_score": 2, "reason": "y" * 2_000_000})) as server:
        reply = _provider(server).judge("grade", Grade)
    assert not reply.ok and "max_reply_chars" in (reply.error or "")


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"relevance_score": 3}\n```\nor maybe\n```json\n{"relevance_score": 0}\n```',
        '{"relevance_score": 3}\n{"relevance_score": 0}',
        '{"relevance_score": 3} {"relevance_score": 0}',
    ],
)
def test_two_json_answers_in_one_reply_are_an_error_not_the_first(content: str) -> None:
    with pytest.raises(ValueError, match="ambiguous reply"):
        parse_json_content(content)
    with ScriptedOpenAIServer(lambda request: Reply(content=content)) as server:
        reply = _provider(server).judge("grade", Grade)
    assert not reply.ok and "ambiguous reply" in (reply.error or "")


def test_one_fenced_answer_is_still_accepted() -> None:
    assert parse_json_content('Here:\n```json\n{"relevance_score": 3}\n```') == {"relevance_score": 3}


def test_an_echoed_key_is_masked_in_the_reply_content() -> None:
    key = "sk-test-0000000000"
    with ScriptedOpenAIServer(lambda request: json_reply({"relevance_score": 1, "reason": f"key {key}"})) as server:
        reply = _provider(server).judge("grade", Grade)
    assert reply.ok and key not in (reply.raw or "") and reply.data.reason == "key ***"  # type: ignore[union-attr]


def test_a_judge_echoing_a_key_from_any_variable_never_gets_it_stored_or_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "hunter2-not-named-like-a-key-123456"
    monkeypatch.setenv("OTHER_VAR", secret)  # a name that does not look like a secret
    rows = [
        {"query_id": f"q{i}", "query": "When was it built?", "answer": f"It was built in {2000 + i}.",
         "contexts": [f"Built in {2000 + i}."]}
        for i in range(3)
    ]
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    def responder(request: dict) -> Reply:
        text = request["messages"][-1]["content"]
        if "2002" in text:  # a client error quoting the key back
            return Reply(status=400, raw_body=json.dumps({"error": {"message": f"bad key {secret}"}}))
        return json_reply({"verdict": "SUPPORTED", "evidence": f"Built ({secret}).", "reason": f"key={secret}"})

    out = tmp_path / "r.csv"
    with ScriptedOpenAIServer(responder) as server:
        try:
            code = main(["evaluate", str(data), "--metrics", "temporal_faithfulness", "--verifier", "llm",
                         "--model", "judge", "--base-url", server.base_url, "--api-key-env", "OTHER_VAR",
                         "--out", str(out), "--no-progress", "--max-retries", "0"])
        except SystemExit as exit_:
            code = exit_.code
    printed = capsys.readouterr()
    assert code == 0, printed.err
    frame = pd.read_csv(out)
    assert frame["score"].notna().sum() == 2  # the judge's verdicts were used
    assert secret not in printed.out + printed.err + out.read_text(encoding="utf-8")
    home = Path(os.environ["TEMPO_EVAL_HOME"])
    stored = b"".join(path.read_bytes() for path in home.iterdir())
    assert b"***" in stored  # the echoed text was stored, masked
    assert secret.encode() not in stored

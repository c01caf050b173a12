"""The dashboard's judge check shows the plain-HTTP warning (issue 19.10)."""

from __future__ import annotations

from tests.support.openai_server import ScriptedOpenAIServer, json_reply

KEY = "sk-hostile-test-0000000000"


def test_the_dashboard_check_shows_the_plain_http_warning() -> None:
    from tempo_eval_app.verifier_choice import check_judge

    with ScriptedOpenAIServer(lambda request: json_reply({"ok": True})) as server:
        ok, message = check_judge(server.base_url, "judge", KEY)
    assert ok and "plain http" not in message  # 127.0.0.1 is this machine
    ok, message = check_judge("http://judge.invalid:9/v1", "judge", KEY, timeout=1.0)
    assert not ok and "plain http" in message


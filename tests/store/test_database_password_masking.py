"""The PostgreSQL password in `TEMPO_EVAL_DB` is never shown: not in the database's name as
messages give it, not in an error, and it is masked like a judge's key in stored or logged text."""

from __future__ import annotations

import pytest

from tempo_eval.common.secrets import redact
from tempo_eval.store.db import connect, describe_location
from tempo_eval.store.errors import WorkspaceError

PASSWORD = "S3cretDbPass!x"
ENCODED = "S3cret@DbPass!x"


@pytest.mark.parametrize("url", [
    f"postgresql://ana:{PASSWORD}@db.example:5432/tempo",
    f"postgresql://ana@db.example:5432/tempo?password={PASSWORD}",
    f"postgresql://ana@db.example/tempo?sslmode=require&password={PASSWORD}",
    "postgresql://ana:S3cret@DbPass!x@db.example:5432/tempo",  # an '@' left unencoded in it
    "postgresql://ana:S3cret/DbPass:x@db.example:5432/tempo",
    f"postgresql://ana:{PASSWORD}@db.example:notaport/tempo",  # unparsable port
])
def test_the_database_as_messages_name_it_hides_the_password(url: str) -> None:
    shown = describe_location(url)
    assert "S3cret" not in shown and "DbPass" not in shown
    assert "db.example" in shown and "***" in shown


@pytest.mark.parametrize("url", [
    f"postgresql://ana@127.0.0.1:1/tempo?password={PASSWORD}",
    f"postgresql://ana@127.0.0.1:1/tempo?password={PASSWORD}&sslmode=bogus",
    f"postgresql://ana:{PASSWORD}@127.0.0.1:notaport/tempo",
])
def test_an_unusable_database_url_is_reported_without_its_password(url: str) -> None:
    with pytest.raises(WorkspaceError) as caught:
        connect(url)
    assert "S3cretDbPass" not in str(caught.value)  # nor any encoding of it
    assert "127.0.0.1" in str(caught.value)


@pytest.mark.parametrize(("url", "password"), [
    (f"postgresql://ana:{PASSWORD}@db.example:5432/tempo", PASSWORD),
    ("postgresql://ana:S3cret%40DbPass%21x@db.example:5432/tempo", ENCODED),  # percent-encoded
    (f"postgresql://ana@db.example/tempo?password={PASSWORD}", PASSWORD),
])
def test_the_database_password_is_masked_like_a_judge_key(url: str, password: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_DB", url)
    masked = redact(f"worker failed: could not log in as ana with {password}")
    assert password not in masked and masked.startswith("worker failed: could not log in as ana")


def test_the_distributed_engines_actors_are_not_handed_the_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray actors read verdicts from a SQLite file or a shipped snapshot, never from the server:
    the URL, password and all, is not among what is sent to them (and kept by Ray with the actor)."""
    from tempo_eval.engine.distributed.engine import _cache_source

    monkeypatch.setenv("TEMPO_EVAL_DB", f"postgresql://ana:{PASSWORD}@db.example:5432/tempo")
    source, _ = _cache_source(object(), [], None)  # no verifier: nothing to snapshot, ray unused
    assert PASSWORD not in repr(source) and source.db_path is None


def test_on_sqlite_the_actors_still_read_the_workspace_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from tempo_eval.engine.distributed.engine import _cache_source
    from tempo_eval.store.db import default_db_path

    monkeypatch.delenv("TEMPO_EVAL_DB", raising=False)
    source, _ = _cache_source(object(), [], None)
    assert source.db_path == str(default_db_path())

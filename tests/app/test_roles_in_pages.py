"""Roles enforced in the dashboard where each action happens (`tempo_eval_app.permissions`), and
the door (`tempo_eval_app.sign_in`): run with Streamlit's AppTest, the acting user's role set by
patching who acts (the real sign-in through an OIDC provider is tests/browser/test_sign_in.py).

A viewer sees each writing control disabled with the reason; a viewer whose page was drawn
before (a stale page, a crafted request) still gets the refusal where the work is done, and
nothing is queued, stored or deleted. An analyst deletes their own runs, not another's."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.store.jobs import JobQueue
from tempo_eval.store.runs import RunStore
from tempo_eval_app import permissions, worker_jobs
from tests.app.test_pages import APP, TIMEOUT, goto, open_app, store_focus_time_run


@pytest.fixture
def acting(monkeypatch: pytest.MonkeyPatch):
    """`acting(role, user)`: who the pages act as from now on."""
    def act(role: str | None, user: str) -> None:
        monkeypatch.setattr(permissions, "current_role", lambda: role)
        monkeypatch.setattr(permissions, "current_user", lambda: user)

    monkeypatch.setattr(worker_jobs, "spawn_worker", lambda **_: None)  # jobs stay queued: counted
    return act


def record_owner(run_id: int, owner: str) -> None:
    """Say who made a run (the `created_by` column of the record of who did what; added here when
    this workspace's schema has not got it yet)."""
    store = RunStore()
    columns = [row[1] for row in store.connection.execute("PRAGMA table_info(runs)")]
    if "created_by" not in columns:
        store.connection.execute("ALTER TABLE runs ADD COLUMN created_by TEXT")
    store.connection.execute("UPDATE runs SET created_by = ? WHERE id = ?", (owner, run_id))
    store.connection.commit()
    store.close()


def plain(text: str) -> str:
    """A Markdown-escaped message as the user reads it."""
    return text.replace("\\", "").replace("\u2060", "")


def captions(at: AppTest) -> str:
    return plain(" ".join(c.value for c in at.caption))


def test_a_viewer_sees_the_evaluate_button_disabled_with_the_reason(acting) -> None:
    acting("viewer", "v@x.org")
    at = goto(open_app(), "evaluate")
    assert not at.exception
    assert at.button(key="run_evaluation").disabled
    assert "You cannot start an evaluation: your role is viewer" in captions(at)


def test_a_viewer_demoted_after_the_page_was_drawn_queues_nothing(acting) -> None:
    acting("analyst", "a@x.org")
    at = goto(open_app(), "evaluate")
    assert not at.button(key="run_evaluation").disabled
    acting("viewer", "a@x.org")  # demoted meanwhile: the click comes from the page drawn before
    at.button(key="run_evaluation").click().run()
    assert not at.exception
    assert at.button(key="run_evaluation").disabled
    assert JobQueue().jobs(kind="evaluate") == []


def test_the_job_and_store_calls_refuse_a_viewer_whatever_called_them(acting, tmp_path) -> None:
    acting("viewer", "v@x.org")
    with pytest.raises(permissions.PermissionDenied, match="start an evaluation"):
        worker_jobs.start_evaluation({"tf": True}, 1, "crafted", None)
    with pytest.raises(permissions.PermissionDenied, match="upload or store a dataset"):
        worker_jobs.page_job("dataset_upload", {"path": str(tmp_path / "x.csv"), "store": True}, "crafted")
    with pytest.raises(permissions.PermissionDenied, match="start an evaluation"):
        worker_jobs.resume({"id": 1, "needs_key": False}, None)
    assert JobQueue().jobs() == []
    from tempo_eval_app import store_reads

    with pytest.raises(permissions.PermissionDenied, match="upload or store a dataset"):
        store_reads.save_dataset(object())
    assert RunStore().list_datasets().empty


def test_a_viewer_cannot_delete_a_run_even_from_a_confirmation_drawn_before(acting) -> None:
    run_id = store_focus_time_run("someone's")
    record_owner(run_id, "a@x.org")
    acting("viewer", "v@x.org")
    at = goto(open_app(), "runs")
    at.multiselect(key="runs_selected").set_value([run_id]).run()
    assert at.button(key="runs_delete_run").disabled
    assert at.button(key=f"runs_save_{run_id}").disabled
    assert "You cannot delete a run: your role is viewer" in captions(at)
    acting("admin", "root@x.org")  # the confirmation drawn for an admin...
    at.run()
    at.button(key="runs_delete_run").click().run()
    acting("viewer", "v@x.org")  # ...clicked by a viewer
    at.button(key="runs_delete_run_yes").click().run()
    assert not at.exception
    assert any("Not deleted: You cannot delete a run" in w.value for w in at.warning), [w.value for w in at.warning]
    assert run_id in RunStore().list_runs()["id"].tolist()


def test_an_analyst_deletes_their_own_run_and_not_anothers(acting) -> None:
    mine = store_focus_time_run("mine")
    theirs = store_focus_time_run("theirs", k=3)
    record_owner(mine, "a@x.org")
    record_owner(theirs, "b@x.org")
    acting("analyst", "a@x.org")
    at = goto(open_app(), "runs")
    at.multiselect(key="runs_selected").set_value([theirs]).run()
    assert at.button(key="runs_delete_run").disabled
    assert "You cannot delete a run made by b@x.org" in captions(at), captions(at)
    assert at.button(key="runs_delete_dataset").disabled  # a dataset takes every run with it: admin
    at.multiselect(key="runs_selected").set_value([mine]).run()
    at.button(key="runs_delete_run").click().run()
    at.button(key="runs_delete_run_yes").click().run()
    assert not at.exception
    assert RunStore().list_runs()["id"].tolist() == [theirs]


def test_without_sign_in_the_local_user_is_an_admin_and_nothing_is_disabled() -> None:
    from tempo_eval_app.identity import current_role

    assert current_role() == "admin"
    at = goto(open_app(), "evaluate")
    assert not at.button(key="run_evaluation").disabled
    assert "You cannot" not in captions(at)


@pytest.mark.parametrize("address", ["0.0.0.0", "192.168.1.20", "", "::"])
def test_without_sign_in_a_non_loopback_address_serves_nothing(address: str) -> None:
    from streamlit import config

    before = config.get_option("server.address")
    config.set_option("server.address", address)
    try:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
        evaluate = AppTest.from_file(APP, default_timeout=TIMEOUT)
        evaluate.switch_page("views/evaluate.py").run()
    finally:
        config.set_option("server.address", before)
    for shown in (at, evaluate):
        assert not shown.exception
        assert [t.value for t in shown.title] == ["tempo-eval"]
        assert any("without sign-in" in plain(e.value) for e in shown.error)
        assert not shown.button  # not a page's control


@pytest.mark.parametrize("address", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_addresses_are_served(address: str) -> None:
    from tempo_eval_app.sign_in import loopback

    assert loopback(address)


AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "c",
        "client_secret": "s", "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


#: the first page, and pages with writing controls, each asked for with a query
DOOR_PAGES = (None, "views/evaluate.py", "views/runs.py")


def opened(page: str | None, auth: dict | None = None) -> AppTest:
    """The app run on `page` (None: the first page) with `?sel=1`, and `[auth]` when given."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if auth is not None:
        at.secrets["auth"] = auth
    if page is not None:
        at.switch_page(page)
    at.query_params["sel"] = "1"
    return at.run()


def test_with_sign_in_configured_every_page_shows_only_the_sign_in_screen() -> None:
    for page in DOOR_PAGES:
        at = opened(page, AUTH)
        assert not at.exception
        assert [t.value for t in at.title] == ["tempo-eval"]
        assert [b.label for b in at.button] == ["Sign in"]
        assert not at.sidebar.selectbox and not at.dataframe


def test_several_providers_get_a_button_each() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = {"redirect_uri": AUTH["redirect_uri"], "cookie_secret": AUTH["cookie_secret"],
                          "google": {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")},
                          "okta": {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")}}
    at.run()
    assert [b.label for b in at.button] == ["Sign in with google", "Sign in with okta"]


def test_a_wrong_first_admin_setting_is_said_before_anyone_signs_in(monkeypatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_ADMIN", "ana at example.org")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = AUTH
    at.run()
    assert not at.exception and not at.button
    [error] = at.error
    assert "TEMPO_EVAL_ADMIN: 'ana at example.org' is not an e-mail address" in plain(error.value)


@pytest.mark.parametrize(("page", "reason"), [
    ("datasets", "You cannot upload or store a dataset: your role is viewer"),
    ("agreement", "You cannot upload or store a dataset: your role is viewer"),
    ("review", "You cannot label verdicts: your role is viewer"),
])
def test_a_viewer_sees_why_each_page_s_writing_controls_are_disabled(acting, page: str, reason: str) -> None:
    acting("viewer", "v@x.org")
    at = goto(open_app(), page)
    assert not at.exception
    assert reason in captions(at)


def test_the_owner_of_a_run_is_who_made_it_or_nobody_when_not_recorded() -> None:
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.runs import RunStore
    from tempo_eval_app import store_reads
    from tests.support.sample_runs import SAMPLE

    runs = RunStore()
    run_id, _ = runs.create_or_resume_run(runs.save_dataset(load_dataset(str(SAMPLE))), {"metrics": ["x"]})
    assert store_reads.run_owner(run_id) is None  # not recorded
    assert store_reads.run_owner(run_id + 1000) is None  # no such run
    runs.connection.execute("UPDATE runs SET created_by = 'a@x.org' WHERE id = ?", (run_id,))
    runs.connection.commit()
    runs.close()
    assert store_reads.run_owner(run_id) == "a@x.org"

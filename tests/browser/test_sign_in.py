"""Sign-in and roles in a real browser: the app served with an `[auth]` section (a temporary
secrets.toml, never the checkout's) and a real OpenID Connect provider on 127.0.0.1
(`oidc-provider-mock`, where the test chooses the signed-in user's claims).

Before sign-in every address, a page's and a `?query` deep link alike, shows the sign-in screen
only. A viewer (signed in, not listed) reads but cannot start an evaluation nor delete a run, by
clicking or by a page's address with its query; an analyst evaluates and deletes their own run;
Sign out ends the session."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.browser.test_main_pages import CHROMIUM, LAUNCH_ARGS, expect, require_browser, wait_idle
from tests.support.app_server import AppServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ANALYST = "ana@example.org"
VIEWER = "vic@example.org"
#: the analyst's run made before the app started (a run a worker makes records its user too,
#: once runs record who made them)
OWN_RUN = "ana's run"
OTHER_RUN = "bob's run"
#: how long an expectation waits for the page (the machine may be loaded)
WAIT_MS = 60_000


class SignedInServer(AppServer):
    """The app with the secrets file `secrets` (Streamlit's `secrets.files` option)."""

    def __init__(self, home: Path, secrets: Path) -> None:
        super().__init__(home)
        self.secrets = secrets

    def streamlit_arguments(self) -> list[str]:
        return [*super().streamlit_arguments(), "--secrets.files", str(self.secrets)]


def _provider():
    try:
        import oidc_provider_mock
    except ImportError:
        pytest.skip("oidc-provider-mock is not installed (requirements-dev.txt)")
    return oidc_provider_mock.run_server_in_thread()


def _workspace(home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The sample dataset with two runs, the analyst's and another's; the analyst listed."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.store.runs import RunStore
    from tempo_eval.store.users import UserStore
    from tempo_eval_app.samples import SAMPLE_DIR, SAMPLE_QA_NAME

    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(home))
    store = RunStore()
    dataset = load_dataset(SAMPLE_DIR / "temporal_qa.csv")
    dataset.name = SAMPLE_QA_NAME
    runs = {name: evaluate(dataset, [TemporalFaithfulness(mode="focus_time")], store=store, run_name=name,
                           resume=False).run_id
            for name in (OWN_RUN, OTHER_RUN)}
    columns = [row[1] for row in store.connection.execute("PRAGMA table_info(runs)")]
    if "created_by" not in columns:  # the column the record of who did what adds to runs
        store.connection.execute("ALTER TABLE runs ADD COLUMN created_by TEXT")
    for name, owner in ((OWN_RUN, ANALYST), (OTHER_RUN, "bob@example.org")):
        store.connection.execute("UPDATE runs SET created_by = ? WHERE id = ?", (owner, runs[name]))
    store.connection.commit()
    runs["dataset"] = int(store.list_datasets()["id"].iloc[0])
    store.close()
    users = UserStore()
    users.add(ANALYST, "analyst", added_by="test")
    users.close()
    return runs


def _sign_in(page, url: str, provider: str, email: str) -> None:
    """Sign in as `email` through the provider's authorize form (its claims set first)."""
    import httpx

    reply = httpx.put(f"{provider}/users/{quote(email)}", json={"email": email, "email_verified": True})
    assert reply.status_code == 204
    page.goto(url)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_placeholder("sub").fill(email)
    page.get_by_role("button", name="Authorize").click()
    expect(page.get_by_text(_signed_in_as(email))).to_be_visible(timeout=WAIT_MS)
    wait_idle(page)


def _signed_in_as(email: str, role: str = "") -> re.Pattern[str]:
    """The sidebar's line (an e-mail is shown with a word joiner after its @: no mail link)."""
    shown = re.escape(email).replace("@", "@\u2060?")
    return re.compile(f"Signed in as {shown}" + (f" · {role}" if role else ""))


def _sign_out(page) -> None:
    """Sign out: the app ends its session, then the provider's (its end-session form, confirmed)."""
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile("end_session"))
    page.get_by_role("button", name="End session").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=WAIT_MS)


def _text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_a_viewer_reads_an_analyst_evaluates_and_deletes_own_runs(tmp_path, monkeypatch) -> None:
    require_browser()
    from playwright.sync_api import sync_playwright

    from tempo_eval.store.jobs import JobQueue
    from tempo_eval.store.runs import RunStore

    home = tmp_path / "home"
    monkeypatch.delenv("TEMPO_EVAL_ADMIN", raising=False)
    runs = _workspace(home, monkeypatch)
    with _provider() as oidc:
        provider = f"http://localhost:{oidc.server_port}"
        secrets = tmp_path / "secrets.toml"
        server = SignedInServer(home, secrets)
        secrets.write_text(
            "[auth]\n"
            f'redirect_uri = "http://127.0.0.1:{server.port}/oauth2callback"\n'
            f'cookie_secret = "{os.urandom(24).hex()}"\n'
            'client_id = "tempo-eval"\n'
            'client_secret = "not-a-secret"\n'
            f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n',
            encoding="utf-8",
        )
        with server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            try:
                # before sign-in: the sign-in screen only, whatever the address
                for address in ("/", "/evaluate", f"/runs?sel={runs[OWN_RUN]}", f"/results?runs={runs[OWN_RUN]}"):
                    page.goto(server.url + address)
                    expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=WAIT_MS)
                    wait_idle(page)
                    assert page.locator('[data-testid="stSidebarNav"]').count() == 0
                    assert "Run evaluation" not in _text(page) and "Delete this run" not in _text(page)
                    assert page.locator('[data-testid="stDataFrame"]').count() == 0

                # a viewer (signed in, not listed) reads, and neither evaluates nor deletes
                _sign_in(page, server.url, provider, VIEWER)
                expect(page.get_by_text(_signed_in_as(VIEWER, "viewer"))).to_be_visible(timeout=WAIT_MS)
                page.goto(f"{server.url}/evaluate?dataset={runs['dataset']}")
                wait_idle(page)
                expect(page.get_by_role("button", name="Run evaluation")).to_be_disabled(timeout=WAIT_MS)
                expect(page.get_by_text(re.compile("You cannot start an evaluation: your role is viewer")).first
                       ).to_be_visible(timeout=WAIT_MS)
                page.goto(f"{server.url}/runs?dataset={runs['dataset']}&sel={runs[OWN_RUN]}")
                wait_idle(page)
                expect(page.get_by_role("button", name=re.compile("Delete this run"))).to_be_disabled(timeout=WAIT_MS)
                expect(page.get_by_text(re.compile("You cannot delete a run: your role is viewer")).first).to_be_visible(timeout=WAIT_MS)
                assert JobQueue().jobs(kind="evaluate") == []
                _sign_out(page)
                assert page.locator('[data-testid="stSidebarNav"]').count() == 0

                # an analyst evaluates, deletes their own run, and not another's
                _sign_in(page, server.url, provider, ANALYST)
                expect(page.get_by_text(_signed_in_as(ANALYST, "analyst"))).to_be_visible(timeout=WAIT_MS)
                page.goto(f"{server.url}/runs?dataset={runs['dataset']}&sel={runs[OTHER_RUN]}")
                wait_idle(page)
                expect(page.get_by_role("button", name=re.compile("Delete this run"))).to_be_disabled(timeout=WAIT_MS)
                expect(page.get_by_text(re.compile("You cannot delete a run made by bob")).first).to_be_visible(timeout=WAIT_MS)
                page.goto(f"{server.url}/runs?dataset={runs['dataset']}&sel={runs[OWN_RUN]}")
                wait_idle(page)
                page.get_by_role("button", name=re.compile("Delete this run")).click()
                wait_idle(page)
                page.get_by_role("button", name="Yes, delete the run").click()
                wait_idle(page)
                assert RunStore(home / "tempo_eval.sqlite").list_runs()["id"].tolist() == [runs[OTHER_RUN]]

                page.goto(f"{server.url}/evaluate?dataset={runs['dataset']}")
                wait_idle(page)
                start = page.get_by_role("button", name="Run evaluation")
                expect(start).to_be_enabled(timeout=WAIT_MS)
                start.click()
                deadline = time.monotonic() + 240
                while not (jobs := JobQueue().jobs(kind="evaluate")) or jobs[0]["active"]:
                    assert time.monotonic() < deadline, "the analyst's evaluation did not finish"
                    time.sleep(0.5)
                assert jobs[0]["status"] == "finished", jobs[0]["error"]
                assert jobs[0]["run_id"] in RunStore(home / "tempo_eval.sqlite").list_runs()["id"].tolist()
                _sign_out(page)
            except Exception:
                print(f"at {page.url}:\n{page.locator('body').inner_text()[:2000]}\n{server.log()[-4000:]}")
                raise
            finally:
                browser.close()
        assert "Traceback" not in server.log()

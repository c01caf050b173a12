"""Without sign-in the app is this machine's single-user tool, whose user is an admin: a browser
that opened it by a name that is not this machine's (its Host header) gets the closed screen
and nothing else. A web site that points its own name at 127.0.0.1 (DNS rebinding) would
otherwise drive the local app from its visitor's browser; localhost, loopback IPs and names under
`.localhost` are this machine's and open the app as before."""

from __future__ import annotations

import pytest

from tempo_eval_app.sign_in import foreign_name
from tests.browser.test_main_pages import CHROMIUM, LAUNCH_ARGS, expect, require_browser, wait_idle
from tests.support.app_server import AppServer


@pytest.mark.parametrize("host", ["localhost:8501", "127.0.0.1:8501", "[::1]:8501", "LOCALHOST", "tempo.localhost",
                                  "127.0.0.2:8501", "", None])
def test_this_machine_s_names_open_the_app(host) -> None:
    assert foreign_name(host) is None


@pytest.mark.parametrize(("host", "name"), [("rebind.example.com:8501", "rebind.example.com"),
                                            ("192.168.1.5:8501", "192.168.1.5"), ("[fe80::1]:8501", "fe80::1"),
                                            ("localhost.evil.com", "localhost.evil.com")])
def test_another_name_is_told_apart(host: str, name: str) -> None:
    assert foreign_name(host) == name


@pytest.mark.browser
@pytest.mark.slow
def test_a_page_reached_by_another_name_gets_only_the_closed_screen(tmp_path) -> None:
    require_browser()
    from playwright.sync_api import sync_playwright

    with AppServer(tmp_path / "home") as server, sync_playwright() as playwright:
        # the browser resolves the other site's name to this machine, as DNS rebinding makes it
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=[
            *LAUNCH_ARGS, "--host-resolver-rules=MAP rebind.test 127.0.0.1"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)  # the browser closes with the playwright context
        for address in ("/", "/runs?sel=1", "/evaluate"):
            page.goto(f"http://rebind.test:{server.port}{address}")
            expect(page.get_by_text("This app was opened by the name rebind.test")).to_be_visible(timeout=60_000)
            wait_idle(page)
            shown = page.locator("body").inner_text()
            assert page.locator('[data-testid="stSidebarNav"]').count() == 0, shown
            assert page.locator('[data-testid="stDataFrame"]').count() == 0, shown
        page.goto(f"http://localhost:{server.port}/")  # this machine's name: the app as before
        expect(page.locator('[data-testid="stSidebarNav"]')).to_be_visible(timeout=60_000)
        assert "was opened by the name" not in page.locator("body").inner_text()
    assert "Traceback" not in server.log()

"""The door of the dashboard: sign-in when it is configured, the loopback rule when it is not.

`gate` runs in app.py before `st.navigation`, so no page script runs, no download is made and no
job is queued or touched until it lets the session in:

- With an `[auth]` section in `.streamlit/secrets.toml` (Streamlit's OIDC login, `st.login`), a
  session that has not signed in sees only the sign-in screen, whatever page address or `?query`
  it asked for; after sign-in the provider sends the browser back to the app's first page (open
  the address again). A signed-in account with no e-mail is refused (users are e-mails).
- Without one, the app is the local single-user tool: it serves only a loopback address
  (127.0.0.1, the configured `server.address`). Started on another address (0.0.0.0, a LAN
  address), every session gets a screen saying why and what to do, and nothing else: anyone who
  could reach the port would otherwise use the workspace unsigned. A reverse proxy on the same
  machine still reaches it on 127.0.0.1.

`sidebar` shows the signed-in e-mail and role with Sign out.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import streamlit as st

from tempo_eval.common.access import settings_admins
from tempo_eval_app.formatting import md_escape
from tempo_eval_app.identity import current_role, current_user, sign_in_configured, signed_in

#: what a local server's address may be (besides an IP address that is loopback)
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def loopback(address: str | None) -> bool:
    """True when the server address only this machine can reach: a loopback IP or localhost.
    An empty address means every interface (Streamlit's default): not loopback."""
    address = str(address or "").strip().strip("[]").lower()
    if address in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def providers() -> list[str | None]:
    """The sign-in providers of `[auth]`: [None] for the one provider set in `[auth]` itself,
    else the names of its `[auth.NAME]` sections."""
    section = st.secrets.get("auth", {})
    if "client_id" in section or "server_metadata_url" in section:
        return [None]
    return [name for name, value in section.items() if hasattr(value, "keys")] or [None]


def gate() -> None:
    """Let the session in, or draw why not and stop the script (see the module docstring)."""
    if not sign_in_configured():
        address = st.get_option("server.address")
        if not loopback(address):
            _closed(address)
        return
    try:
        settings_admins()
    except ValueError as bad:  # said to whoever opens the app, before anyone acts on a wrong role
        st.title("tempo-eval")
        st.error(md_escape(f"The app's settings are wrong: {bad}. Ask whoever runs it to correct the setting "
                           "and start it again."), icon=":material/settings:")
        st.stop()
    if not signed_in():
        _sign_in_screen()
    if not current_user():
        st.title("tempo-eval")
        st.error("Your sign-in gave no e-mail address, and this workspace knows its users by e-mail. "
                 "Sign in with an account that has one.", icon=":material/no_accounts:")
        st.button("Sign out", on_click=st.logout, icon=":material/logout:")
        st.stop()


def _sign_in_screen() -> None:
    st.title("tempo-eval")
    st.write("This workspace is shared: sign in to open it.")
    for name in providers():
        kwargs: dict[str, Any] = {} if name is None else {"args": (name,)}
        st.button("Sign in" if name is None else f"Sign in with {md_escape(name)}", key=f"sign_in_{name or 'default'}", type="primary", icon=":material/login:",
                  on_click=st.login, **kwargs)
    st.stop()


def _closed(address: Any) -> None:
    st.title("tempo-eval")
    st.error(md_escape(
        f"This app serves address {address or 'every interface'} without sign-in, so anyone who can reach "
        "it would use the workspace. Serve it on 127.0.0.1 (the default, .streamlit/config.toml), or "
        "configure sign-in ([auth] in .streamlit/secrets.toml, see docs/operations/team.md) to share it."),
        icon=":material/lock:")
    st.stop()


def sidebar() -> None:
    """Who is signed in, as what role, and Sign out (nothing without sign-in)."""
    if not sign_in_configured() or not signed_in():
        return
    with st.sidebar:
        st.caption(md_escape(f"Signed in as {current_user()} · {current_role() or 'no role'}"))
        st.button("Sign out", key="sign_out", on_click=st.logout, icon=":material/logout:")

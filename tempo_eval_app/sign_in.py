"""The door of the dashboard: sign-in when it is configured, the loopback rule when it is not.

`gate` runs in app.py before `st.navigation`, so no page script runs, no download is made and no
job is queued or touched until it lets the session in:

- With an `[auth]` section in `.streamlit/secrets.toml` (Streamlit's OIDC login, `st.login`), a
  session that has not signed in sees only the sign-in screen, whatever page address or `?query`
  it asked for; after sign-in the provider sends the browser back to the app's first page (open
  the address again). A signed-in account with no e-mail is refused (users are e-mails), and so is
  one whose provider says its e-mail is not verified (`email_verified` false).
- A settings file that is there but cannot be read (a TOML error) lets nobody in: it may be
  the one that configures sign-in, and the app must not fall back to the local tool, whose user
  is an admin, behind a proxy meant for a team. The screen names the file, line and column.
- Streamlit's `server.trustedUserHeaders` (request headers copied into `st.user`, over the
  sign-in's e-mail: a browser sending the header could act as anyone) and
  `server.unsafeMetricsUserAttributes` (the signed-in users' e-mails on `/_stcore/metrics`, which
  answers anyone) are refused with sign-in, naming the option.
- Without one, the app is the local single-user tool: it serves only a loopback address
  (127.0.0.1, the configured `server.address`). Started on another address (0.0.0.0, a LAN
  address), every session gets a screen saying why and what to do, and nothing else: anyone who
  could reach the port would otherwise use the workspace unsigned. A browser that opened it by
  another name than this machine's (its Host header: not localhost, a loopback IP or a name under
  .localhost) gets such a screen too: a web site that points its own name at 127.0.0.1 (DNS
  rebinding) would otherwise drive the local app, whose user is an admin, from the visitor's
  browser, and a proxy passing on the name it was reached by is told apart the same way.

`sidebar` shows the signed-in e-mail and role with Sign out.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

import streamlit as st

from tempo_eval.common.access import settings_admins
from tempo_eval_app.formatting import md_escape
from tempo_eval_app.identity import (
    current_role,
    current_user,
    settings_unreadable,
    sign_in_configured,
    signed_in,
    unverified_email,
)

#: what a local server's address may be (besides an IP address that is loopback)
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


#: Streamlit's options that would let a browser past the sign-in, or show who signed in to one
#: that has not: refused with sign-in, each with what it does
_UNSAFE_WITH_SIGN_IN = {
    "server.trustedUserHeaders": "copies request headers into the signed-in user, over what the sign-in said, "
                                 "so a browser sending such a header could act as anyone",
    "server.unsafeMetricsUserAttributes": "publishes who signed in (their e-mails) at /_stcore/metrics, which "
                                          "anyone reaches without signing in",
}


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


def foreign_name(host: str | None) -> str | None:
    """The name a browser opened the app by (its Host header, port left out) when that name is
    not this machine's own: a loopback IP, localhost, or a name under `.localhost` (which
    browsers keep on this machine). None for this machine's names, and when no Host was sent."""
    host = str(host or "").strip()
    if not host:
        return None
    try:
        name = urlsplit(f"//{host}").hostname or ""
    except ValueError:
        return host
    return None if loopback(name) or name.endswith(".localhost") else name


def _opened_by() -> str | None:
    """This session's Host header (None outside a browser session)."""
    try:
        return st.context.headers.get("Host")
    except (AttributeError, RuntimeError):
        return None


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
        name = foreign_name(_opened_by())
        if name is not None:
            _closed_to_name(name)
        return
    unreadable = settings_unreadable()
    if unreadable is not None:  # sign-in may be what it configures: nobody is let in until it is read
        _wrong_settings(unreadable.rstrip("."))
    for option, why in _UNSAFE_WITH_SIGN_IN.items():
        if st.get_option(option):
            _wrong_settings(f"{option} {why}; with sign-in ([auth]) leave it unset")
    try:
        settings_admins()
    except ValueError as bad:  # said to whoever opens the app, before anyone acts on a wrong role
        _wrong_settings(str(bad))
    if not signed_in():
        _sign_in_screen()
    if unverified_email():
        _refused(f"Your sign-in provider has not verified the e-mail address {st.user.get('email') or ''}, and "
                 "this workspace knows its users by e-mail, so it lets in only a verified one. Verify it with "
                 "your provider, or sign in with another account.")
    if not current_user():
        _refused("Your sign-in gave no e-mail address, and this workspace knows its users by e-mail. "
                 "Sign in with an account that has one.")


def _shut(why: str, icon: str, *, sign_out: bool = False) -> None:
    """The screen of a session not let in: the app's name and why (with Sign out for a signed-in
    account); nothing else runs."""
    st.title("tempo-eval")
    st.error(md_escape(why), icon=icon)
    if sign_out:
        st.button("Sign out", on_click=st.logout, icon=":material/logout:")
    st.stop()


def _refused(why: str) -> None:
    """A signed-in account the workspace cannot know: why, and Sign out."""
    _shut(why, ":material/no_accounts:", sign_out=True)


def _wrong_settings(why: str) -> None:
    _shut(f"The app's settings are wrong: {why}. Ask whoever runs it to correct the setting and start it again.",
          ":material/settings:")


def _sign_in_screen() -> None:
    st.title("tempo-eval")
    st.write("This workspace is shared: sign in to open it.")
    for name in providers():
        kwargs: dict[str, Any] = {} if name is None else {"args": (name,)}
        st.button("Sign in" if name is None else f"Sign in with {md_escape(name)}", key=f"sign_in_{name or 'default'}", type="primary", icon=":material/login:",
                  on_click=st.login, **kwargs)
    st.stop()


def _closed(address: Any) -> None:
    _shut(f"This app serves address {address or 'every interface'} without sign-in, so anyone who can reach "
          "it would use the workspace. Serve it on 127.0.0.1 (the default, .streamlit/config.toml), or "
          "configure sign-in ([auth] in .streamlit/secrets.toml, see docs/operations/team.md) to share it.",
          ":material/lock:")


def _closed_to_name(name: str) -> None:
    _shut(f"This app was opened by the name {name}, not as this machine (localhost, 127.0.0.1), and it has no "
          "sign-in: another web site pointing its name at this machine, or a proxy, would use the workspace as "
          "you. Open http://localhost:" + str(st.get_option("server.port")) + " on this machine, or configure "
          "sign-in ([auth] in .streamlit/secrets.toml, see docs/operations/team.md) to share it.",
          ":material/lock:")


def sidebar() -> None:
    """Who is signed in, as what role, and Sign out (nothing without sign-in)."""
    if not sign_in_configured() or not signed_in():
        return
    with st.sidebar:
        st.caption(md_escape(f"Signed in as {current_user()} · {current_role() or 'no role'}"))
        st.button("Sign out", key="sign_out", on_click=st.logout, icon=":material/logout:")

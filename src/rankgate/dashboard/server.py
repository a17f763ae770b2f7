"""`serve`: run the dashboard with uvicorn, safe by default.

It binds to 127.0.0.1. Binding anywhere else (``0.0.0.0``, a LAN address) needs a token
(``token=`` or ``$RANKGATE_TOKEN``): every request must then carry it, or gets 401. Bound
to localhost without a token, requests must name a local Host (127.0.0.1, localhost, [::1]),
so a web page elsewhere cannot reach the dashboard through DNS rebinding.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any

from rankgate.errors import ConfigError
from rankgate.extras import require

TOKEN_ENV = "RANKGATE_TOKEN"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
MIN_TOKEN = 16


def is_local(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``.

    >>> is_local("127.0.0.1"), is_local("::1"), is_local("localhost"), is_local("0.0.0.0"), is_local("10.0.0.5")
    (True, True, True, False, False)
    """
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> str | None:
    """The token to require (``token``, else ``$RANKGATE_TOKEN``), after checking the binding is safe.

    Raises:
        ConfigError: a host beyond localhost without a token, or a token too short to guess-proof.
    """
    token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
    if token is not None and len(token) < MIN_TOKEN:
        raise ConfigError(
            f"the token must be at least {MIN_TOKEN} characters (e.g. python -c 'import secrets; "
            "print(secrets.token_urlsafe())')",
            key_path="token",
        )
    if not is_local(host) and token is None:
        raise ConfigError(
            f"--host {host} makes the dashboard reachable from other machines: give --token TOKEN "
            f"(or set ${TOKEN_ENV}); every request must then carry it",
            key_path="host",
        )
    return token


def allowed_hosts(host: str, token: str | None) -> list[str] | None:
    """Host header names accepted: the local names when bound to localhost without a token, else any."""
    if token is None and is_local(host):
        return [*LOCAL_NAMES, host.lower()]
    return None


def serve(
    store: str | None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    sources: Any = None,
    log_level: str = "warning",
    ready: Any = None,
) -> None:
    """Serve the dashboard over ``store`` until interrupted.

    Args:
        store: the results store's URL or path (opened read-only); None: ``$RANKGATE_STORE``
            or ``.rankgate/results.db``.
        host: the address to bind (default 127.0.0.1; others need a token).
        port: the port (0: any free one).
        token: required on every request; default ``$RANKGATE_TOKEN``.
        sources: a `rankgate.dashboard.sources.Sources` (texts, tags, runs), or None.
        log_level: uvicorn's log level.
        ready: called with the URL once the server listens (the CLI prints it).

    Raises:
        ConfigError: an unsafe binding (see `check_binding`).
        InputError: the store is missing or not a rankgate store.
    """
    token = check_binding(host, token)
    uvicorn = require("uvicorn", "serve", purpose="the dashboard (rankgate serve)")
    from rankgate.dashboard.app import create_app

    app = create_app(store, sources=sources, token=token, allowed_hosts=allowed_hosts(host, token))
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, server_header=False, access_log=False)
    server = uvicorn.Server(config)
    if ready is not None:
        _announce(server, host, ready)
    server.run()


def _announce(server: Any, host: str, ready: Any) -> None:
    """Call ``ready(url)`` once uvicorn has bound its socket (its startup hook)."""
    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets=sockets)
        if server.started:
            port = server.servers[0].sockets[0].getsockname()[1] if server.servers else 0
            shown = f"[{host}]" if ":" in host else host
            ready(f"http://{shown}:{port}/")

    server.startup = startup

"""Joining a Ray cluster, for ``eval --engine ray`` and ``bench --engine ray`` alike."""

from __future__ import annotations

import socket
from typing import Any

from rankgate.errors import BackendError
from rankgate.extras import require


def ray_module(*, data: bool = False) -> Any:
    """The ``ray`` module (with Ray Data loaded when ``data``), or a `MissingExtraError` naming the extra."""
    ray = require("ray", "ray", purpose="--engine ray")
    if data:
        require("ray.data", "ray", purpose="--engine ray")  # needs pandas, which the extra's ray[data] brings
    return ray


def check_address(address: str | None, *, timeout: float = 5.0) -> None:
    """Fail fast on a ``host:port`` nobody listens on (``ray.init`` would wait minutes).

    ``None``, ``auto``, ``local`` and ``ray://`` addresses are left to Ray; ``[::1]:6379``
    is an IPv6 host and port.
    """
    if address is None or address in ("auto", "local") or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit():
        raise BackendError(
            f"cannot connect to the Ray cluster at {address!r}: expected HOST:PORT (the head's GCS port, "
            "6379 by default), auto, or ray://HOST:10001"
        )
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise BackendError(
            f"cannot connect to the Ray cluster at {address}: {reason}; start one with `ray start --head`, "
            "or leave out --ray-address to start a local one"
        ) from None


def join(address: str | None, *, data: bool = False) -> Any:
    """The ``ray`` module, connected to ``address`` (default: the running cluster, else a new local one).

    A process that already joined a cluster keeps it (``address`` is then ignored).
    """
    ray = ray_module(data=data)
    if not ray.is_initialized():
        check_address(address)
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise BackendError(f"cannot connect to the Ray cluster at {address or 'a local cluster'}: {e}") from None
    return ray

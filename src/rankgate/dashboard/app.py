"""The dashboard's web app (FastAPI): server-rendered pages, their JSON endpoints, the assets.

Pages: ``/`` (overview), ``/evaluations/{id}``, ``/compare?a=ID&b=ID``. JSON: the same data
under ``/api/...`` (docs/dashboard.md lists them). Assets (plotly.js from the installed plotly
package, the page script and style) are served by the app itself: no CDN, no build step.

Safety: the store is opened read-only; every value is escaped by Jinja2's autoescape (and
by `esc` in plotly's text, by ``textContent`` in the page script); errors become an HTML or
JSON answer with a short message, never a stack trace; with a token, every request must carry
it (``Authorization: Bearer``, the ``rankgate_token`` cookie, or ``?token=`` once, which sets
the cookie), else 401; with ``allowed_hosts``, a request for another Host is refused (400),
which keeps DNS-rebinding pages away from a dashboard bound to localhost.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import gzip
import hmac
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from importlib import resources
from typing import Any

from rankgate.dashboard import comparing, pages
from rankgate.dashboard.data import Filters, StoreReader
from rankgate.dashboard.sources import Sources
from rankgate.errors import InputError, RankgateError
from rankgate.extras import require

log = logging.getLogger("rankgate.dashboard")
COOKIE = "rankgate_token"
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
# name -> (package, file, media type); the report's style sheet is shared.
ASSETS = {
    "dashboard.js": ("rankgate.dashboard", "static/dashboard.js", "text/javascript"),
    "dashboard.css": ("rankgate.dashboard", "static/dashboard.css", "text/css"),
    "report.css": ("rankgate.report", "templates/report.css", "text/css"),
}


class NotFound(Exception):
    """No such page or stored result (404)."""


def create_app(
    store: str | StoreReader | None,
    *,
    sources: Sources | None = None,
    token: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
) -> Any:
    """The dashboard app over ``store`` (a URL or path, opened read-only, or an open `StoreReader`).

    Args:
        store: the results store.
        sources: query texts, tags, corpus, judgments and runs (see `rankgate.dashboard.sources`).
        token: when given, every request must carry it.
        allowed_hosts: host names the Host header may carry (None: any).

    Raises:
        InputError: the store is missing or holds no rankgate schema.
        MissingExtraError: FastAPI (the serve extra) is not installed.
    """
    fastapi = require("fastapi", "serve", purpose="the dashboard (rankgate serve)")
    from starlette.middleware.gzip import GZipMiddleware

    owned = not isinstance(store, StoreReader)
    reader = StoreReader(store) if not isinstance(store, StoreReader) else store
    reader.summaries()  # read every result's summary now, not on the first page

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        yield
        if owned:
            reader.close()

    app = fastapi.FastAPI(
        title="rankgate dashboard", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.reader = reader
    app.state.sources = sources or Sources()
    app.add_middleware(GZipMiddleware, minimum_size=2048)
    app.middleware("http")(_guard(token, allowed_hosts))
    _errors(app)
    from rankgate.dashboard.routes import add_routes

    add_routes(app)
    return app


def _guard(token: str | None, allowed_hosts: Sequence[str] | None) -> Callable[..., Awaitable[Any]]:
    """Middleware: the Host check, the token check, the security headers."""
    hosts = {h.lower() for h in allowed_hosts} if allowed_hosts is not None else None

    async def guard(request: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        from starlette.responses import PlainTextResponse

        if hosts is not None:
            host = (request.headers.get("host") or "").lower()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name not in hosts:
                return _secure(PlainTextResponse("unexpected Host header", status_code=400))
        from_query = False
        if token is not None:
            supplied, from_query = _supplied(request)
            if supplied is None or not hmac.compare_digest(supplied.encode(), token.encode()):
                return _secure(error_response(request, 401, "a valid token is needed: add ?token=... to the address"))
        response = await call_next(request)
        if from_query and token is not None:
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return _secure(response)

    return guard


def _supplied(request: Any) -> tuple[str | None, bool]:
    """The token a request carries, and whether it came in the query string."""
    auth = request.headers.get("authorization") or ""
    if auth.lower().startswith("bearer "):
        return auth[7:].strip(), False
    if COOKIE in request.cookies:
        return request.cookies[COOKIE], False
    if "token" in request.query_params:
        return request.query_params["token"], True
    return None, False


def _secure(response: Any) -> Any:
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
    return response


def _errors(app: Any) -> None:
    from starlette.exceptions import HTTPException

    async def not_found(request: Any, exc: Exception) -> Any:
        return error_response(request, 404, str(exc) or "not found")

    async def bad_input(request: Any, exc: Exception) -> Any:
        return error_response(request, 400, str(exc))

    async def http_error(request: Any, exc: Any) -> Any:
        return error_response(request, exc.status_code, "not found" if exc.status_code == 404 else str(exc.detail))

    async def failed(request: Any, exc: Exception) -> Any:
        if isinstance(exc, RankgateError):  # e.g. the store became unreachable: say what, no trace
            log.error("rankgate dashboard: %s %s: %s", request.method, request.url.path, exc)
            return error_response(request, 503, str(exc))
        log.exception("rankgate dashboard: %s %s failed", request.method, request.url.path)
        return error_response(request, 500, "internal error (the server's log has the details)")

    app.add_exception_handler(NotFound, not_found)
    app.add_exception_handler(InputError, bad_input)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, failed)


def error_response(request: Any, status: int, message: str) -> Any:
    """An HTML page (or, under /api/, JSON ``{"error": ..., "status": ...}``) saying what went wrong."""
    from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse

    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message, "status": status}, status_code=status)
    try:
        reader = getattr(request.app.state, "reader", None)
        page = (
            environment()
            .get_template("error.html.j2")
            .render(
                status=status,
                message=message,
                title=f"{status}",
                store=getattr(reader, "url", ""),
                path=request.url.path,
            )
        )
    except Exception:  # the error page itself must not fail: say it plainly
        log.exception("rankgate dashboard: the error page could not be drawn")
        return PlainTextResponse(f"{status}: {message}", status_code=status)
    return HTMLResponse(page, status_code=status)


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    """Jinja2 with autoescape and the report's filters (numbers, intervals, JSON for script tags)."""
    from rankgate._version import __version__
    from rankgate.report.html import jinja_environment

    env = jinja_environment("rankgate.dashboard", "serve", "the dashboard (rankgate serve)")
    env.globals["version"] = __version__
    return env


@functools.lru_cache(maxsize=1)
def plotly_gzip() -> bytes:
    """plotly.js, gzip-compressed: the same bundle the HTML report embeds."""
    from rankgate.report.html import plotly_bundle

    return base64.b64decode(plotly_bundle())


@functools.lru_cache(maxsize=4)
def asset(name: str) -> bytes:
    """One of the `ASSETS`, by name."""
    package, path, _ = ASSETS[name]
    return resources.files(package).joinpath(path).read_bytes()


def plotly_response(request: Any) -> Any:
    from starlette.responses import Response

    headers = {"Cache-Control": "public, max-age=86400", "Vary": "Accept-Encoding"}
    if "gzip" in (request.headers.get("accept-encoding") or ""):
        return Response(plotly_gzip(), media_type="text/javascript", headers={**headers, "Content-Encoding": "gzip"})
    return Response(gzip.decompress(plotly_gzip()), media_type="text/javascript", headers=headers)


def reader_of(request: Any) -> StoreReader:
    reader: StoreReader = request.app.state.reader
    return reader


def sources_of(request: Any) -> Sources:
    sources: Sources = request.app.state.sources
    return sources


def result_id(reader: StoreReader, text: str | None, what: str = "evaluation", *, param: str | None = None) -> int:
    """A stored result's id from a path or query value; `NotFound` when there is no such result.

    With ``param`` (a query parameter's name), a missing or malformed value is the request's fault:
    `InputError` (400) naming the parameter.
    """
    value = (text or "").strip().lstrip("#")
    if param is not None and not value:
        raise InputError(f"{param} is required: ?{param}=ID, the id of a stored {what}")
    if param is not None and (not value.isdigit() or len(value) > 12):
        raise InputError(f"{param} must be the id of a stored {what} (a whole number); got {value[:40]!r}")
    if not value.isdigit() or len(value) > 12 or reader.summary(int(value)) is None:
        shown = value[:40] if value else "(none)"
        raise NotFound(f"no stored {what} {shown!r} in this store")
    return int(value)


def filters_of(request: Any, default_limit: int = 1000) -> Filters:
    return Filters.parse(request.query_params, default_limit=default_limit)


__all__ = ["comparing", "create_app", "pages"]

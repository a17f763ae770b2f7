"""The dashboard's routes: three pages, their JSON endpoints, three assets.

Imported by `rankgate.dashboard.app.create_app` once FastAPI is known to be installed.
Handlers are plain functions (FastAPI runs them in its thread pool), each one builder call
(`pages`, `comparing`) and one rendering.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from rankgate.dashboard import comparing, pages
from rankgate.dashboard.app import (
    ASSETS,
    NotFound,
    asset,
    environment,
    filters_of,
    plotly_response,
    reader_of,
    result_id,
    sources_of,
)
from rankgate.store.result import plain


def render(template: str, request: Request, **context: Any) -> HTMLResponse:
    reader = reader_of(request)
    page = environment().get_template(template).render(store=reader.url, path=request.url.path, **context)
    return HTMLResponse(page)


def as_json(payload: Any) -> JSONResponse:
    return JSONResponse(plain(payload))


def add_routes(app: FastAPI) -> None:
    """Register every page, endpoint and asset on ``app``."""
    _page_routes(app)
    _api_routes(app)

    @app.get("/static/{name}")
    def static(name: str, request: Request) -> Response:
        if name == "plotly.min.js":
            return plotly_response(request)
        if name not in ASSETS:
            raise NotFound(f"no asset {name[:40]!r}")
        return Response(asset(name), media_type=ASSETS[name][2], headers={"Cache-Control": "no-cache"})


def _page_routes(app: FastAPI) -> None:
    @app.get("/", response_class=HTMLResponse)
    def overview_page(request: Request) -> HTMLResponse:
        context = pages.overview(reader_of(request), filters_of(request))
        return render("overview.html.j2", request, title="Overview", **context)

    @app.get("/evaluations/{rid}", response_class=HTMLResponse)
    def evaluation_page(rid: str, request: Request) -> HTMLResponse:
        reader = reader_of(request)
        context = pages.evaluation(reader, sources_of(request), result_id(reader, rid))
        return render("evaluation.html.j2", request, title=context["result"].name, **context)

    @app.get("/compare", response_class=HTMLResponse)
    def compare_page(request: Request) -> HTMLResponse:
        reader, params = reader_of(request), request.query_params
        context: dict[str, Any] = {"picker": pages.picker(reader), "a_id": params.get("a"), "b_id": params.get("b")}
        if params.get("a") and params.get("b"):
            a, b = result_id(reader, params.get("a"), param="a"), result_id(reader, params.get("b"), param="b")
            found = comparing.compare(
                reader, sources_of(request), a, b, measure=params.get("measure"), query=params.get("query")
            )
            context.update(found, figures={"delta": found["chart"].figure})
        return render("compare.html.j2", request, title="Compare", **context)


def _api_routes(app: FastAPI) -> None:
    @app.get("/api/overview")
    def overview_api(request: Request) -> JSONResponse:
        return as_json(pages.overview_json(reader_of(request), filters_of(request)))

    @app.get("/api/facets")
    def facets_api(request: Request) -> JSONResponse:
        return as_json(reader_of(request).facets())

    @app.get("/api/evaluations")
    def evaluations_api(request: Request) -> JSONResponse:
        offset = pages.int_param(request.query_params, "offset", 0, 0, 10**9)
        return as_json(pages.evaluations_json(reader_of(request), filters_of(request, default_limit=50), offset))

    @app.get("/api/evaluations/{rid}")
    def evaluation_api(rid: str, request: Request) -> JSONResponse:
        reader = reader_of(request)
        return as_json(pages.evaluation_json(reader, sources_of(request), result_id(reader, rid)))

    @app.get("/api/evaluations/{rid}/queries")
    def queries_api(rid: str, request: Request) -> JSONResponse:
        reader = reader_of(request)
        found = pages.queries_json(reader, sources_of(request), result_id(reader, rid), request.query_params)
        return as_json(found)

    @app.get("/api/compare")
    def compare_api(request: Request) -> JSONResponse:
        reader, params = reader_of(request), request.query_params
        a, b = result_id(reader, params.get("a"), param="a"), result_id(reader, params.get("b"), param="b")
        return as_json(comparing.compare_json(reader, sources_of(request), a, b, params.get("measure")))

    @app.get("/api/rankings")
    def rankings_api(request: Request) -> JSONResponse:
        reader, params = reader_of(request), request.query_params
        a, b = result_id(reader, params.get("a"), param="a"), result_id(reader, params.get("b"), param="b")
        query = params.get("query")
        if not query:
            raise NotFound("give the query id: ?query=QID")
        return as_json(comparing.rankings_json(reader, sources_of(request), a, b, query))

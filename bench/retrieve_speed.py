#!/usr/bin/env python3
"""Speed of `rankgate retrieve` against a service that takes a fixed time per request.

A local JSON search service (`rankgate.retrieve.demo_service.SearchService`, standard-library
threading server) sleeps ``--delay`` seconds per request and answers 10 hits. rankgate asks it
``--queries`` queries with ``--concurrency`` requests in flight, through the ``http`` kind, with
no cache (every query is a request). The ideal wall time is queries x delay / concurrency.

The service runs in a child process (``--same-process`` serves it from this one, where its
threads compete with rankgate's for the GIL).

Printed: the measured wall time, the ideal, their ratio (the goal is < 1.5), rankgate's overhead
per query (wall x concurrency / queries - delay: the time a worker spends per query beyond the
service's own), and the client-side latency percentiles (each includes the delay).

Examples:
  python bench/retrieve_speed.py
  python bench/retrieve_speed.py --queries 2000 --concurrency 32 --delay 0.02 --repeat 3
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import platform
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from rankgate.retrieve.demo_service import SearchService, demo_spec
from rankgate.retrieve.runner import retrieve
from rankgate.retrieve.spec import open_retriever


def _search(text: str, k: int) -> list[tuple[str, float]]:
    return [(f"d{i}", float(k - i)) for i in range(min(k, 10))]


def _serve(delay: float, urls: multiprocessing.Queue, stop: multiprocessing.Event) -> None:  # type: ignore[type-arg]
    with SearchService(_search, delay=delay) as service:
        urls.put(service.url)
        stop.wait()


@contextlib.contextmanager
def _service(delay: float, separate: bool) -> Iterator[str]:
    """The service's URL; in a child process unless ``separate`` is False (then it shares this GIL)."""
    if not separate:
        with SearchService(_search, delay=delay) as service:
            yield service.url
        return
    urls: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    stop = multiprocessing.Event()
    child = multiprocessing.Process(target=_serve, args=(delay, urls, stop), daemon=True)
    child.start()
    try:
        yield urls.get(timeout=60)
    finally:
        stop.set()
        child.join(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds the service sleeps per request")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the best is reported")
    parser.add_argument("--same-process", action="store_true", help="serve from this process (shares the GIL)")
    args = parser.parse_args()
    queries = {f"q{i}": f"query number {i}" for i in range(args.queries)}
    ideal = args.queries * args.delay / args.concurrency
    best = None
    with _service(args.delay, not args.same_process) as url:
        for _ in range(args.repeat):
            retriever = open_retriever(demo_spec(url))
            try:
                report = retrieve(queries, retriever, k=10, concurrency=args.concurrency)
            finally:
                retriever.close()
            assert not report.failures, report.failures[:3]
            if best is None or report.wall_s < best.wall_s:
                best = report
    assert best is not None
    summary = best.to_dict()
    latency = summary["latency_ms"]
    overhead_ms = (best.wall_s * args.concurrency / args.queries - args.delay) * 1000
    print(f"python {platform.python_version()}, {platform.machine()}, {args.queries} queries, "
          f"concurrency {args.concurrency}, service delay {args.delay * 1000:.0f} ms, "
          f"service in {'this' if args.same_process else 'a child'} process")  # fmt: skip
    print(f"measured  {best.wall_s:8.3f} s   ({summary['qps']:,.1f} q/s)")
    print(f"ideal     {ideal:8.3f} s   (queries x delay / concurrency)")
    print(f"ratio     {best.wall_s / ideal:8.3f}     (goal < 1.5)")
    print(f"overhead  {overhead_ms:8.3f} ms per query (wall x concurrency / queries - delay)")
    print(f"latency   p50 {latency['p50']:.1f} ms, p95 {latency['p95']:.1f} ms, p99 {latency['p99']:.1f} ms "
          f"(client side, delay included)")  # fmt: skip


if __name__ == "__main__":
    main()

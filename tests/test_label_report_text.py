"""What ``rankgate label`` reports: label shares that add up to 100%, and failed pairs after a rerun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankgate.label.outcome import LabelReport
from rankgate.label.pooling import pool_from_pairs
from rankgate.render.label import percentages, report_table
from rankgate.render.terminal import to_text
from tests.cli_support import invoke
from tests.label_support import FakeChatServer, write_collection


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ([23, 17], [58, 42]),  # 57.5 / 42.5: truncated, 57 + 42 = 99
        ([1, 1, 1], [34, 33, 33]),  # the point left goes to the earliest of equal remainders
        ([1, 2], [33, 67]),
        ([199, 1], [100, 0]),  # 99.5 / 0.5: equal remainders, the larger count takes the point
        ([1, 2, 997], [0, 0, 100]),
        ([5, 0], [100, 0]),
        ([0, 0], [0, 0]),
        ([], []),
    ],
)
def test_label_shares_are_whole_percentages_that_add_up_to_100(counts, expected):
    assert percentages(counts) == expected


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=8).filter(any))
def test_each_share_is_its_exact_percentage_rounded_down_or_up_and_they_sum_to_100(counts):
    shares = percentages(counts)
    assert sum(shares) == 100
    for n, share in zip(counts, shares, strict=True):
        exact = 100 * n / sum(counts)
        assert share - 1 < exact < share + 1


def test_the_report_table_prints_the_shares_rounded_to_100():
    pool = pool_from_pairs([("q1", "d1")])
    report = LabelReport({"judge_id": "llm:m:abc"}, pool.summary(), {}, {"pool": 40, "new": 40}, {}, None)
    text = to_text(report_table(report, {0: 23, 3: 17}))
    assert "0: 23 (58%)  3: 17 (42%)" in text


@pytest.mark.extra("label")
def test_a_rerun_reports_the_pairs_that_failed_before_and_how_to_ask_them_again(capsys, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-report-text-test")
    coll = write_collection(tmp_path)

    def label(server: FakeChatServer, *extra: str) -> tuple[int, str, str]:
        return invoke(
            capsys, "label", "--run", coll["run"], "--corpus", coll["corpus"], "--queries", coll["queries"],
            "--depth", "4", "--base-url", server.url, "--model", "m", "--out", str(tmp_path / "llm.txt"),
            "--backoff", "0.01", "--no-progress", "--parse-retries", "0", *extra,
        )  # fmt: skip

    with FakeChatServer(always="garbage") as server:
        code, _, err = label(server)
    assert code == 1 and "12 pairs failed (kept out of the qrels)" in err
    assert "; --retry-failed asks them again" in err
    with FakeChatServer() as server:
        code, out, err = label(server, "--format", "json")
        assert code == 1 and server.records == []
        counts = json.loads(out)["counts"]
        assert (counts["failed"], counts["failed_before"], counts["done_before"], counts["new"]) == (12, 12, 12, 0)
        code, out, _ = label(server)
        assert "12 (12 stored before; --retry-failed asks again)" in out
        code, out, err = label(server, "--retry-failed", "--format", "json")
        assert code == 0, err
        counts = json.loads(out)["counts"]
        assert (counts["failed"], counts["failed_before"], counts["new"]) == (0, 0, 12)

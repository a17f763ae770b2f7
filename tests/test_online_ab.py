"""`rankgate online ab`: every metric worked by hand on a tiny pair of logs, the tests against
scipy's paired and Welch t-tests, and a simulated A/B where B is truly better."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from rankgate.errors import ConfigError
from rankgate.online import ab_compare, read_click_log, simulate_pbm
from rankgate.online.ab import unit_means
from rankgate.online.logs import log_from_table
from tests.cli_support import invoke

# Unclicked rows carry the time the page was shown; clicked rows the time of the click.
ARM_A = """session,query_id,doc_id,position,clicked,timestamp
s1,q1,a,1,0,0
s1,q1,b,2,1,4
s1,q1,c,3,0,0
s2,q2,d,1,1,102
s2,q2,e,2,1,105
s2,q2,f,3,0,100
s3,q1,a,1,0,200
s3,q1,b,2,0,200
s3,q1,c,3,0,200
"""
ARM_B = """session,query_id,doc_id,position,clicked,timestamp
t1,q1,b,1,1,3
t1,q1,a,2,0,0
t1,q1,c,3,0,0
t2,q2,f,1,0,100
t2,q2,d,2,0,100
t2,q2,e,3,1,110
"""
# per query, A: q1 = mean of (CTR 1/3, clicks@2 1, RR 1/2, abandoned 0, 4 s) and (0, 0, 0, 1, none);
#               q2 = (2/3, 2, 1, 0, 2 s).  B: q1 = (1/3, 1, 1, 0, 3 s); q2 = (1/3, 0, 1/3, 0, 10 s).
EXPECTED_A = {
    "CTR": [1 / 6, 2 / 3],
    "clicks@2": [0.5, 2],
    "RR": [0.25, 1],
    "abandonment": [0.5, 0],
    "time_to_first_click": [4, 2],
}
EXPECTED_B = {
    "CTR": [1 / 3, 1 / 3],
    "clicks@2": [1, 0],
    "RR": [1, 1 / 3],
    "abandonment": [0, 0],
    "time_to_first_click": [3, 10],
}


@pytest.fixture
def logs(tmp_path):
    (tmp_path / "a.csv").write_text(ARM_A)
    (tmp_path / "b.csv").write_text(ARM_B)
    return tmp_path / "a.csv", tmp_path / "b.csv"


def test_per_query_metrics_by_hand(logs):
    keys, means = unit_means(read_click_log(logs[0]), "query", k=2)
    assert keys == ["q1", "q2"]
    for name, values in EXPECTED_A.items():
        np.testing.assert_allclose(means[name], values, err_msg=name)
    result = ab_compare(read_click_log(logs[0]), read_click_log(logs[1]), unit="query", k=2)
    for row in result.rows:
        a, b = np.array(EXPECTED_A[row["metric"]]), np.array(EXPECTED_B[row["metric"]])
        assert row["delta"] == pytest.approx((b - a).mean()), row["metric"]
        assert row["p_value"] == pytest.approx(stats.ttest_rel(b, a).pvalue), row["metric"]
        assert row["ci"][0] <= row["delta"] <= row["ci"][1]
    assert result.counts == {"pages_a": 3, "pages_b": 2, "units_a": 2, "units_b": 2, "shared_queries": 2}


def test_per_session_is_welch(logs):
    result = ab_compare(read_click_log(logs[0]), read_click_log(logs[1]), unit="session", k=2)
    rr = next(r for r in result.rows if r["metric"] == "RR")
    a, b = np.array([0.5, 1, 0]), np.array([1, 1 / 3])
    oracle = stats.ttest_ind(b, a, equal_var=False)
    assert rr["p_value"] == pytest.approx(oracle.pvalue)
    assert rr["ci"] == pytest.approx(list(oracle.confidence_interval(0.95)))
    ttfc = next(r for r in result.rows if r["metric"] == "time_to_first_click")
    assert (ttfc["n_a"], ttfc["n_b"]) == (2, 2)  # the abandoned page has no time to first click


def test_simulated_arms_find_the_better_ranker():
    a = log_from_table(simulate_pbm(queries=200, pages=20_000, ranker_quality=0.2, seed=1).table)
    b = log_from_table(simulate_pbm(queries=200, pages=20_000, ranker_quality=1.0, seed=1).table)
    result = ab_compare(a, b, unit="query", k=3)
    rr = next(r for r in result.rows if r["metric"] == "RR")
    aband = next(r for r in result.rows if r["metric"] == "abandonment")
    assert rr["delta"] > 0 and rr["ci"][0] > 0 and rr["p_value"] < 0.001
    assert aband["delta"] < 0 and aband["ci"][1] < 0


def test_cli_table_and_json(logs, capsys):
    code, out, err = invoke(capsys, "online", "ab", str(logs[0]), str(logs[1]), "-k", "2", "--format", "json")
    assert code == 0, err
    body = json.loads(out)
    assert [r["metric"] for r in body["metrics"]] == list(EXPECTED_A)
    code, out, _ = invoke(capsys, "online", "ab", str(logs[0]), str(logs[1]), "-k", "2")
    assert code == 0 and "clicks@2" in out and "paired t, bootstrap CI" in out
    code, _, err = invoke(capsys, "online", "ab", str(logs[0]), str(logs[0].parent / "missing.csv"))
    assert code == 2


def test_bad_options(logs):
    log = read_click_log(logs[0])
    with pytest.raises(ConfigError, match="unit must be one of query, session, page"):
        ab_compare(log, log, unit="user")
    with pytest.raises(ConfigError, match="k must be an int >= 1"):
        ab_compare(log, log, k=0)

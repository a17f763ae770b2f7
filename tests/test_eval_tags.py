"""Per-tag aggregates of ``rankgate eval --tags`` and `Results.by_group`.

The expected group values are computed here from the fixture's own dicts (P@3, RR@5 and
NumRel by hand over the group's queries), never from rankgate's per-query output.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

import rankgate
from rankgate.errors import ConfigError
from rankgate.evaluation.groups import MIN_GROUP, UNTAGGED, check_tag_names, group_rows, tag_names
from rankgate.stats.bootstrap import bootstrap_ci_columns
from tests.cli_support import invoke

MEASURES = ["P@3", "RR@5", "NumRel"]
N_QUERIES = 24

# tier: A for q00-q09 (10 queries: not small), B for q10-q18 (9: small); q19, q20 are in the
# tags file with a topic but no tier; q21-q23 are not in it at all.
TIER = {f"q{i:02d}": ("A" if i < 10 else "B") for i in range(19)}
TOPIC = {f"q{i:02d}": ("x" if i % 2 == 0 else "y") for i in range(21)}


def _fixture() -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """Qrels ``{qid: {doc: grade}}`` and rankings ``{qid: [doc, ...]}`` (best first)."""
    rng = random.Random(7)
    qrels: dict[str, dict[str, int]] = {}
    ranking: dict[str, list[str]] = {}
    for i in range(N_QUERIES):
        qid = f"q{i:02d}"
        qrels[qid] = {f"d{d}": rng.choice([0, 0, 1, 2]) for d in range(8)}
        ranking[qid] = rng.sample([f"d{d}" for d in range(10)], 5)
    return qrels, ranking


QRELS, RANKING = _fixture()
RANKING_RUN = {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in RANKING.items()}


def _expected(qid: str) -> dict[str, float]:
    """P@3, RR@5 and NumRel of one query, by hand."""
    rel = [QRELS[qid].get(doc, 0) >= 1 for doc in RANKING[qid]]
    first = next((i for i, r in enumerate(rel) if r), None)
    return {
        "P@3": sum(rel[:3]) / 3,
        "RR@5": 0.0 if first is None else 1 / (first + 1),
        "NumRel": float(sum(g >= 1 for g in QRELS[qid].values())),
    }


def _group_expected(qids: list[str]) -> dict[str, float]:
    per = [_expected(q) for q in qids]
    return {
        "P@3": sum(p["P@3"] for p in per) / len(per),
        "RR@5": sum(p["RR@5"] for p in per) / len(per),
        "NumRel": sum(p["NumRel"] for p in per),  # a count measure: summed, like the overall value
    }


def _qids(tag: dict[str, str], value: str | None) -> list[str]:
    every = [f"q{i:02d}" for i in range(N_QUERIES)]
    return [q for q in every if tag.get(q) == value]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    run = tmp_path / "run.txt"
    run.write_text(
        "".join(f"{q} Q0 {d} {r + 1} {10 - r} sys\n" for q, docs in RANKING.items() for r, d in enumerate(docs))
    )
    tags = tmp_path / "tags.jsonl"
    lines = []
    for i in range(21):
        qid = f"q{i:02d}"
        row = {"_id": qid, "topic": TOPIC[qid]}
        if qid in TIER:
            row["tier"] = TIER[qid]
        lines.append(json.dumps(row))
    tags.write_text("\n".join(lines) + "\n")
    return {"qrels": str(qrels), "run": str(run), "tags": str(tags), "dir": str(tmp_path)}


def _eval(capsys, files, *extra: str) -> tuple[int, str, str]:
    args = ["eval", files["qrels"], files["run"], "-m", ",".join(MEASURES), *extra]
    return invoke(capsys, *args)


def _check_groups(groups: dict) -> None:
    """The ``groups`` JSON object against the hand-computed values."""
    assert sorted(groups) == ["tier", "topic"]
    expected = {
        "tier": {"A": _qids(TIER, "A"), "B": _qids(TIER, "B"), UNTAGGED: _qids(TIER, None)},
        "topic": {"x": _qids(TOPIC, "x"), "y": _qids(TOPIC, "y"), UNTAGGED: _qids(TOPIC, None)},
    }
    for tag, values in expected.items():
        assert list(groups[tag]) == list(values)  # values sorted, untagged last
        assert sum(g["n"] for g in groups[tag].values()) == N_QUERIES
        for value, qids in values.items():
            got = groups[tag][value]
            assert got["n"] == len(qids)
            assert got["small"] is (len(qids) < MIN_GROUP)
            want = _group_expected(qids)
            for name in MEASURES:
                assert got["aggregates"][name] == pytest.approx(want[name], abs=1e-12), (tag, value, name)
    assert groups["tier"]["A"]["n"] == 10 and groups["tier"]["A"]["small"] is False
    assert groups["tier"]["B"]["n"] == 9 and groups["tier"]["B"]["small"] is True
    assert groups["tier"][UNTAGGED]["n"] == 5  # 2 in the file without a tier, 3 not in the file


# -- the grouping itself ---------------------------------------------------------------------
def test_group_rows_and_names():
    tags = {"a": {"t": "2", "u": "x"}, "b": {"t": "1"}, "c": {}}
    assert tag_names(tags) == ["t", "u"]
    assert group_rows(tags, ["a", "b", "c", "d"]) == {
        "t": {"1": [1], "2": [0], UNTAGGED: [2, 3]},
        "u": {"x": [0], UNTAGGED: [1, 2, 3]},
    }
    assert group_rows(tags, ["a", "b", "c"], names=["u"], untagged=None) == {"u": {"x": [0]}}
    assert group_rows({"a": {"t": "1"}}, ["a"]) == {"t": {"1": [0]}}  # no empty untagged group
    # a value spelled like the untagged group is that group, rows still ascending
    assert group_rows({"b": {"t": UNTAGGED}, "c": {"t": "1"}}, ["a", "b", "c"]) == {"t": {"1": [2], UNTAGGED: [0, 1]}}
    assert check_tag_names(tags, ["u", "t", "u"]) == ["u", "t"]
    with pytest.raises(ConfigError, match=r"no tag 'tier' in tags\.csv \(its tags: t, u\)"):
        check_tag_names(tags, ["tier"], source="tags.csv")


def test_values_in_natural_order():
    tags = {"a": {"k": "10"}, "b": {"k": "9"}, "c": {"k": "tier 10"}, "d": {"k": "tier 9"}}
    assert list(group_rows(tags, ["a", "b", "c", "d"])["k"]) == ["9", "10", "tier 9", "tier 10"]


# -- the Python API ---------------------------------------------------------------------------
def test_by_group_equals_hand_computed_means():
    tags = {q: {"tier": t} for q, t in TIER.items()}
    for q, t in TOPIC.items():
        tags.setdefault(q, {})["topic"] = t
    res = rankgate.evaluate(
        QRELS, {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in RANKING.items()}, MEASURES
    )
    groups = res.by_group(tags, group_by=["tier"])
    assert list(groups) == ["tier"]
    for value in ("A", "B"):
        g = groups["tier"][value]
        assert list(g.query_ids) == _qids(TIER, value)
        assert g.aggregate == pytest.approx(_group_expected(_qids(TIER, value)), abs=1e-12)
        assert g.ci is None
    assert res.groups is None and "groups" not in res.to_dict()  # by_group keeps nothing
    res.with_groups(tags)
    _check_groups(res.to_dict()["groups"])
    with pytest.raises(ConfigError, match=r"no tag 'lang'.*its tags: tier, topic"):
        res.by_group(tags, group_by=["lang"])


def test_group_intervals_are_the_bootstrap_of_the_group_and_order_free():
    tags = {q: {"tier": t} for q, t in TIER.items()}
    tags["q19"] = {"tier": "C"}  # a group of one query
    run = {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in RANKING.items()}
    first = rankgate.evaluate(QRELS, run, MEASURES).with_confidence_intervals(n_resamples=2000, seed=3)
    first.with_groups(tags)
    then = rankgate.evaluate(QRELS, run, MEASURES).with_groups(tags)
    then.with_confidence_intervals(n_resamples=2000, seed=3)
    assert first.to_dict()["groups"] == then.to_dict()["groups"]
    for value in ("A", "B"):
        qids = _qids(TIER, value)
        matrix = np.array([[_expected(q)[m] for m in MEASURES] for q in qids])
        low, high = bootstrap_ci_columns(matrix, n_resamples=2000, seed=3)
        ci = first.groups["tier"][value].ci
        for j, name in enumerate(MEASURES[:2]):
            assert ci[name] == pytest.approx([low[j], high[j]], abs=1e-12)
            assert ci[name][0] <= first.groups["tier"][value].aggregate[name] <= ci[name][1]
        assert ci["NumRel"] is None  # count measures get no interval, as overall
    assert first.groups["tier"]["C"].n == 1
    assert first.groups["tier"]["C"].ci == {name: None for name in MEASURES}


# -- the CLI, every format ---------------------------------------------------------------------
def test_json_groups(capsys, files):
    code, out, _ = _eval(capsys, files, "--tags", files["tags"], "--format", "json")
    assert code == 0
    body = json.loads(out)
    _check_groups(body["groups"])
    assert list(body["groups"]) == ["topic", "tier"]  # order of first appearance in the tags file
    assert "ci" not in body["groups"]["tier"]["A"]
    code, plain, _ = _eval(capsys, files, "--format", "json")
    assert "groups" not in json.loads(plain)
    del body["groups"]
    assert body == json.loads(plain)  # additive: every other key unchanged


def test_json_groups_with_ci(capsys, files):
    code, out, _ = _eval(capsys, files, "--tags", files["tags"], "--group-by", "tier", "--ci", "--format", "json")
    assert code == 0
    body = json.loads(out)
    assert list(body["groups"]) == ["tier"]
    qids = _qids(TIER, "B")
    matrix = np.array([[_expected(q)[m] for m in MEASURES] for q in qids])
    low, high = bootstrap_ci_columns(matrix, n_resamples=10_000, seed=0)
    ci = body["groups"]["tier"]["B"]["ci"]
    assert ci["P@3"] == pytest.approx([low[0], high[0]], abs=1e-12)
    assert ci["RR@5"] == pytest.approx([low[1], high[1]], abs=1e-12)
    assert ci["NumRel"] is None


def test_jsonl_rows(capsys, files):
    code, plain, _ = _eval(capsys, files, "--format", "jsonl", "--per-query")
    code, out, _ = _eval(capsys, files, "--format", "jsonl", "--per-query", "--tags", files["tags"])
    assert code == 0
    lines = out.splitlines()
    assert lines[: len(plain.splitlines())] == plain.splitlines()  # existing lines unchanged, first
    rows = [json.loads(line) for line in lines[len(plain.splitlines()) :]]
    assert [(r["tag"], r["value"]) for r in rows] == [
        ("topic", "x"),
        ("topic", "y"),
        ("topic", UNTAGGED),
        ("tier", "A"),
        ("tier", "B"),
        ("tier", UNTAGGED),
    ]
    groups = {r["tag"]: {} for r in rows}
    for r in rows:
        assert r["query_id"] == "all"
        groups[r["tag"]][r["value"]] = {"n": r["n"], "small": r["small"], "aggregates": {m: r[m] for m in MEASURES}}
    _check_groups(groups)


def test_csv_rows(capsys, files):
    code, plain, _ = _eval(capsys, files, "--format", "csv")
    code, out, _ = _eval(capsys, files, "--format", "csv", "--tags", files["tags"], "--group-by", "tier,topic")
    assert code == 0
    before = list(csv.reader(io.StringIO(plain)))
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == [*before[0], "tag", "value", "n", "small"]
    assert rows[1] == [*before[1], "", "", "", ""]  # the overall row, values unchanged
    groups: dict = {}
    for row in rows[2:]:
        record = dict(zip(rows[0], row, strict=True))
        assert record["query_id"] == "all"
        groups.setdefault(record["tag"], {})[record["value"]] = {
            "n": int(record["n"]),
            "small": {"true": True, "false": False}[record["small"]],
            "aggregates": {m: float(record[m]) for m in MEASURES},
        }
    assert list(groups) == ["tier", "topic"]  # --group-by order
    _check_groups({"topic": groups["topic"], "tier": groups["tier"]})


def test_table_sections(capsys, files):
    code, out, _ = _eval(capsys, files, "--tags", files["tags"], "--ci")
    assert code == 0
    assert out.index("by topic") < out.index("by tier")
    tier = out[out.index("by tier") :]
    want = _group_expected(_qids(TIER, "B"))
    b_line = next(line for line in tier.splitlines() if line.startswith("│ B "))
    assert "9 (small)" in b_line and f"{want['P@3']:.4f}" in b_line and f"{want['NumRel']:.0f}" in b_line
    a_line = next(line for line in tier.splitlines() if line.startswith("│ A "))
    assert "10 (small)" not in a_line and " 10 " in a_line
    untagged = next(line for line in tier.splitlines() if line.startswith(f"│ {UNTAGGED}"))
    assert " 5 (small)" in untagged
    assert "small: under 10 queries" in tier
    assert tier.count("[") >= 3 * 2  # an interval under each mean measure of each group


def test_trec_format_is_unchanged_and_says_so(capsys, files):
    code, plain, _ = _eval(capsys, files, "--format", "trec", "--per-query")
    code, out, err = _eval(capsys, files, "--format", "trec", "--per-query", "--tags", files["tags"])
    assert code == 0
    assert out == plain
    assert "--format trec holds per-query lines only" in err


def test_untagged_warning_when_no_query_is_tagged(capsys, files, tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("qid,tier\nQ00,A\n")
    code, out, err = _eval(capsys, files, "--tags", str(other), "--format", "json")
    assert code == 0
    assert json.loads(out)["groups"]["tier"] == {
        UNTAGGED: {"n": N_QUERIES, "small": False, "aggregates": json.loads(out)["aggregate"]}
    }
    assert f"none of the {N_QUERIES} evaluated queries is in" in err
    assert any("none of the" in w for w in json.loads(out)["warnings"])


def test_out_of_core_partitions_give_the_same_groups(capsys, files):
    code, whole, _ = _eval(capsys, files, "--tags", files["tags"], "--format", "json")
    code, parts, _ = _eval(capsys, files, "--tags", files["tags"], "--format", "json", "--partitions", "3")
    assert code == 0
    assert json.loads(parts)["groups"] == json.loads(whole)["groups"]


# -- bad input: exit 2 with a message -----------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "content", "extra", "message"),
    [
        (
            "tags.jsonl",
            '{"_id": "q00", "tier": "A"}\n{"_id": "q01", "tier": "B"}\n',
            ["--group-by", "tiers"],
            "no tag 'tiers' in {path} (its tags: tier)",
        ),
        (
            "tags.jsonl",
            '{"_id": "q00", "tier": "A"}\n{"_id": "q01", "tier": "B"}\n',
            ["--group-by", "tier,lang"],
            "no tag 'lang' in {path} (its tags: tier)",
        ),
        ("ids.csv", "qid\nq00\n", [], "{path}: holds query ids but no tags"),
        ("bad.jsonl", '{"_id": "q00", "tier": "A"}\n{"_id": q01}\n', [], "{path}:2: invalid JSON"),
        ("noid.csv", "name,tier\nq00,A\n", [], "{path}:1: no query id column"),
        ("blank.csv", "qid,tier\n,A\n", [], "{path}:2: missing query id"),
        ("empty.jsonl", "", [], "{path}: file is empty"),
    ],
)
def test_bad_tags_exit_2(capsys, files, tmp_path, name, content, extra, message):
    path = tmp_path / name
    path.write_text(content)
    code, out, err = _eval(capsys, files, "--tags", str(path), *extra)
    assert code == 2
    assert out == ""
    assert message.format(path=path) in err
    assert "Traceback" not in err


def test_missing_tags_file_and_group_by_alone_exit_2(capsys, files):
    code, _, err = _eval(capsys, files, "--tags", files["dir"] + "/absent.jsonl")
    assert code == 2 and "absent.jsonl: file not found" in err
    code, _, err = _eval(capsys, files, "--group-by", "tier")
    assert code == 2 and "--group-by needs --tags FILE" in err


# -- the label export's tier tags feed eval -----------------------------------------------------
def test_label_merge_tier_tags_feed_eval(capsys, tmp_path):
    human = tmp_path / "human.txt"
    human.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 0\n")
    llm = tmp_path / "llm.txt"
    llm.write_text("q2 0 d2 1\nq3 0 d1 0\nq3 0 d3 1\nq1 0 d3 1\n")
    gold, tiers = tmp_path / "gold.txt", tmp_path / "tiers.jsonl"
    code, _, err = invoke(
        capsys, "label", "merge", f"{human}:A", f"{llm}:B", "--out", str(gold), "--tags-out", str(tiers)
    )
    assert code == 0, err
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d2 1 3 s\nq1 Q0 d1 2 2 s\nq2 Q0 d2 1 3 s\nq3 Q0 d1 1 3 s\nq3 Q0 d3 2 2 s\n")
    code, out, err = invoke(capsys, "eval", str(gold), str(run), "-m", "RR@5", "--tags", str(tiers), "--format", "json")
    assert code == 0, err
    # q1: human d1, d2 and LLM d3 -> A+B, RR = 1/2; q2: human d1, LLM d2 -> A+B, RR = 1;
    # q3: LLM only -> B, RR = 1/2
    assert json.loads(out)["groups"] == {
        "tier": {
            "A+B": {"n": 2, "small": True, "aggregates": {"RR@5": 0.75}},
            "B": {"n": 1, "small": True, "aggregates": {"RR@5": 0.5}},
        }
    }
    assert not math.isnan(json.loads(out)["aggregate"]["RR@5"])


def test_one_line_jsonl_tags_file(capsys, files, tmp_path):
    one = tmp_path / "one.jsonl"
    one.write_text('{"_id": "q00", "tier": "A"}\n')  # what label merge --tags-out writes for one query
    code, out, err = _eval(capsys, files, "--tags", str(one), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["groups"]["tier"]["A"]["n"] == 1


def test_table_shows_bracketed_values_as_typed(capsys, files, tmp_path):
    """Tag values and query ids are text, not Rich markup: "[/x]" must neither crash nor vanish."""
    tags = tmp_path / "brackets.jsonl"
    tags.write_text(
        "".join(f'{{"_id": "q{i:02d}", "label": "{v}"}}\n' for i, v in enumerate(["[/x]", "[a]", "[bold]B"] * 8))
    )
    code, out, err = _eval(capsys, files, "--tags", str(tags))
    assert code == 0, err
    rows = [line.split("│")[1].strip() for line in out[out.index("by label") :].splitlines() if line.startswith("│ [")]
    assert sorted(rows) == ["[/x]", "[a]", "[bold]B"]


def test_odd_tag_values_sort_without_crashing(capsys, files, tmp_path):
    """Superscript digits are text, and numbers from Python are grouped by their text."""
    tags = tmp_path / "t.csv"
    tags.write_text("qid,area\n" + "".join(f"q{i:02d},{['10²', '9', '10'][i % 3]}\n" for i in range(N_QUERIES)))
    code, out, err = _eval(capsys, files, "--tags", str(tags), "--format", "json")
    assert code == 0, err
    assert list(json.loads(out)["groups"]["area"]) == ["9", "10", "10²"]
    res = rankgate.evaluate(QRELS, RANKING_RUN, MEASURES)
    by_int = res.by_group({f"q{i:02d}": {"tier": i % 2} for i in range(N_QUERIES)})  # type: ignore[dict-item]
    assert list(by_int["tier"]) == ["0", "1"] and by_int["tier"]["0"].n == N_QUERIES // 2
    comparison = rankgate.compare(QRELS, [RANKING_RUN, RANKING_RUN], ["P@3"], names=["a", "b"], n_resamples=100,
                                  tags={f"q{i:02d}": {"tier": i % 2} for i in range(N_QUERIES)})  # fmt: skip
    assert sorted(r["value"] for r in comparison.by_tag) == ["0", "1"]

"""Human review and gold-set tiers: the stratified sample (CSV without the judge's label), reading
reviewers' labels back, and the whole loop through the CLI: LLM labels from the local server ->
sample -> import -> agreement -> merge with tiers -> the tiers as query tags in compare and gate."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from rankgate.core.qrels import Qrels
from rankgate.errors import ConfigError, InputError
from rankgate.io.readers import read_qrels
from rankgate.io.tags import read_query_tags
from rankgate.label.export import merge_tiers, query_tiers
from rankgate.label.review import CSV_FIELDS, read_review_csv, stratified_sample, write_review_csv
from rankgate.label.store import JudgmentStore
from rankgate.label.types import Judgment
from tests.cli_support import invoke
from tests.label_support import FakeChatServer, expected_grade, make_collection


def skewed_qrels() -> Qrels:
    """50 pairs of grade 0, 10 of grade 1, 5 of grade 2, 2 of grade 3, over 7 queries."""
    data: dict[str, dict[str, int]] = {}
    n = 0
    for grade_, count in ((0, 50), (1, 10), (2, 5), (3, 2)):
        for _ in range(count):
            data.setdefault(f"q{n % 7}", {})[f"d{n}"] = grade_
            n += 1
    return Qrels.from_dict(data)


def test_stratified_sample_spreads_over_labels_by_hand():
    sample = stratified_sample(skewed_qrels(), 20)
    # 20 over 4 labels: 5 each; grade 3 has 2, so 3 are left: 1 each to grades 0 and 1 (grade 2 is
    # full at 5), then the last 1 to grade 0.
    assert Counter(label for _, _, label in sample) == {0: 7, 1: 6, 2: 5, 3: 2}
    assert len(set(sample)) == 20
    judged = skewed_qrels().to_dict()
    assert all(judged[q][d] == label for q, d, label in sample)
    # The same seed draws the same sample; another seed, another one (same spread).
    assert stratified_sample(skewed_qrels(), 20) == sample
    other = stratified_sample(skewed_qrels(), 20, seed=1)
    assert other != sample and Counter(lab for _, _, lab in other) == {0: 7, 1: 6, 2: 5, 3: 2}
    # Asking for more than there is takes everything.
    assert len(stratified_sample(skewed_qrels(), 1000)) == 67


def test_stratified_sample_by_query():
    sample = stratified_sample(skewed_qrels(), 14, strata="query")
    assert Counter(q for q, _, _ in sample) == {f"q{i}": 2 for i in range(7)}
    with pytest.raises(ConfigError, match="strata must be one of label, query"):
        stratified_sample(skewed_qrels(), 5, strata="doc")
    with pytest.raises(ConfigError, match="sample size must be >= 1"):
        stratified_sample(skewed_qrels(), 0)


def test_review_csv_has_the_texts_and_not_the_label(tmp_path: Path):
    sample = [("q1", "d1", 3), ("q2", "d2", 0)]
    path = tmp_path / "review.csv"
    queries = {"q1": "green tea", "q2": "espresso, with milk"}
    corpus = {"d1": "Brew green tea at 80 C.\n\nNot hotter.", "d2": 'He said "strong"'}
    assert write_review_csv(sample, queries, corpus, path) == 2
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == CSV_FIELDS
    assert [(r["query_id"], r["doc_id"], r["query"], r["document"]) for r in rows] == [
        ("q1", "d1", "green tea", corpus["d1"]),  # commas, quotes and newlines survive
        ("q2", "d2", "espresso, with milk", corpus["d2"]),
    ]
    assert {r["label"] for r in rows} == {""} and {r["notes"] for r in rows} == {""}
    with pytest.raises(InputError, match="document 'd9' of the sample is not in the corpus"):
        write_review_csv([("q1", "d9", 1)], queries, corpus, tmp_path / "x.csv")


def test_reading_reviewers_labels(tmp_path: Path):
    path = tmp_path / "filled.csv"
    path.write_text(
        "sample_id,query_id,doc_id,query,document,label,notes\n"
        's1,q1,d1,tea,"two\nlines",2,partial answer\n'
        "s2,q1,d2,tea,text,,\n"
        "s3,q2,d3,tea,text, 0 ,\n"
    )
    judgments, blank = read_review_csv(path, annotator="alice", tier="A")
    assert blank == 1
    assert [(j.query_id, j.doc_id, j.label, j.reason, j.tier, j.judge_id) for j in judgments] == [
        ("q1", "d1", 2, "partial answer", "A", "human:alice"),
        ("q2", "d3", 0, "", "A", "human:alice"),
    ]
    # Only query_id, doc_id and label are needed (a spreadsheet may drop the rest).
    minimal = tmp_path / "min.csv"
    minimal.write_text("query_id,doc_id,label\nq1,d1,1\n")
    assert [j.label for j in read_review_csv(minimal)[0]] == [1]


@pytest.mark.parametrize(
    ("text", "scale", "message"),
    [
        ("query_id,doc_id,label\nq1,d1,5\n", (0, 1, 2, 3), "r.csv:2: label must be one of 0, 1, 2, 3 (got '5')"),
        ("query_id,doc_id,label\nq1,d1,2\n", (0, 1), "r.csv:2: label must be one of 0, 1 (got '2')"),
        ("query_id,doc_id,label\nq1,d1,high\n", (0, 1, 2, 3), "r.csv:2: label must be one of 0, 1, 2, 3 (got 'high')"),
        ("query_id,doc_id,label\nq1,d1,1\nq1,d1,2\n", (0, 1, 2, 3), "r.csv:3: pair ('q1', 'd1') labeled twice"),
        ("query_id,label\nq1,1\n", (0, 1, 2, 3), "r.csv:1: no 'doc_id' column"),
        ("query_id,doc_id,label\n,d1,1\n", (0, 1, 2, 3), "r.csv:2: missing query_id or doc_id"),
        ("", (0, 1, 2, 3), "r.csv: file is empty"),
    ],
)
def test_bad_review_files_name_the_file_and_line(tmp_path: Path, text: str, scale: tuple[int, ...], message: str):
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_review_csv(path, labels=scale)
    assert message in str(info.value)


def test_merge_keeps_the_first_source_and_tiers_per_query():
    human = [Judgment("q1", "d1", 3, "h", "human", tier="A")]
    llm = [Judgment(q, d, 1, "l", "llm", tier="B") for q, d in (("q1", "d1"), ("q1", "d2"), ("q2", "d3"))]
    merged, overridden = merge_tiers([human, llm])
    assert [(j.query_id, j.doc_id, j.label, j.tier) for j in merged] == [
        ("q1", "d1", 3, "A"),
        ("q1", "d2", 1, "B"),
        ("q2", "d3", 1, "B"),
    ]
    assert overridden == {"0": 0, "1": 1}
    assert query_tiers(merged) == {"q1": "A+B", "q2": "B"}


# -- the whole loop through the CLI -------------------------------------------------------------


def test_review_loop_and_tiers_as_query_tags(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("RANKGATE_STORE", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-review-loop")
    corpus, queries, run = make_collection(6, 4)  # 24 pairs, grades (i + j) % 4: six of each
    for name, text in (("corpus.jsonl", corpus), ("queries.jsonl", queries), ("run.txt", run)):
        (tmp_path / name).write_text(text)
    # A second system: the same documents in reverse order.
    rows = [line.split() for line in run.splitlines()]
    (tmp_path / "rev.txt").write_text("".join(f"{q} Q0 {d} {5 - int(r)} {r}.0 rev\n" for q, _, d, r, _, _ in rows))
    p = {name: str(tmp_path / name) for name in ("corpus.jsonl", "queries.jsonl", "run.txt", "rev.txt")}
    llm_txt, llm_jsonl = str(tmp_path / "llm.txt"), str(tmp_path / "llm.jsonl")
    with FakeChatServer() as server:
        code, _, err = invoke(
            capsys, "label", "--run", p["run.txt"], "--corpus", p["corpus.jsonl"], "--queries", p["queries.jsonl"],
            "--depth", "4", "--base-url", server.url, "--model", "fake-model", "--out", llm_txt, "--jsonl", llm_jsonl,
            "--no-progress",
        )  # fmt: skip
    assert code == 0, err

    # 1. Export a sample stratified by the LLM's labels; the file does not carry them.
    review = tmp_path / "review.csv"
    code, out, err = invoke(
        capsys, "label", "sample", llm_jsonl, "--corpus", p["corpus.jsonl"], "--queries", p["queries.jsonl"],
        "--size", "8", "-o", str(review),
    )  # fmt: skip
    assert code == 0, err
    assert "wrote 8 pairs" in out and "0: 2, 1: 2, 2: 2, 3: 2" in out
    with review.open(newline="") as f:
        rows_ = list(csv.DictReader(f))
    assert len(rows_) == 8 and {r["label"] for r in rows_} == {""}
    assert "marker says" not in review.read_text()  # nor the LLM's reasons
    sampled = {(r["query_id"], r["doc_id"]) for r in rows_}
    assert Counter(expected_grade(q, d) for q, d in sampled) == {0: 2, 1: 2, 2: 2, 3: 2}

    # 2. Reviewers fill it in: they agree, except that they call every grade 3 a 2; one row left blank.
    human_labels = {}
    for i, r in enumerate(rows_):
        if i == 0:
            continue
        g = expected_grade(r["query_id"], r["doc_id"])
        r["label"] = str(2 if g == 3 else g)
        human_labels[(r["query_id"], r["doc_id"])] = int(r["label"])
    with review.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows_)
    human_txt, store = str(tmp_path / "human.txt"), tmp_path / "labels.sqlite"
    code, out, err = invoke(capsys, "label", "import", str(review), "-o", human_txt, "--store", str(store))
    assert code == 0, err
    assert "read 7 labels" in out and "1 rows left blank" in out
    assert read_qrels(human_txt).to_dict() == _nested(human_labels)
    with JudgmentStore(store) as s:
        assert {(j.query_id, j.doc_id): j.label for j in s.judgments("human:human")} == human_labels

    # 3. Agreement of the LLM with the humans, against scikit-learn.
    code, out, err = invoke(capsys, "label", "agreement", human_txt, llm_txt, "--scale", "graded", "--format", "json")
    assert code == 0, err
    body = json.loads(out)
    keys = sorted(human_labels)
    ref = [human_labels[k] for k in keys]
    cand = [expected_grade(*k) for k in keys]
    assert body["pairs"] == {"shared": 7, "reference_only": 0, "candidate_only": 17}
    for name, weights in (("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")):
        oracle = cohen_kappa_score(ref, cand, labels=[0, 1, 2, 3], weights=weights)
        assert body["kappa"][name] == pytest.approx(oracle, abs=1e-4)
    assert body["confusion"]["matrix"][2][3] == sum(1 for k in keys if expected_grade(*k) == 3)

    # 4. Merge into a gold set: human labels (tier A) win over the LLM's (tier B, from the JSONL).
    gold, tiers = str(tmp_path / "gold.txt"), str(tmp_path / "tiers.jsonl")
    code, out, err = invoke(capsys, "label", "merge", f"{human_txt}:A", llm_jsonl, "--out", gold, "--tags-out", tiers)
    assert code == 0, err
    merged = read_qrels(gold).to_dict()
    assert sum(len(d) for d in merged.values()) == 24
    for (q, d), g in human_labels.items():
        assert merged[q][d] == g
    human_queries = {q for q, _ in human_labels}
    tags = read_query_tags(tiers)
    assert tags == {f"q{i}": {"tier": "A+B" if f"q{i}" in human_queries else "B"} for i in range(1, 7)}

    # 5. The tiers are query tags: compare breaks results down by tier...
    code, out, err = invoke(
        capsys, "compare", gold, p["run.txt"], p["rev.txt"], "-m", "nDCG@4", "--tags", tiers, "--format", "json"
    )
    assert code == 0, err
    by_tier = {row["value"]: row["n"] for row in json.loads(out)["by_tag"] if row["tag"] == "tier"}
    assert by_tier == dict(Counter(t["tier"] for t in tags.values()))
    # ...and a gate can look at the human-checked queries only.
    config = tmp_path / "gates.yaml"
    config.write_text("gates:\n  - name: gold_ndcg\n    metric: nDCG@4\n    threshold: 0.1\n    tags: {tier: A+B}\n")
    code, out, err = invoke(
        capsys, "gate", "--qrels", gold, "--run", p["rev.txt"], "--baseline-run", p["run.txt"], "--config",
        str(config), "--tags", tiers, "--format", "json", "--no-record",
    )  # fmt: skip
    assert code == 0, err
    (gate,) = json.loads(out)["gates"]
    assert gate["n_queries"] == len(human_queries) < 6 and gate["tags"] == {"tier": ["A+B"]}
    assert gate["status"] == "pass"


def _nested(pairs: dict[tuple[str, str], int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (q, d), g in pairs.items():
        out.setdefault(q, {})[d] = g
    return out


def test_label_qrels_are_trec_whatever_the_extension(tmp_path):
    """--out of label, import and merge is documented as TREC qrels: a .csv name does not change that."""
    from rankgate.label.export import write_trec

    judgments = [Judgment("q1", "d1", 3, "h", "human"), Judgment("q1", "d2", 0, "h", "human")]
    assert write_trec(judgments, tmp_path / "gold.csv") == 2
    assert (tmp_path / "gold.csv").read_text() == "q1 0 d1 3\nq1 0 d2 0\n"

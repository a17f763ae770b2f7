"""Weak labels: BM25 scores (checked against BM25 computed by hand), click logs (CTR
thresholds, minimum impressions, malformed logs), and a cross-encoder loaded from a local
folder (a tiny BERT built and saved by the test, checked against transformers run directly)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from rankgate.errors import ConfigError, InputError
from rankgate.io.readers import read_qrels
from rankgate.label.types import Pair
from rankgate.label.weak import BM25Judge, ClickJudge, CrossEncoderJudge, check_thresholds, grade, read_clicks
from tests.cli_support import invoke

CORPUS = {
    "a": "green tea leaves brew green",
    "b": "coffee beans roast",
    "c": "kettle water boil tea",
    "d": "the of and",  # stopwords only: an empty document
    "e": "green kettle",
}
QUERIES = {"q1": "green tea unicorn", "q2": "boil water", "q3": "the and"}


def bm25_by_hand(query: str, doc: str, corpus: dict[str, str], k1: float = 1.2, b: float = 0.75) -> float:
    """BM25, Lucene variant: sum over query terms of idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)),
    idf = ln(1 + (N - df + 0.5) / (df + 0.5)); tokens: lowercase words of 2+ letters, stopwords dropped."""
    stop = {"the", "of", "and"}

    def tokens(text: str) -> list[str]:
        return [w for w in re.findall(r"\w\w+", text.lower()) if w not in stop]

    docs = {d: tokens(t) for d, t in corpus.items()}
    avgdl = sum(len(t) for t in docs.values()) / len(docs)
    words = docs[doc]
    score = 0.0
    for term in set(tokens(query)):
        df = sum(1 for t in docs.values() if term in t)
        if df == 0:
            continue
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        tf = words.count(term)
        score += idf * tf / (tf + k1 * (1 - b + b * len(words) / avgdl))
    return score


def pairs_of(query: str) -> list[Pair]:
    return [Pair(query, d, QUERIES[query], CORPUS[d]) for d in CORPUS]


def test_thresholds_make_grades():
    assert [grade(v, (0.25, 0.5, 0.75)) for v in (-1.0, 0.0, 0.2499, 0.25, 0.5, 0.74, 0.75, 9.0)] == [
        0,
        0,
        0,
        1,
        2,
        2,
        3,
        3,
    ]
    assert [grade(v, (0.5,)) for v in (0.4, 0.5)] == [0, 1]  # one threshold: binary labels
    for bad in ([], [0.5, 0.5], [0.6, 0.2], [0.1, math.inf]):
        with pytest.raises(ConfigError, match="threshold"):
            check_thresholds(bad)


@pytest.mark.extra("bench")
def test_bm25_raw_scores_and_grades_match_a_hand_computation():
    judge = BM25Judge(CORPUS, QUERIES, normalize="none", thresholds=(0.3, 0.6, 0.9))
    made = judge.judge_batch(pairs_of("q1") + pairs_of("q2"))
    assert [(j.query_id, j.doc_id) for j in made] == [(q, d) for q in ("q1", "q2") for d in CORPUS]
    for j in made:
        expected = bm25_by_hand(QUERIES[j.query_id], j.doc_id, CORPUS)
        assert j.score == pytest.approx(expected, rel=1e-5)  # bm25s scores in float32
        assert j.label == grade(expected, (0.3, 0.6, 0.9))
        assert j.tier == "C" and j.judge == "bm25" and j.judge_id == judge.judge_id
    by_doc = {(j.query_id, j.doc_id): j.label for j in made}
    # By hand (N = 5, avgdl = 14/5; "green", "tea" in 2 documents: idf ln 2.4; "boil", "water" in 1: ln 4):
    # q1/a = ln 2.4 * (2 / 3.9071 + 1 / 2.9071) = 0.7493 -> grade 2; q1/c = ln 2.4 / 2.5857 = 0.3386 -> 1;
    # q2/c = 2 ln 4 / 2.5857 = 1.0723 -> 3.
    assert by_doc[("q1", "a")] == 2 and by_doc[("q1", "c")] == 1 and by_doc[("q2", "c")] == 3


@pytest.mark.extra("bench")
def test_bm25_normalized_by_the_best_document_of_the_query():
    judge = BM25Judge(CORPUS, QUERIES)  # normalize="max", thresholds 0.25, 0.5, 0.75
    made = {(j.query_id, j.doc_id): j for j in judge.judge_batch(pairs_of("q1") + pairs_of("q3"))}
    best = max(bm25_by_hand(QUERIES["q1"], d, CORPUS) for d in CORPUS)
    for d in CORPUS:
        value = bm25_by_hand(QUERIES["q1"], d, CORPUS) / best
        assert made[("q1", d)].score == pytest.approx(value, rel=1e-5)
        assert made[("q1", d)].label == grade(value, (0.25, 0.5, 0.75))
    assert made[("q1", "a")].label == 3 and made[("q1", "a")].score == pytest.approx(1.0)
    # A query of stopwords only matches nothing: every document grade 0, no division by zero.
    assert {made[("q3", d)].label for d in CORPUS} == {0}
    assert {made[("q3", d)].score for d in CORPUS} == {0.0}


@pytest.mark.extra("bench")
def test_bm25_identity_depends_on_settings_and_corpus():
    base = BM25Judge(CORPUS, QUERIES).judge_id
    assert BM25Judge(CORPUS, QUERIES).judge_id == base
    assert BM25Judge(CORPUS, QUERIES, thresholds=(0.5,)).judge_id != base
    assert BM25Judge({**CORPUS, "f": "tea"}, QUERIES).judge_id != base
    with pytest.raises(InputError, match="'zz' is not in the corpus"):
        BM25Judge(CORPUS, QUERIES).judge_batch([Pair("q1", "zz")])
    with pytest.raises(ConfigError, match="normalize must be 'max' or 'none'"):
        BM25Judge(CORPUS, QUERIES, normalize="z")


# -- click logs ---------------------------------------------------------------------------------

CLICKS_CSV = """query_id,doc_id,impressions,clicks
q1,a,100,40
q1,b,100,10
q1,c,50,5
q1,a,100,20
q1,rare,3,3
q2,c,20,0
q2,e,9,9
"""


def test_click_log_rows_are_summed_and_thresholded_with_min_impressions(tmp_path: Path):
    path = tmp_path / "clicks.csv"
    path.write_text(CLICKS_CSV)
    clicks = read_clicks(path)
    assert clicks[("q1", "a")] == (200, 60)  # two rows summed
    judge = ClickJudge(clicks, thresholds=(0.05, 0.15, 0.3), min_impressions=10)
    made = judge.judge_batch([Pair(q, d) for q, d in clicks] + [Pair("q9", "never-shown")])
    got = {(j.query_id, j.doc_id): (j.label, j.score) for j in made}
    # CTR: q1/a 60/200 = 0.30 -> 3; q1/b 0.10 -> 1; q1/c 0.10 -> 1; q2/c 0 -> 0.
    # q1/rare (3 impressions) and q2/e (9) are under the minimum: no label, not a guess of 0.
    assert got == {("q1", "a"): (3, 0.3), ("q1", "b"): (1, 0.1), ("q1", "c"): (1, 0.1), ("q2", "c"): (0, 0.0)}
    assert judge.labelable() == [("q1", "a"), ("q1", "b"), ("q1", "c"), ("q2", "c")]
    assert ClickJudge(clicks, min_impressions=9).labelable()[-1] == ("q2", "e")
    assert made[0].reason == "CTR 0.300 (60/200)"


def test_click_log_as_jsonl_and_tsv(tmp_path: Path):
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text(
        '{"qid": "q1", "docid": "a", "views": 12, "clicks": 6}\n{"qid": "q1", "docid": "b", "views": 4, "clicks": 0}\n'
    )
    assert read_clicks(jsonl) == {("q1", "a"): (12, 6), ("q1", "b"): (4, 0)}
    tsv = tmp_path / "c.tsv"
    tsv.write_text("query\tdoc\tshown\tclick_count\nq1\ta\t12\t6\n")
    assert read_clicks(tsv) == {("q1", "a"): (12, 6)}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("query_id,doc_id,impressions,clicks\nq1,a,10,11\n", "clicks.csv:2: 11 clicks but only 10 impressions"),
        ("query_id,doc_id,impressions,clicks\nq1,a,10,2\nq1,b,-3,0\n", "clicks.csv:3: impressions must be a whole"),
        ("query_id,doc_id,impressions,clicks\nq1,a,ten,2\n", "clicks.csv:2: impressions must be a whole number"),
        ("query_id,doc_id,impressions,clicks\nq1,a,10,2.5\n", "clicks.csv:2: clicks must be a whole number"),
        ("query_id,doc_id,clicks\nq1,a,2\n", "clicks.csv:1: no impressions column"),
        ("query_id,doc_id,impressions,clicks\nq1,,10,2\n", "clicks.csv:2: missing query or document id"),
        ("", "clicks.csv: file is empty"),
        ('{"qid": "q1", "docid": "a", "impressions": 1, "clicks": 0}\n{"qid": \n', "clicks.csv:2: invalid JSON"),
    ],
)
def test_malformed_click_logs_name_the_file_and_line(tmp_path: Path, text: str, message: str):
    path = tmp_path / "clicks.csv"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_clicks(path)
    assert message in str(info.value)


# -- the CLI ------------------------------------------------------------------------------------


@pytest.fixture
def texts(tmp_path: Path) -> dict[str, str]:
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in CORPUS.items()))
    queries.write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 3.0 s\nq1 Q0 c 2 2.0 s\nq1 Q0 b 3 1.0 s\nq2 Q0 c 1 2.0 s\nq2 Q0 e 2 1.0 s\n")
    return {"corpus": str(corpus), "queries": str(queries), "run": str(run)}


@pytest.mark.extra("bench")
def test_bm25_judge_from_the_cli(capsys, texts, tmp_path):
    out = tmp_path / "weak.txt"
    argv = ["label", "--run", texts["run"], "--corpus", texts["corpus"], "--queries", texts["queries"], "--depth", "2"]
    code, stdout, err = invoke(
        capsys, *argv, "--judge", "bm25", "--normalize", "none", "--thresholds", "0.3,0.6", "--out", str(out),
        "--jsonl", str(tmp_path / "weak.jsonl"), "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(stdout)
    assert body["counts"]["new"] == 4 and body["complete"] and body["usage"]["cost"] == 0
    qrels = read_qrels(out).to_dict()
    assert qrels == {
        q: {d: grade(bm25_by_hand(QUERIES[q], d, CORPUS), (0.3, 0.6)) for d in docs} for q, docs in qrels.items()
    }
    assert sorted((q, d) for q, docs in qrels.items() for d in docs) == [
        ("q1", "a"),
        ("q1", "c"),
        ("q2", "c"),
        ("q2", "e"),
    ]
    row = json.loads((tmp_path / "weak.jsonl").read_text().splitlines()[0])
    assert (
        row["tier"] == "C"
        and row["judge"] == "bm25"
        and row["score"] == pytest.approx(bm25_by_hand(QUERIES["q1"], "a", CORPUS), rel=1e-5)
    )


def test_click_judge_from_the_cli_with_and_without_runs(capsys, texts, tmp_path):
    log = tmp_path / "clicks.csv"
    log.write_text(CLICKS_CSV)
    # No run: the pool is every logged pair with enough impressions.
    code, stdout, err = invoke(
        capsys, "label", "--judge", "clicks", "--clicks", str(log), "--out", str(tmp_path / "c.txt"), "--format", "json"
    )
    assert code == 0, err
    assert read_qrels(tmp_path / "c.txt").to_dict() == {"q1": {"a": 3, "b": 1, "c": 1}, "q2": {"c": 0}}
    # With a run: its pairs without enough impressions stay unjudged ("no signal"), not failed.
    code, stdout, err = invoke(
        capsys, "label", "--run", texts["run"], "--depth", "3", "--judge", "clicks", "--clicks", str(log),
        "--min-impressions", "10", "--out", str(tmp_path / "r.txt"), "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(stdout)
    assert body["counts"]["new"] == 4 and body["counts"]["no_signal"] == 1  # q2/e: 9 impressions
    assert body["coverage"]["q2"]["judged"] == 1 and body["coverage"]["q2"]["pool"] == 2


# -- a cross-encoder from a local folder ---------------------------------------------------------

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "green", "tea", "leaves", "brew", "coffee", "beans", "roast"]
VOCAB += ["kettle", "water", "boil", "unicorn", "the", "of", "and"]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-layer BERT with a one-logit head, saved with its tokenizer: built offline, no hub."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("sentence_transformers")
    folder = tmp_path_factory.mktemp("tiny-ce")
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    tokenizer = transformers.BertTokenizer(str(folder / "vocab.txt"))
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=64, num_labels=1, initializer_range=1.0,  # wide weights: outputs spread over (0, 1)
    )  # fmt: skip
    model = transformers.BertForSequenceClassification(config)
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def oracle_scores(folder: Path, pairs: list[Pair]) -> list[float]:
    """sigmoid(logit) of each (query, document), computed with transformers directly."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True).eval()
    out = []
    with torch.no_grad():
        for p in pairs:
            encoded = tokenizer(p.query, p.document, return_tensors="pt")
            out.append(float(torch.sigmoid(model(**encoded).logits)[0, 0]))
    return out


@pytest.mark.slow
def test_cross_encoder_from_a_local_folder(tiny_cross_encoder, monkeypatch, capsys, texts, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a hub lookup would fail the test
    pairs = pairs_of("q1") + pairs_of("q2")
    expected = oracle_scores(tiny_cross_encoder, pairs)
    assert max(expected) - min(expected) > 0.2  # the outputs are spread: the grades tell pairs apart
    ordered = sorted(expected)
    # Thresholds halfway between neighbouring scores (never on one): grades 0-3 all occur.
    thresholds = tuple((ordered[i - 1] + ordered[i]) / 2 for i in (2, 5, 8))
    judge = CrossEncoderJudge(tiny_cross_encoder, thresholds=thresholds)
    made = judge.judge_batch(pairs)
    assert [j.score for j in made] == pytest.approx(expected, abs=1e-5)
    assert [j.label for j in made] == [grade(s, thresholds) for s in expected]
    assert sorted({j.label for j in made}) == [0, 1, 2, 3]
    assert made[0].judge == "cross-encoder" and made[0].tier == "C" and made[0].model == tiny_cross_encoder.name
    # Through the CLI: --model is the local folder.
    out = tmp_path / "ce.txt"
    code, _, err = invoke(
        capsys, "label", "--run", texts["run"], "--corpus", texts["corpus"], "--queries", texts["queries"], "--depth",
        "2", "--judge", "cross-encoder", "--model", str(tiny_cross_encoder), "--thresholds",
        ",".join(repr(t) for t in thresholds), "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    want = {(p.query_id, p.doc_id): grade(s, thresholds) for p, s in zip(pairs, expected, strict=True)}
    assert read_qrels(out).to_dict() == {
        "q1": {"a": want[("q1", "a")], "c": want[("q1", "c")]},
        "q2": {"c": want[("q2", "c")], "e": want[("q2", "e")]},
    }


def test_cross_encoder_needs_a_local_folder(capsys, texts, tmp_path):
    with pytest.raises(InputError, match="cross-encoder model folder not found"):
        CrossEncoderJudge(tmp_path / "nowhere")
    code, _, err = invoke(
        capsys, "label", "--run", texts["run"], "--corpus", texts["corpus"], "--queries", texts["queries"], "--judge",
        "cross-encoder", "--model", "cross-encoder/ms-marco-MiniLM-L-6-v2", "--out", str(tmp_path / "x.txt"),
    )  # fmt: skip
    assert code == 2 and "cross-encoder model folder not found (give a local path)" in err

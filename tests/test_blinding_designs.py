"""Full blinding with several conditions and replicates (SPEC §3.1, §5.5), in real git through the CLI.

A four-way design in miniature: baseline A and two treatments B and B1, two sampled responses per
(question, condition). The blind pass hides all three conditions; each (question, condition,
replicate) is its own opaque item; every treatment is read from its stripped copy; the key records
the replicate; unblinding maps each blind cell back to `CellKey(q, c, d, replicate)`. Oracles are
independent of the code under test: hashlib for digests, regexes for tells, texts written by hand.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from aoven_git.blind_corpus import corpus_violations, unblind_sheet
from aoven_git.blinding import BlindKey, Item, KeyEntry, KeyProblem, build_corpus, check_corpus, parse_key
from aoven_git.model import CellKey, SheetId
from aoven_git.plan import load_plan
from aoven_git.sheet_writer import render_sheet
from aoven_git.validation import validate_sources
from tests.conftest import GitRepo, Result, run_cli

PLAN = """\
version: 1
study: arms-blind
study_dir: study
responses: "test_{condition}/{question}_{replicate}.md"
stripped_responses: "test_{condition}_stripped/{question}_{replicate}.md"
replicates: 2
scale: {min: 0, max: 3}
conditions:
  - {id: A, name: Baseline, role: baseline}
  - {id: B, name: Long form}
  - {id: B1, name: Short form}
transitions:
  - {id: 1, name: "FACT→HYP"}
dimensions:
  - {id: D1, name: One, kind: epistemic, transitions: [1]}
  - {id: D2, name: Two, kind: quality}
questions:
  - {id: Q1, text: "Why is the sky blue?", expects: [1]}
  - {id: Q2, text: "Do cats dream?", expects: [1]}
raters:
  - {id: cto, name: CTO, emails: [cto@example.org]}
  - {id: logician, name: Logician, emails: [logician@example.org]}
passes:
  - {id: unblinded, conditions: [A, B, B1], dimensions: [D1, D2], primary: true}
  - {id: hidden, conditions: [A, B, B1], dimensions: [D1, D2], stripped: true, blind: true}
markers: [FACT, HYP]
rules:
  pass: {treatment: B}
security: {require_signed: false, allowed_signers: null}
locked: [study_dir, responses, scale, conditions, transitions, dimensions, questions, passes, markers, rules]
"""
QUESTIONS = {"Q1": "Why is the sky blue?", "Q2": "Do cats dream?"}
ANSWERS = {"Q1": "Sunlight scatters off air molecules", "Q2": "Cats have REM sleep"}
ITEMS = [(q, c, r) for q in ("Q1", "Q2") for c in ("A", "B", "B1") for r in (1, 2)]
PEOPLE = {r: (r.title(), f"{r}@example.org") for r in ("cto", "logician", "lead")}
CORPUS = "study/blind/hidden"
KEY_JSON = f"{CORPUS}/key.json"
TELLS = [re.compile(p) for p in (r"\[\s*(?:FACT|HYP)", r"(?i)aoven", r"(?i)\bconditions?\s*(?:a|b|b1)\b",
                                 r"(?i)test_[ab]", r"(?i)long form|short form|baseline")]


def answer(q: str, c: str, r: int) -> str:
    """What the model said: the same words in every condition (only markers and framing differ),
    and a replicate number a rater may see (sampled responses differ in wording)."""
    return f"{ANSWERS[q]}, sample {r}. It may be more subtle."


def response(q: str, c: str, r: int) -> str:
    if c == "A":
        return f"# {q}\n\n## Response\n\n{answer(q, c, r)}\n"
    head = f"# {q} — Condition {c}\n\n## Prompt\n\n[Aoven v0.1 | require: FACT, HYP]\n{QUESTIONS[q]}\n\n"
    first, second = answer(q, c, r).split(". ")
    return f"{head}## Response\n\n[FACT] {first}. [HYP] {second}\n"


def expected_text(q: str, c: str, r: int) -> str:
    """What a rater must see: the plan's question and the marker-free response part, by hand."""
    return f"## Question\n\n{QUESTIONS[q]}\n\n## Response\n\n{answer(q, c, r)}\n"


class ArmsStudy(GitRepo):
    def __init__(self, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        super().__init__(path)
        self.monkeypatch = monkeypatch

    def run(self, who: str, *args: str) -> Result:
        name, email = PEOPLE[who]
        for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                           ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
            self.monkeypatch.setenv(var, value)
        return run_cli(*args, cwd=self.path)

    def start(self, responses: dict[str, str] | None = None) -> None:
        self.write("aoven.yaml", PLAN)
        for (q, c, r) in ITEMS:
            self.write(f"study/test_{c.lower()}/{q.lower()}_{r}.md", response(q, c, r))
        for rel, text in (responses or {}).items():
            self.write(rel, text)
        res = self.run("lead", "strip-markers")
        assert res.code == 0, res.output
        self.commit("plan and responses", author=PEOPLE["lead"])

    def sneak(self, who: str, message: str, *paths: str) -> str:
        self.git("add", "--", *paths)
        self.git("commit", "-q", "--no-verify", "-m", message, author=PEOPLE[who])
        return self.head_commit()


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ArmsStudy:
    s = ArmsStudy(tmp_path / "repo", monkeypatch)
    s.start()
    return s


def blind(s: ArmsStudy, tmp_path: Path) -> tuple[Path, BlindKey]:
    key_file = tmp_path / "keys" / "hidden.json"
    res = s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file))
    assert res.code == 0, res.output
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    return key_file, key


# --------------------------------------------------------------------------- blind


def test_every_question_condition_and_replicate_is_its_own_opaque_item(
        study: ArmsStudy, tmp_path: Path) -> None:
    key_file, key = blind(study, tmp_path)
    assert sorted(e.item for e in key.entries) == sorted(ITEMS)
    assert len({e.blind_id for e in key.entries}) == len(ITEMS) == 12
    committed = study.git("show", "--name-only", "--format=", "HEAD").split()
    assert sorted(committed) == sorted([*(f"{CORPUS}/{e.blind_id}.md" for e in key.entries),
                                        "study/seals/blind_key_hidden.sha256"])
    # the key names each replicate; the raw JSON says so too
    raw = json.loads(key_file.read_bytes())
    assert sorted((v["question"], v["condition"], v["replicate"]) for v in raw["entries"].values()) == ITEMS
    for e in key.entries:
        text = study.git("show", f"HEAD:{CORPUS}/{e.blind_id}.md") + "\n"
        assert text == expected_text(*e.item)
        assert not [rx.pattern for rx in TELLS if rx.search(text)], (e.item, text)


def test_every_treatment_is_read_from_its_stripped_copy_and_the_baseline_as_generated(
        study: ArmsStudy, tmp_path: Path) -> None:
    _, key = blind(study, tmp_path)
    for e in key.entries:
        folder = "test_a" if e.condition == "A" else f"test_{e.condition.lower()}_stripped"
        data = (study.path / "study" / folder / f"{e.question.lower()}_{e.replicate}.md").read_bytes()
        assert e.source_sha256 == hashlib.sha256(data).hexdigest(), e.item


def test_a_treatment_naming_its_condition_in_one_replicate_is_refused_with_file_and_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = ArmsStudy(tmp_path / "repo", monkeypatch)
    leaky = response("Q2", "B1", 2).replace("It may", "As Condition B1 says, it may")
    s.start({"study/test_b1/q2_2.md": leaky})
    before = s.head_commit()
    res = s.run("lead", "blind", "--pass", "hidden", "--key-out", str(tmp_path / "k.json"))
    assert res.code == 1
    assert "study/test_b1_stripped/q2_2.md:10: Q2/B1#2 would show condition-word 'Condition B1'" in res.err
    assert s.head_commit() == before and not (s.path / CORPUS).exists() and not (tmp_path / "k.json").exists()


def test_a_missing_replicate_is_named_and_nothing_is_written(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    s = ArmsStudy(tmp_path / "repo", monkeypatch)
    s.start()
    s.git("rm", "-q", "study/test_b1_stripped/q1_2.md")
    s.sneak("lead", "lose one stripped copy")
    before = s.head_commit()
    res = s.run("lead", "blind", "--pass", "hidden", "--key-out", str(tmp_path / "k.json"))
    assert res.code == 1 and "study/test_b1_stripped/q1_2.md" in res.err and "strip-markers" in res.err
    assert s.head_commit() == before and not (s.path / CORPUS).exists()


# --------------------------------------------------------------------------- the key


def test_a_key_without_replicates_is_byte_identical_to_what_earlier_versions_wrote() -> None:
    key = BlindKey("hidden", "0" * 32, (KeyEntry("c4mxq0z7k2ab", "Q1", "B", "a" * 64),))
    assert key.to_json() == (
        '{\n  "entries": {\n    "c4mxq0z7k2ab": {\n      "condition": "B",\n      "question": "Q1",\n'
        f'      "source_sha256": "{"a" * 64}"\n    }}\n  }},\n  "format": "aoven-git blind key v1",\n'
        f'  "nonce": "{"0" * 32}",\n  "pass": "hidden"\n}}\n').encode()


def test_a_key_records_each_replicate_and_reads_back() -> None:
    key = BlindKey("hidden", "0" * 32, (KeyEntry("c4mxq0z7k2ab", "L1", "TRT", "a" * 64, 2),
                                        KeyEntry("k9w3h8r2t6ye", "L1", "TRT", "b" * 64, 1)))
    data = key.to_json()
    assert b'"replicate": 2' in data and b'"replicate": 1' in data
    assert parse_key(data, pass_id="hidden") == key
    assert key.by_response()[("L1", "TRT", 2)].blind_id == "c4mxq0z7k2ab"


@pytest.mark.parametrize("bad", ["0", "-1", '"2"', "true", "1.5"])
def test_a_key_with_a_malformed_replicate_is_refused_with_its_line(bad: str) -> None:
    good = BlindKey("hidden", "0" * 32, (KeyEntry("c4mxq0z7k2ab", "L1", "TRT", "a" * 64, 2),)).to_json()
    got = parse_key(good.replace(b'"replicate": 2', f'"replicate": {bad}'.encode()), pass_id="hidden")
    assert isinstance(got, KeyProblem)
    assert got.line == 3 and "replicate" in got.message


def test_two_entries_for_one_replicate_are_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        BlindKey("hidden", "0" * 32, (KeyEntry("c4mxq0z7k2ab", "L1", "TRT", "a" * 64, 2),
                                      KeyEntry("k9w3h8r2t6ye", "L1", "TRT", "b" * 64, 2)))


def test_a_corpus_missing_one_replicate_is_blind_missing_item_naming_it() -> None:
    items = [Item(q, c, QUESTIONS[q], response(q, c, r).encode(), f"{q}{c}{r}.md", r) for q, c, r in ITEMS]
    corpus = build_corpus(items, ["FACT", "HYP"], pass_id="hidden", conditions=["A", "B", "B1"])
    assert not isinstance(corpus, list)
    kept = tuple(e for e in corpus.key.entries if e.item != ("Q2", "B1", 2))
    gone = next(e for e in corpus.key.entries if e.item == ("Q2", "B1", 2))
    problems = check_corpus(BlindKey("hidden", corpus.key.nonce, kept), corpus.files, items, ["FACT", "HYP"])
    assert sorted((p.code, p.message) for p in problems) == [
        ("blind-extra-file", f"{gone.blind_id}.md has no entry in the key"),
        ("blind-missing-item", "Q2/B1#2 has no entry in the key")]


# --------------------------------------------------------------------------- unblinding


def _seal_both_passes(s: ArmsStudy, rater: str, key: BlindKey) -> dict[CellKey, int]:
    """The rater scores the opaque sheet `sheet` wrote (scores picked by item, as only a test
    can) and the open pass with the very same scores (a sheet with a `Rep` column, through the one
    sheet writer), and seals both with `aoven-git seal`. Returns the scores by true cell."""
    res = s.run(rater, "sheet", "--rater", rater, "--pass", "hidden")
    assert res.code == 0, res.output
    item = {e.blind_id: e.item for e in key.entries}
    want: dict[CellKey, int] = {}

    def fill(m: re.Match[str]) -> str:
        q, c, r = item[m.group(1)]
        d1, d2 = (r + len(c)) % 4, (r + len(q) * (rater == "cto") + (c == "B")) % 4
        want.update({CellKey(q, c, "D1", r): d1, CellKey(q, c, "D2", r): d2})
        return f"| {m.group(1)} | {d1} | {d2} | {d1 + d2} |"

    text = re.sub(r"^\| ([a-z0-9]{12}) \|  \|  \|  \|", fill, res.out, flags=re.M)
    assert re.findall(r"^\| ([a-z0-9]{12}) \|", text, re.M) == sorted(item)
    s.write(f"study/scores_{rater}_hidden.md", text)
    plan = load_plan(s.path / "aoven.yaml")
    entries = {str(k): (str(v), "") for k, v in want.items()}
    s.write(f"study/scores_{rater}.md", render_sheet(plan, SheetId(rater, "unblinded", "main"), "long", None,
                                                     entries))
    for pass_id in ("unblinded", "hidden"):
        res = s.run(rater, "seal", "--rater", rater, "--pass", pass_id)
        assert res.code == 0, res.output
    return want


def test_unblind_maps_each_blind_cell_back_to_its_question_condition_and_replicate(
        study: ArmsStudy, tmp_path: Path) -> None:
    key_file, key = blind(study, tmp_path)
    wanted = {r: _seal_both_passes(study, r, key) for r in ("cto", "logician")}
    res = study.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file))
    assert res.code == 0, res.output
    assert study.git("show", "--name-only", "--format=", "HEAD") == KEY_JSON
    plan = load_plan(study.path / "aoven.yaml")
    assert corpus_violations(study.path, plan, study.head_commit()) == []
    files = {f"study/scores_{r}_hidden.md": (study.path / f"study/scores_{r}_hidden.md").read_bytes()
             for r in wanted}
    report = validate_sources(plan, files, root=study.path)
    assert report.ok
    for sheet in report.sheets:
        assert {c.key.condition for c in sheet.cells} == {"?"}
        assert unblind_sheet(sheet, key).scores() == wanted[sheet.sheet.rater]
        assert {c.key.item for c in unblind_sheet(sheet, key).cells} == set(ITEMS)


def test_the_report_of_an_unblinded_replicated_pass_agrees_with_the_open_pass_of_the_same_scores(
        study: ArmsStudy, tmp_path: Path) -> None:
    """Each rater gave the blind pass exactly the scores of the open pass: mapped back through the
    key, the blind pass's items and agreement must be the open pass's, dimension by dimension
    (a replicate lost or crossed in the mapping would change the pairs κ counts)."""
    key_file, key = blind(study, tmp_path)
    for r in ("cto", "logician"):
        _seal_both_passes(study, r, key)
    assert study.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file)).code == 0
    for r in ("cto", "logician"):
        for pass_id in ("unblinded", "hidden"):
            res = study.run(r, "reveal", "--rater", r, "--pass", pass_id)
            assert res.code == 0, res.output
    verified = json.loads(run_cli("verify-seal", "--format", "json", cwd=study.path).out)
    assert verified["status"] == "complete" and verified["violations"] == []
    res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=study.path)
    doc = json.loads(res.out)
    assert [(b["pass"], b["state"]) for b in doc["blind_passes"]] == [("hidden", "unblinded")]
    for d in ("D1", "D2"):
        blind_kappa, open_kappa = doc["kappa"]["hidden"][d], doc["kappa"]["unblinded"][d]
        assert blind_kappa["value"] is not None and blind_kappa["value"] == open_kappa["value"]
        assert blind_kappa["pairs"] == open_kappa["pairs"]


def test_attack_a_committed_key_swapping_two_replicates_is_blind_mismatch(
        study: ArmsStudy, tmp_path: Path) -> None:
    """The lead commits a key (past every check) in which Q1/B's two replicates trade ids: each id
    now claims the other sample, so the raters' scores would count for the wrong response."""
    _, key = blind(study, tmp_path)
    one, two = (key.by_response()[("Q1", "B", r)] for r in (1, 2))
    swapped = {one.blind_id: 2, two.blind_id: 1}
    forged = BlindKey(key.pass_id, key.nonce, tuple(
        KeyEntry(e.blind_id, e.question, e.condition, e.source_sha256, swapped.get(e.blind_id, e.replicate))
        for e in key.entries))
    study.write(KEY_JSON, forged.to_json())
    head = study.sneak("lead", "forged key", KEY_JSON)
    plan = load_plan(study.path / "aoven.yaml")
    found = sorted((v.code, v.path) for v in corpus_violations(study.path, plan, head))
    assert found == sorted([("blind-mismatch", f"{CORPUS}/{one.blind_id}.md"),
                            ("blind-mismatch", f"{CORPUS}/{two.blind_id}.md")])

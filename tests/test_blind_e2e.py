"""Full blinding end to end, in real git with the pre-commit hook installed, through the CLI.

The lead blinds a pass, two raters score and seal the opaque sheets, an early `unblind` is
refused, the key is committed, everyone reveals, and the cells map back through the key. Then the
attacks: the key committed before a seal, a key with two items swapped, a blinded file edited after
blinding, a rater sealing after the key was committed. Oracles are independent of the code under
test: plain regexes for tells, hashlib for digests, the key file the test reads itself.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from aoven_git.blind_corpus import corpus_violations, unblind_sheet
from aoven_git.blinding import BlindKey, KeyEntry, parse_key
from aoven_git.model import CellKey, SheetId
from aoven_git.plan import load_plan
from aoven_git.seals import format_seal, sha256
from aoven_git.validation import validate_sources
from tests.conftest import GitRepo, Result, copy_repo, run_cli

PLAN = """\
version: 1
study: blind-test
study_dir: study
responses: "test_{condition}/{question}.md"
stripped_responses: "test_{condition}_stripped/{question}.md"
scale: {min: 0, max: 3}
conditions:
  - {id: A, name: Baseline, role: baseline}
  - {id: B, name: Treatment, role: treatment}
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
  - {id: redteam, name: Red Team, emails: [redteam@example.org], required: false}
passes:
  - {id: unblinded, conditions: [A, B], dimensions: [D1, D2], primary: true}
  - {id: hidden, conditions: [A, B], dimensions: [D1, D2], stripped: true, blind: true}
markers: [FACT, HYP]
security: {require_signed: false, allowed_signers: null}
locked: [study_dir, responses, scale, conditions, transitions, dimensions, questions, passes, markers, rules]
"""

RESPONSES = {
    "study/test_a/q1.md": "# Q1\n\n## Response\n\nSunlight scatters off air molecules, and blue light "
                          "scatters the most.\n",
    "study/test_a/q2.md": "# Q2\n\n## Response\n\nCats probably dream; their sleep looks like ours.\n",
    "study/test_b/q1.md": "# Q1 — Condition B (Treatment)\n\n## Prompt\n\n[Aoven v0.1 | require: FACT, HYP]\n"
                          "Why is the sky blue?\n\n## Response\n\n[FACT] Sunlight scatters off air "
                          "molecules. [HYP] Blue light scatters most, which is why we see it.\n",
    "study/test_b/q2.md": "# Q2 — Condition B (Treatment)\n\n## Prompt\n\n[Aoven v0.1 | require: FACT, HYP]\n"
                          "Do cats dream?\n\n## Response\n\n[FACT] Cats have REM sleep. [HYP] They may dream "
                          "during it.\n",
}
#: what a rater must see for each item, written out by hand (question from the plan, response part,
#: markers gone)
EXPECTED_TEXT = {
    ("Q1", "A"): "## Question\n\nWhy is the sky blue?\n\n## Response\n\nSunlight scatters off air molecules, "
                 "and blue light scatters the most.\n",
    ("Q2", "A"): "## Question\n\nDo cats dream?\n\n## Response\n\nCats probably dream; their sleep looks "
                 "like ours.\n",
    ("Q1", "B"): "## Question\n\nWhy is the sky blue?\n\n## Response\n\nSunlight scatters off air molecules. "
                 "Blue light scatters most, which is why we see it.\n",
    ("Q2", "B"): "## Question\n\nDo cats dream?\n\n## Response\n\nCats have REM sleep. They may dream during "
                 "it.\n",
}
PEOPLE = {r: (r.title(), f"{r}@example.org") for r in ("cto", "logician", "redteam", "lead")}
CORPUS = "study/blind/hidden"
KEY_SEAL = "study/seals/blind_key_hidden.sha256"
KEY_JSON = f"{CORPUS}/key.json"
#: independent oracles for "shows its condition"
TELLS = [re.compile(p) for p in (r"\[\s*(?:FACT|HYP)", r"(?i)aoven", r"(?i)\bcondition\s*[ab]\b",
                                 r"(?i)\btests?[\s_-]*[ab]\b", r"(?i)test_[ab]", r"(?i)treatment|baseline")]


class BlindStudy(GitRepo):
    """A study repository with a blind pass, each command run as a named person."""

    def __init__(self, path: Path, monkeypatch: pytest.MonkeyPatch, *, init: bool = True) -> None:
        super().__init__(path, init=init)
        self.monkeypatch = monkeypatch

    def start(self, *, strip: bool = True, responses: dict[str, str] | None = None) -> None:
        self.write("aoven.yaml", PLAN)
        for rel, text in (responses or RESPONSES).items():
            self.write(rel, text)
        if strip:
            assert self.run("lead", "strip-markers").code == 0
        self.commit("plan and responses", author=PEOPLE["lead"])
        assert self.run("lead", "install-hook").code == 0

    def run(self, who: str, *args: str) -> Result:
        name, email = PEOPLE[who]
        for var, value in (("GIT_AUTHOR_NAME", name), ("GIT_AUTHOR_EMAIL", email),
                           ("GIT_COMMITTER_NAME", name), ("GIT_COMMITTER_EMAIL", email)):
            self.monkeypatch.setenv(var, value)
        return run_cli(*args, cwd=self.path)

    def sneak(self, who: str, message: str, *paths: str) -> str:
        """A commit past the hook (`--no-verify`)."""
        self.git("add", "--", *paths)
        self.git("commit", "-q", "--no-verify", "-m", message, author=PEOPLE[who])
        return self.head()

    def head(self) -> str:
        return self.head_commit()

    def state(self) -> tuple[str, str]:
        return self.head(), self.git("status", "--porcelain", "--untracked-files=all")

    # -- raters -------------------------------------------------------------------------------
    def fill_blind(self, rater: str, key: BlindKey, scores: dict[str, tuple[int, int]]) -> str:
        """The rater's blind sheet from `sheet`, filled with scores by condition (read from the
        key, as only a test can)."""
        res = self.run(rater, "sheet", "--rater", rater, "--pass", "hidden")
        assert res.code == 0, res.output
        condition = {e.blind_id: e.condition for e in key.entries}

        def fill(m: re.Match[str]) -> str:
            d1, d2 = scores[condition[m.group(1)]]
            return f"| {m.group(1)} | {d1} | {d2} | {d1 + d2} |"

        text = re.sub(r"^\| ([a-z0-9]{12}) \|  \|  \|  \|", fill, res.out, flags=re.M)
        self.write(f"study/scores_{rater}_hidden.md", text)
        return text

    def fill_unblinded(self, rater: str, scores: tuple[int, int] = (1, 1)) -> None:
        rows = "".join(f"| {q} | {c} | {scores[0]} | {scores[1]} |\n" for q in ("Q1", "Q2") for c in "AB")
        self.write(f"study/scores_{rater}.md", f"---\nrater: {rater}\n---\n\n| Q | Cond | D1 | D2 |\n"
                                               f"|---|---|---|---|\n{rows}")

    def seal_all(self, rater: str, key: BlindKey) -> None:
        self.fill_unblinded(rater)
        self.fill_blind(rater, key, {"A": (2, 1), "B": (1, 0)})
        for pass_id in ("unblinded", "hidden"):
            res = self.run(rater, "seal", "--rater", rater, "--pass", pass_id)
            assert res.code == 0, res.output

    def hand_seal(self, rater: str, pass_id: str = "hidden") -> str:
        """A seal written without `aoven-git seal` (which refuses what could only be a violation)."""
        path = f"study/scores_{rater}_{pass_id}.md" if pass_id != "unblinded" else f"study/scores_{rater}.md"
        data = (self.path / path).read_bytes()
        seal = f"study/seals/{Path(path).stem}.sha256"
        self.write(seal, format_seal(sha256(data), Path(path).name, SheetId(rater, pass_id, "main")))
        return self.sneak(rater, f"seal {rater}", seal)

    def unblind_and_reveal(self, key_file: Path, raters: tuple[str, ...] = ("cto", "logician")) -> None:
        """The lead unblinds with `key_file`, then every rater reveals both passes: how a study ends."""
        res = self.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file))
        assert res.code == 0, res.output
        for r in raters:
            for p in ("unblinded", "hidden"):
                res = self.run(r, "reveal", "--rater", r, "--pass", p)
                assert res.code == 0, res.output

    # -- checking -----------------------------------------------------------------------------
    def verify(self) -> tuple[int, list[tuple[str, str | None]], dict]:
        res = run_cli("verify-seal", "--format", "json", cwd=self.path)
        data = json.loads(res.out)
        return res.code, sorted((v["code"], v["rater"]) for v in data["violations"]), data

    def corpus_problems(self) -> list[tuple[str, str | None]]:
        plan = load_plan(self.path / "aoven.yaml")
        return sorted((v.code, v.path) for v in corpus_violations(self.path, plan, self.head()))


@pytest.fixture
def blinded(blinded_template: Path, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> tuple[BlindStudy, Path, BlindKey]:
    """A blinded study: the lead ran `blind`; the key lies outside the work tree. This test's own
    copy of `blinded_template` (repository and key), so every test starts from the same bytes."""
    copy_repo(blinded_template / "repo", tmp_path / "repo")
    copy_repo(blinded_template / "keys", tmp_path / "keys")
    s = BlindStudy(tmp_path / "repo", monkeypatch, init=False)
    key_file = tmp_path / "keys" / "hidden.json"
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    return s, key_file, key


# --------------------------------------------------------------------------- the honest study


def test_blind_commits_the_corpus_and_only_the_key_digest(
    blinded: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, key_file, key = blinded
    committed = s.git("show", "--name-only", "--format=", "HEAD").split()
    assert sorted(committed) == sorted([*(f"{CORPUS}/{e.blind_id}.md" for e in key.entries), KEY_SEAL])
    assert s.git("status", "--porcelain", "--untracked-files=all") == ""
    assert "Aoven-Blind: hidden" in s.git("log", "-1", "--format=%B")
    digest = hashlib.sha256(key_file.read_bytes()).hexdigest()
    assert s.git("show", f"HEAD:{KEY_SEAL}").splitlines()[:3] == [
        f"{digest}  key.json", "# aoven-git blind key v1", "# pass: hidden"]
    # every item once, with the text a rater must see, and the source's digest in the key
    texts = {e.blind_id: s.git("show", f"HEAD:{CORPUS}/{e.blind_id}.md") + "\n" for e in key.entries}
    assert {(e.question, e.condition): texts[e.blind_id] for e in key.entries} == EXPECTED_TEXT
    for e in key.entries:
        source = "test_b_stripped" if e.condition == "B" else "test_a"
        data = (s.path / "study" / source / f"{e.question.lower()}.md").read_bytes()
        assert e.source_sha256 == hashlib.sha256(data).hexdigest()
    # the committed corpus holds no condition tell, in its texts or its names
    for name, text in texts.items():
        assert not [rx.pattern for rx in TELLS if rx.search(text) or rx.search(name)], (name, text)


def test_two_raters_seal_opaque_sheets_unblind_and_map_back(
    blinded: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, key_file, key = blinded
    ids = sorted(e.blind_id for e in key.entries)
    s.seal_all("cto", key)
    sheet = (s.path / "study" / "scores_cto_hidden.md").read_text(encoding="utf-8")
    assert re.findall(r"^\| ([a-z0-9]{12}) \|", sheet, re.M) == ids
    assert "| Item | D1 | D2 | Σ | Notes |" in sheet

    before = s.state()
    res = s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file))
    assert res.code == 1 and "missing: logician" in res.err
    assert s.state() == before and not (s.path / KEY_JSON).exists()

    s.seal_all("logician", key)
    res = s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file))
    assert res.code == 0, res.output
    assert s.git("show", "--name-only", "--format=", "HEAD") == KEY_JSON
    assert s.git("show", f"HEAD:{KEY_JSON}").encode() + b"\n" == key_file.read_bytes()
    for rater in ("cto", "logician"):
        for pass_id in ("unblinded", "hidden"):
            res = s.run(rater, "reveal", "--rater", rater, "--pass", pass_id)
            assert res.code == 0, res.output
    code, found, data = s.verify()
    assert code == 0 and found == [] and data["status"] == "complete"
    assert s.corpus_problems() == []

    # the lead's report maps the cells back through the key: here, with `unblind_sheet`
    plan = load_plan(s.path / "aoven.yaml")
    files = {f"study/scores_{r}_hidden.md": (s.path / f"study/scores_{r}_hidden.md").read_bytes()
             for r in ("cto", "logician")}
    report = validate_sources(plan, files, root=s.path)
    assert report.ok
    for sheet in report.sheets:
        assert {c.key.condition for c in sheet.cells} == {"?"}
        back = unblind_sheet(sheet, key).scores()
        assert back == {CellKey(q, c, d): {"A": (2, 1), "B": (1, 0)}[c][int(d[1]) - 1]
                        for q in ("Q1", "Q2") for c in "AB" for d in ("D1", "D2")}


# --------------------------------------------------------------------------- attacks


def test_the_key_committed_before_a_seal_is_refused_by_the_hook_and_caught(
    blinded: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, key_file, key = blinded
    s.seal_all("cto", key)
    s.write(KEY_JSON, key_file.read_bytes())
    s.git("add", KEY_JSON)
    proc = subprocess.run(["git", "commit", "-q", "-m", "key"], cwd=s.path, capture_output=True, text=True,
                          check=False)
    assert proc.returncode != 0 and "logician" in proc.stderr
    early = s.sneak("lead", "key, past the hook", KEY_JSON)
    # logician now could read every condition: `seal` refuses, so the seal is written by hand
    s.fill_unblinded("logician")
    s.fill_blind("logician", key, {"A": (2, 1), "B": (1, 0)})
    res = s.run("logician", "seal", "--rater", "logician", "--pass", "hidden")
    assert res.code == 1 and "key of a blind pass is already committed" in res.err
    late = s.hand_seal("logician", "hidden")
    code, found, data = s.verify()
    assert code == 1 and ("visible-at-seal", "logician") in found
    assert {v["commit"] for v in data["violations"] if v["code"] == "visible-at-seal"} == {late}
    seen = next(v for v in data["violations"] if v["code"] == "visible-at-seal")
    assert KEY_JSON in seen["message"] and early[:10] in seen["message"]  # the key is what was readable


def test_a_key_with_two_items_swapped_is_refused_and_caught(
    blinded: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, key_file, key = blinded
    s.seal_all("cto", key)
    s.seal_all("logician", key)
    a = next(e for e in key.entries if e.condition == "A")
    b = next(e for e in key.entries if e.condition == "B" and e.question == a.question)
    swapped = BlindKey(key.pass_id, key.nonce, tuple(
        KeyEntry(e.blind_id, e.question, {"A": "B", "B": "A"}[e.condition] if e in (a, b) else e.condition,
                 e.source_sha256) for e in key.entries))
    forged = key_file.parent / "forged.json"
    forged.write_bytes(swapped.to_json())
    before = s.state()
    res = s.run("lead", "unblind", "--pass", "hidden", "--key", str(forged))
    assert res.code == 1 and "differs from the digest committed in" in res.err
    assert s.state() == before
    s.write(KEY_JSON, swapped.to_json())
    commit = s.sneak("lead", "forged key", KEY_JSON)
    code, found, data = s.verify()
    assert code == 1 and ("digest-mismatch", None) in found
    assert any(v["commit"] == commit for v in data["violations"] if v["code"] == "digest-mismatch")
    assert s.corpus_problems() == sorted(
        [("blind-mismatch", f"{CORPUS}/{a.blind_id}.md"), ("blind-mismatch", f"{CORPUS}/{b.blind_id}.md")])


def test_blinded_files_changed_after_blinding_are_caught(blinded: tuple[BlindStudy, Path, BlindKey]) -> None:
    s, key_file, key = blinded
    s.seal_all("cto", key)
    s.seal_all("logician", key)
    assert s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file)).code == 0
    assert s.corpus_problems() == []
    edited, removed = sorted(e.blind_id for e in key.entries)[:2]
    path = s.path / CORPUS / f"{edited}.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nA line the lead added.\n", encoding="utf-8")
    (s.path / CORPUS / f"{removed}.md").unlink()
    s.write(f"{CORPUS}/zz0000000000.md", "## Question\n\nDo cats dream?\n")
    s.sneak("lead", "touch the corpus", CORPUS)
    assert s.corpus_problems() == [
        ("blind-extra-file", f"{CORPUS}/zz0000000000.md"),
        ("blind-mismatch", f"{CORPUS}/{edited}.md"),
        ("blind-missing-file", f"{CORPUS}/{removed}.md"),
    ]


def test_a_rater_sealing_after_the_key_was_committed_is_caught(
    blinded: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, key_file, key = blinded
    s.seal_all("cto", key)
    s.seal_all("logician", key)
    assert s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file)).code == 0
    # the optional red team comes late: the key is public, so its blind scores prove nothing
    s.fill_unblinded("redteam")
    s.fill_blind("redteam", key, {"A": (2, 1), "B": (1, 0)})
    for pass_id in ("hidden", "unblinded"):
        res = s.run("redteam", "seal", "--rater", "redteam", "--pass", pass_id)
        assert res.code == 1 and "key of a blind pass is already committed" in res.err
    late = s.hand_seal("redteam", "hidden")
    code, found, data = s.verify()
    # the red team is optional: its sheets are excluded, the verdict is not blocked (exit 0)
    assert code == 0 and found == [("visible-at-seal", "redteam")]
    assert data["excluded_raters"] == [{"rater": "redteam", "codes": ["visible-at-seal"]}]
    assert data["violations"][0]["commit"] == late


def test_corpus_violations_with_an_unreadable_key_or_a_lost_source(
    blinded: tuple[BlindStudy, Path, BlindKey]
) -> None:
    s, key_file, key = blinded
    assert s.corpus_problems() == []  # no key committed yet: nothing to compare
    s.seal_all("cto", key)
    s.seal_all("logician", key)
    assert s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file)).code == 0
    gone = next(e for e in key.entries if e.condition == "B")
    s.git("rm", "-q", f"study/test_b_stripped/{gone.question.lower()}.md")
    s.sneak("lead", "lose a stripped copy", "study")
    problems = corpus_violations(s.path, load_plan(s.path / "aoven.yaml"), s.head())
    assert [(v.code, v.path, v.rater, v.commit) for v in problems] == [
        ("blind-mismatch", f"{CORPUS}/{gone.blind_id}.md", None, s.head())]
    assert f"study/test_b_stripped/{gone.question.lower()}.md" in problems[0].message
    s.write(KEY_JSON, key_file.read_bytes().replace(b'"format"', b'"formats"'))
    s.sneak("lead", "break the key", KEY_JSON)
    assert s.corpus_problems() == [("blind-key-invalid", KEY_JSON)]

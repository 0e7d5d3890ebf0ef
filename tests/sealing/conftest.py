"""History-building helpers for the sealing tests: a small plan and a repository whose commits
are made by named raters, so each test reads as the story of one study."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.conftest import GitRepo, Result, run_cli

PLAN = """\
version: 1
study: sealing-test
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
  - {id: Q1, text: "First?", expects: [1]}
  - {id: Q2, text: "Second?", expects: [1]}
raters:
  - {id: cto, name: CTO, emails: [cto@example.org]}
  - {id: logician, name: Logician, emails: [logician@example.org]}
  - {id: redteam, name: Red Team, emails: [redteam@example.org], required: false}
passes:
  - {id: unblinded, conditions: [A, B], dimensions: [D1, D2], primary: true}
markers: [FACT, HYP]
security: {require_signed: false, allowed_signers: null}
locked: [study_dir, responses, scale, conditions, transitions, dimensions, questions, passes, markers, rules]
"""

#: the items of PLAN's block lists that tests rebuild with `plan(raters=[...], passes=[...])`
CTO = "{id: cto, name: CTO, emails: [cto@example.org]}"
LOGICIAN = "{id: logician, name: Logician, emails: [logician@example.org]}"
REDTEAM = "{id: redteam, name: Red Team, emails: [redteam@example.org], required: false}"
UNBLINDED_PASS = "{id: unblinded, conditions: [A, B], dimensions: [D1, D2], primary: true}"


def plan(**overrides: str | list[str] | None) -> str:
    """PLAN with top-level keys replaced, so a test names only what it changes: a string is the
    key's new value as written after `key: ` (`plan(scale="{min: 0, max: 4}")`), a list the items
    of a block list (`plan(passes=[UNBLINDED_PASS, "{id: second, ...}"])`), None removes the key.
    Keys keep PLAN's order; a key PLAN lacks is appended."""
    sections: dict[str, str] = {}
    key = ""
    for line in PLAN.splitlines(keepends=True):
        if line[:1] not in (" ", "\t"):
            key = line.split(":", 1)[0]
            sections[key] = ""
        sections[key] += line
    for key, value in overrides.items():
        if value is None:
            assert key in sections, f"PLAN has no {key!r} to remove"
            del sections[key]
        elif isinstance(value, str):
            sections[key] = f"{key}: {value}\n"
        else:
            sections[key] = f"{key}:\n" + "".join(f"  - {item}\n" for item in value)
    return "".join(sections.values())


LEAD = ("Lead", "lead@example.org")
PEOPLE = {
    "cto": ("CTO", "cto@example.org"),
    "logician": ("Logician", "logician@example.org"),
    "redteam": ("Red Team", "redteam@example.org"),
    "lead": LEAD,
}


def score_text(rater: str, scores: tuple[int, int] = (1, 2), *, nonce: str | None = None,
               pass_id: str = "unblinded") -> str:
    """A valid wide score file of the test plan (every cell scored)."""
    fm = f"---\nrater: {rater}\npass: {pass_id}\nround: main\n"
    fm += (f"nonce: {nonce}\n" if nonce else "") + "---\n"
    conds = ("A", "B") if pass_id == "unblinded" else ("B",)
    rows = "".join(f"| {q} | {c} | {scores[0]} | {scores[1]} | {sum(scores)} |\n"
                   for q in ("Q1", "Q2") for c in conds)
    return f"{fm}\n# Scores of {rater}\n\n| Q | Cond | D1 | D2 | Σ |\n|---|---|---|---|---|\n{rows}"


class Study(GitRepo):
    """A study repository: `aoven.yaml` at the root, score files under `study/`."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.sealed: dict[str, str] = {}  # rater -> score text whose digest was committed

    # -- building blocks -------------------------------------------------------------------
    def by(self, who: str, message: str, *paths: str) -> str:
        return self.commit(message, *paths, author=PEOPLE[who])

    def start(self, plan: str = PLAN) -> str:
        self.write("aoven.yaml", plan)
        for q in ("q1", "q2"):
            for c in ("a", "b"):
                self.write(f"study/test_{c}/{q}.md", f"# {q.upper()}\n\nResponse {c.upper()}.\n")
        return self.by("lead", "plan", "aoven.yaml", "study")

    def content_seal(self, rater: str, scores: tuple[int, int] = (1, 2), *, who: str | None = None,
                     pass_id: str = "unblinded") -> str:
        path = self.score_path(rater, pass_id)
        self.write(path, score_text(rater, scores, pass_id=pass_id))
        return self.by(who or rater, f"scores of {rater}", path)

    def digest_seal(self, rater: str, scores: tuple[int, int] = (1, 2), *, who: str | None = None) -> str:
        text = score_text(rater, scores, nonce=f"nonce-{rater}")
        self.sealed[rater] = text
        sheet = SheetId(rater, "unblinded", "main")
        seal = format_seal(sha256(text.encode()), f"scores_{rater}.md", sheet)
        self.write(self.seal_path(rater), seal)
        return self.by(who or rater, f"seal {rater}", self.seal_path(rater))

    def reveal(self, rater: str, *, text: str | None = None, who: str | None = None,
               message: str = "") -> str:
        path = self.score_path(rater)
        self.write(path, text if text is not None else self.sealed[rater])
        return self.by(who or rater, message or f"reveal {rater}", path)

    @staticmethod
    def score_path(rater: str, pass_id: str = "unblinded") -> str:
        return f"study/scores_{rater}.md" if pass_id == "unblinded" else f"study/scores_{rater}_{pass_id}.md"

    @staticmethod
    def seal_path(rater: str) -> str:
        return f"study/seals/scores_{rater}.sha256"

    def branch(self, name: str, start: str | None = None) -> None:
        self.git("checkout", "-q", "-b", name, *([start] if start else []))

    def checkout(self, name: str) -> None:
        self.git("checkout", "-q", name)

    def merge(self, branch: str, who: str = "lead") -> str:
        name, email = PEOPLE[who]
        self.git("merge", "-q", "--no-ff", "--no-edit", branch, author=(name, email))
        return self.head_commit()

    # -- checking --------------------------------------------------------------------------
    def verify(self, *args: str) -> tuple[Result, dict]:
        res = run_cli("verify-seal", "--format", "json", *args, cwd=self.path)
        try:
            data = json.loads(res.out)
        except json.JSONDecodeError:
            data = {}
        return res, data


def codes(data: dict) -> list[tuple[str, str | None]]:
    """(code, rater) of every violation, sorted: what a test asserts exactly."""
    return sorted((v["code"], v["rater"]) for v in data.get("violations", []))


@pytest.fixture
def study(tmp_path: Path) -> Study:
    return Study(tmp_path / "study-repo")

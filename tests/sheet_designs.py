"""Studies of the designs beyond one A/B (docs/score-files.md, "Replicates" and "Labels"), built
as real git repositories for the tests of score sheets and reconciliation files.

`PROBES`: two probes × two conditions × two sampled responses, each labelled PASS or FAIL (the
real team's probe study, shortened). `REPLICATES`: an ordinal 0–3 scale, two questions × two
conditions × three responses, two dimensions. `VERDICTS`: a nominal scale of three labels and
no replicates. Every response file holds a sentence naming its own (question, condition,
replicate), so a quote tells which response it came from.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import GitRepo

_COMMON = """\
version: 1
study: {study}
study_dir: study
transitions:
  - {{id: 1, name: "X"}}
load_dimensions: []
holdout: []
rounds:
  - {{id: main, questions: main}}
raters:
  - {{id: ann, name: Ann, emails: [ann@example.org]}}
  - {{id: bob, name: Bob, emails: [bob@example.org]}}
markers: []
refinements: []
retest_cap: 1
claims: {{}}
security: {{require_signed: false, allowed_signers: null}}
locked: [study_dir, responses, scale, conditions]
"""

PROBES = _COMMON.format(study="probes") + """\
responses: "test_{condition}/{question}_{replicate}.md"
stripped_responses: "test_{condition}_stripped/{question}_{replicate}.md"
scale: {labels: [PASS, FAIL]}
replicates: 2
conditions:
  - {id: CTRL, name: Control, role: baseline}
  - {id: TRT, name: Treatment}
dimensions:
  - {id: V, name: Verdict, kind: quality}
questions:
  - {id: L1, text: "probe one"}
  - {id: L2, text: "probe two"}
passes:
  - {id: probe, conditions: [CTRL, TRT], dimensions: [V], primary: true}
rules:
  kappa: {weights: none, threshold: 0.6, aggregate: min, undefined: exclude}
"""

REPLICATES = _COMMON.format(study="replicates") + """\
responses: "test_{condition}/{question}_{replicate}.md"
stripped_responses: "test_{condition}_stripped/{question}_{replicate}.md"
scale: {min: 0, max: 3}
replicates: 3
conditions:
  - {id: A, name: Baseline, role: baseline}
  - {id: B, name: Treated}
dimensions:
  - {id: D1, name: Clarity, kind: quality}
  - {id: D2, name: Load, kind: quality}
questions:
  - {id: Q1, text: "one"}
  - {id: Q2, text: "two"}
passes:
  - {id: open, conditions: [A, B], dimensions: [D1, D2], primary: true}
"""

VERDICTS = _COMMON.format(study="verdicts") + """\
responses: "test_{condition}/{question}.md"
stripped_responses: "test_{condition}_stripped/{question}.md"
scale: {labels: [PASS, FAIL, UNSURE]}
conditions:
  - {id: A, name: Baseline, role: baseline}
  - {id: B, name: Treated}
dimensions:
  - {id: V, name: Verdict, kind: quality}
  - {id: W, name: Wording, kind: quality}
questions:
  - {id: Q1, text: "one"}
  - {id: Q2, text: "two"}
passes:
  - {id: open, conditions: [A, B], dimensions: [V, W], primary: true}
rules:
  kappa: {weights: none, threshold: 0.6, aggregate: min, undefined: exclude}
"""


def response_text(question: str, condition: str, replicate: int) -> str:
    """The sentence a response file holds: it names its own item, so quotes are traceable."""
    rep = f" sample {replicate}" if replicate else ""
    return f"# {question}\n\nThe answer of {condition.lower()} to {question.lower()}{rep} is here.\n"


def study(root: Path, plan_text: str) -> GitRepo:
    """A git repository holding the plan (`aoven.yaml`) and every response, committed."""
    from aoven_git.plan import parse_plan

    repo = GitRepo(root)
    repo.write("aoven.yaml", plan_text)
    plan = parse_plan(plan_text.encode())
    for q in plan.questions:
        for c in plan.conditions:
            for r in plan.replicate_ids:
                path = f"study/{plan.response_path(c.id, q.id, replicate=r)}"
                repo.write(path, response_text(q.id, c.id, r))
    repo.commit("plan and responses", author=("Lead", "lead@example.org"))
    return repo


def fill_wide(text: str, score: str | int) -> str:
    """Every empty dimension cell of a blank wide sheet (written by `sheet`) set to `score`;
    the Σ cell, when there is one, to the row's sum."""
    lines = text.splitlines(keepends=True)
    header = next(line for line in lines if line.startswith("| Q |"))
    names = [c.strip() for c in header.strip().strip("|").split("|")]
    out = []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| ") or line is header or len(cells) != len(names):
            out.append(line)
            continue
        dims = [i for i, n in enumerate(names) if n not in ("Q", "Cond", "Rep", "Σ", "Notes")]
        for i in dims:
            cells[i] = str(score)
        if "Σ" in names:
            cells[names.index("Σ")] = str(int(score) * len(dims))
        out.append("| " + " | ".join(cells) + " |\n")
    return "".join(out)


def fill_long(text: str, score: str | int) -> str:
    """Every row of a blank long sheet given `score` (the Score column is the one after
    Dimension)."""
    lines = text.splitlines(keepends=True)
    header = next(line for line in lines if line.startswith("| Question |"))
    names = [c.strip() for c in header.strip().strip("|").split("|")]
    at = names.index("Score")
    out = []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and line is not header and len(cells) == len(names):
            cells[at] = str(score)
            line = "| " + " | ".join(cells) + " |\n"
        out.append(line)
    return "".join(out)


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line holding `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)

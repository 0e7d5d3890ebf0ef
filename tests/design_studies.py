"""Designs for the engine's tests (docs/statistics.md, "Criteria", "Decisions"): the issue's
four-arm comparison and its labelled probe study as real plans (parsed by plan.py from YAML), and
score grids turned into sheets, so the pure layers and `analysis.analyse` are tested on what a
team would write.

The four-arm plan: A (baseline), B (long form), B1 and B2 (two compressed variants of B), one
primary pass over all four on D1–D8, `rules.pass.treatment: B`; criteria "B1/B2 within ±0.5 of B on
D1–D6", "B1/B2 lighter than B on D7+D8", "B1/B2 pass the seed rule against A"; decision rows "both
→ adopt P1+P2+P3", "B1 → adopt P1+P2", otherwise "defer R1".

The probe plan: labels PASS/FAIL, CTRL (baseline) and TRT, six probes L1–L6, three replicates, one
dimension V; criterion "TRT's PASS rate strictly higher on L1 and L2" and "on at least 3 of L1–L5".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from aoven_git.model import Cell, CellKey, Plan, ScoreSheet, SheetId
from aoven_git.plan import parse_plan

TEMPLATE = Path(__file__).resolve().parent.parent / "aoven_git" / "templates" / "aoven.yaml"
QS = tuple(f"Q{i}" for i in range(1, 11))
DIMS = tuple(f"D{i}" for i in range(1, 9))
ARMS = ("A", "B", "B1", "B2")
PROBES = tuple(f"L{i}" for i in range(1, 7))

FOUR_ARM_CRITERIA = """
criteria:
  - {id: B1-same, kind: delta, of: [B1, B], dimensions: [D1, D2, D3, D4, D5, D6], per: dimension, within: 0.5}
  - {id: B1-lighter, kind: delta, of: [B1, B], dimensions: [D7, D8], per: sum, below: 0}
  - {id: B1-seed, kind: seed, treatment: B1}
  - {id: B2-same, kind: delta, of: [B2, B], dimensions: [D1, D2, D3, D4, D5, D6], per: dimension, within: 0.5}
  - {id: B2-lighter, kind: delta, of: [B2, B], dimensions: [D7, D8], per: sum, below: 0}
  - {id: B2-seed, kind: seed, treatment: B2}
decisions:
  - {if: [B1-same, B1-lighter, B1-seed, B2-same, B2-lighter, B2-seed], then: "adopt P1+P2+P3"}
  - {if: [B1-same, B1-lighter, B1-seed], then: "adopt P1+P2"}
  - {otherwise: "defer R1"}
"""


def four_arm_text(criteria: str = FOUR_ARM_CRITERIA) -> str:
    """The template plan with four conditions, one primary pass over all of them, and `criteria`
    (YAML appended at the end; empty for a four-arm plan without a decision table)."""
    text = TEMPLATE.read_text(encoding="utf-8")
    text = text.replace(
        "  - {id: B, name: Aoven-framed, role: treatment}",
        '  - {id: B, name: Long form, role: treatment}\n  - {id: B1, name: "B1 (P1+P2)"}\n'
        '  - {id: B2, name: "B2 (P1+P2+P3)"}',
    )
    text = text.replace(
        "  - {id: unblinded, conditions: [A, B], dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], "
        "stripped: false, primary: true}\n"
        "  - {id: blinded, conditions: [B], dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], stripped: true}",
        "  - {id: unblinded, conditions: [A, B, B1, B2], dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], "
        "primary: true}",
    )
    text = text.replace("  pass: {improvement: 0.20,", "  pass: {treatment: B, improvement: 0.20,")
    return text + criteria


def four_arm(criteria: str = FOUR_ARM_CRITERIA) -> Plan:
    return parse_plan(four_arm_text(criteria).encode())


PROBE_PLAN = """
version: 1
study: probes-v0.1
study_dir: study
responses: "{condition}/{question}_{replicate}.md"
stripped_responses: "{condition}_stripped/{question}_{replicate}.md"
scale: {labels: [PASS, FAIL]}
replicates: 3
conditions:
  - {id: CTRL, name: Control, role: baseline}
  - {id: TRT, name: Treatment}
dimensions:
  - {id: V, name: Verdict, kind: quality}
questions:
  - {id: L1, text: "probe 1"}
  - {id: L2, text: "probe 2"}
  - {id: L3, text: "probe 3"}
  - {id: L4, text: "probe 4"}
  - {id: L5, text: "probe 5"}
  - {id: L6, text: "probe 6"}
rounds:
  - {id: main, questions: main}
raters:
  - {id: ann, name: Ann}
  - {id: bob, name: Bob}
passes:
  - {id: labels, conditions: [CTRL, TRT], dimensions: [V], primary: true}
rules:
  kappa: {weights: quadratic, threshold: 0.6}
criteria:
  - {id: L-first, kind: rate, label: PASS, of: [TRT, CTRL], questions: [L1, L2], above: 0}
  - {id: L-moved, kind: rate, label: PASS, of: [TRT, CTRL], questions: [L1, L2, L3, L4, L5], above: 0,
     require: 3}
decisions:
  - {if: [L-first, L-moved], then: "ship the treatment"}
  - {otherwise: "keep the control"}
"""


def probes(text: str = PROBE_PLAN) -> Plan:
    return parse_plan(text.encode())


def arm_grid(changes: Mapping[tuple[str, str, str], int] | None = None, *, base: int = 2,
             arms: Iterable[str] = ARMS, questions: Iterable[str] = QS) -> dict[CellKey, int]:
    """Every four-arm cell at `base`, then the (question, condition, dimension) overrides."""
    out = {CellKey(q, c, d): base for q in questions for c in arms for d in DIMS}
    for (q, c, d), v in (changes or {}).items():
        out[CellKey(q, c, d)] = v
    return out


def lowered(arm: str, dims: Iterable[str], to: int,
            questions: Iterable[str] = QS) -> dict[tuple[str, str, str], int]:
    return {(q, arm, d): to for q in questions for d in dims}


def probe_grid(passes: Mapping[tuple[str, str], int], *, label: str = "FAIL") -> dict[CellKey, int]:
    """Every probe cell labelled `label` (position in the scale), except that (probe, condition)
    gets its first N replicates labelled PASS, N from `passes`."""
    plan = probes()
    fail, ok = plan.scale.value_of(label), plan.scale.value_of("PASS")
    assert fail is not None and ok is not None
    out = {}
    for q in PROBES:
        for c in ("CTRL", "TRT"):
            n = passes.get((q, c), 0)
            for r in (1, 2, 3):
                out[CellKey(q, c, "V", r)] = ok if r <= n else fail
    return out


def sheets(plan: Plan, by_rater: Mapping[str, Mapping[CellKey, int]], pass_id: str | None = None,
           round_id: str = "main") -> list[ScoreSheet]:
    """One parsed sheet per rater (no findings), lines numbered in key order."""
    pass_id = pass_id or plan.primary_pass.id
    out = []
    for rater, cells in by_rater.items():
        ordered = sorted(cells.items())
        out.append(ScoreSheet(f"study/scores_{rater}.md", SheetId(rater, pass_id, round_id), "long",
                              tuple(Cell(k, v, i + 10) for i, (k, v) in enumerate(ordered))))
    return out


def example_documents() -> dict[str, dict[str, Any]]:
    """Complete report documents of both designs for renderers and their tests (JSON as
    `report --format json` writes it, bootstrap 0): "four-arm" decides row 2 (B2 is not lighter
    than B, B1 is: "adopt P1+P2", verdict PASS) with a contested cell robust on B1-same; "probes"
    decides row 1 on label rates over three replicates ("ship the treatment")."""
    from aoven_git.analysis import analyse

    epistemic = DIMS[:6]
    four = arm_grid({**lowered("B", epistemic, 1), **lowered("B1", epistemic, 1),
                     **lowered("B2", epistemic, 1), **lowered("B1", ("D7", "D8"), 1)})
    four = {k: (v + 1 if k.condition == "A" and k.question in QS[:5] else v) for k, v in four.items()}
    plan = four_arm()
    arms = analyse(plan, sheets=sheets(plan, {"cto": four, "logician": four}), bootstrap=0).as_dict()
    plan = probes()
    grid = probe_grid({("L1", "TRT"): 3, ("L2", "TRT"): 2, ("L3", "TRT"): 2, ("L5", "TRT"): 1,
                       ("L1", "CTRL"): 1, ("L2", "CTRL"): 1, ("L3", "CTRL"): 2, ("L4", "CTRL"): 1})
    labels = analyse(plan, sheets=sheets(plan, {"ann": grid, "bob": grid}), bootstrap=0).as_dict()
    return {"four-arm": arms, "probes": labels}

"""rules.kappa.coefficient: the pre-registered coefficient that gates a dimension (docs/plan.md,
docs/statistics.md "When κ misleads"), and the coefficients and κ paradox flag in the report.

The shape of the real team's D8: both raters score 0 almost everywhere and disagree on two of 20
items — 90 % raw agreement, κ = −1/19. Cohen's κ drops the dimension; a plan that pre-registered
Gwet's AC2 counts it, because AC2 (0.988) clears the same threshold.
"""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from aoven_git.analysis import analyse
from aoven_git.model import CellKey, Plan
from aoven_git.plan import load_plan
from tests.conftest import EXAMPLE, GitRepo, run_cli
from tests.report_documents import check_report, checked_report
from tests.test_analysis import COMPLETE, DEFAULT_PLAN, sheet, truth

KAPPA_LINE = "kappa: {weights: quadratic, threshold: 0.6, aggregate: min, undefined: exclude}"


def plan_with(tmp_path: Path, coefficient: str | None) -> Plan:
    text = DEFAULT_PLAN.read_text("utf-8")
    assert KAPPA_LINE in text
    if coefficient is not None:
        text = text.replace(KAPPA_LINE, KAPPA_LINE[:-1] + f", coefficient: {coefficient}}}")
    path = tmp_path / "aoven.yaml"
    path.write_text(text, "utf-8")
    return load_plan(path)


def d8_paradox_scores() -> dict[str, dict[CellKey, int]]:
    """truth() for both raters, except D8: 0 everywhere, and (Q1, A) and (Q2, A) split 1/0, 0/1."""
    out = {}
    for rater, (q1, q2) in (("cto", (1, 0)), ("logician", (0, 1))):
        scores = {k: (0 if k.dimension == "D8" else v) for k, v in truth().items()}
        scores[CellKey("Q1", "A", "D8")], scores[CellKey("Q2", "A", "D8")] = q1, q2
        out[rater] = scores
    return out


def report(plan: Plan) -> dict:
    ub = d8_paradox_scores()
    sheets = [sheet(r, "unblinded", s) for r, s in ub.items()]
    sheets += [sheet(r, "blinded", truth(conds=("B",))) for r in ub]
    doc = dict(check_report(analyse(plan, sheets=sheets, seals=COMPLETE, bootstrap=0).as_dict()))
    json.dumps(doc, allow_nan=False)
    return doc


def test_gwet_gate_counts_a_dimension_whose_kappa_is_paradoxically_low(tmp_path: Path) -> None:
    cohen, gwet = report(plan_with(tmp_path, None)), report(plan_with(tmp_path, "gwet"))
    d8_cohen, d8_gwet = cohen["kappa"]["unblinded"]["D8"], gwet["kappa"]["unblinded"]["D8"]
    assert d8_cohen["value_exact"] == d8_gwet["value_exact"] == "-1/19"
    agreement = d8_cohen["coefficients"]["percent_agreement"]
    assert Fraction(agreement["value_exact"]) == 1 - Fraction(2, 9 * 20)  # two one-step misses
    assert "D8" not in cohen["counted_dimensions"] and "D8" in gwet["counted_dimensions"]
    assert cohen["excluded_dimensions"]["D8"].startswith("kappa -0.0526 below 0.6")
    assert d8_cohen["counts"] is False and d8_gwet["counts"] is True
    assert d8_gwet["gate"]["coefficient"] == "gwet"
    assert Fraction(d8_gwet["gate"]["value_exact"]) >= Fraction(3, 5)
    pair = d8_gwet["pair_coefficients"]["cto~logician"]
    assert d8_gwet["gate"]["value_exact"] == pair["gwet"]["value_exact"]
    for d in (d8_cohen, d8_gwet):
        assert d["paradox"]["flagged"] is True
        assert "κ is -0.0526 below 0.6 while weighted agreement is 98.89%" in d["paradox"]["reason"]
    # the other dimensions agree perfectly and count either way; nothing else changed
    assert cohen["counted_dimensions"] == [f"D{i}" for i in range(1, 8)]
    assert gwet["counted_dimensions"] == [f"D{i}" for i in range(1, 9)]
    assert gwet["deviations"][0]["path"] == "rules.kappa.coefficient"


def test_brennan_prediger_and_krippendorff_gates(tmp_path: Path) -> None:
    bp = report(plan_with(tmp_path, "brennan-prediger"))
    alpha = report(plan_with(tmp_path, "krippendorff"))
    assert "D8" in bp["counted_dimensions"]
    assert bp["kappa"]["unblinded"]["D8"]["gate"]["value_exact"] == \
        bp["kappa"]["unblinded"]["D8"]["pair_coefficients"]["cto~logician"]["brennan_prediger"]["value_exact"]
    assert "D8" not in alpha["counted_dimensions"]
    assert alpha["excluded_dimensions"]["D8"].startswith("alpha -")
    assert alpha["kappa"]["unblinded"]["D8"]["gate"]["value"] == alpha["kappa"]["unblinded"]["D8"]["alpha"]


def test_gate_sits_exactly_on_the_threshold(tmp_path: Path) -> None:
    """AC2 equal to the threshold counts; the float route is never taken."""
    plan = plan_with(tmp_path, "gwet")
    doc = report(plan)
    value = Fraction(doc["kappa"]["unblinded"]["D8"]["gate"]["value_exact"])
    on = tmp_path / "on"
    on.mkdir()
    text = (tmp_path / "aoven.yaml").read_text("utf-8").replace("threshold: 0.6", f'threshold: "{value}"')
    (on / "aoven.yaml").write_text(text, "utf-8")
    assert "D8" in report(load_plan(on / "aoven.yaml"))["counted_dimensions"]
    above = text.replace(f'threshold: "{value}"', f'threshold: "{value + Fraction(1, 10**30)}"')
    (on / "aoven.yaml").write_text(above, "utf-8")
    assert "D8" not in report(load_plan(on / "aoven.yaml"))["counted_dimensions"]


def test_unknown_coefficient_is_a_plan_error_naming_the_line(tmp_path: Path) -> None:
    text = DEFAULT_PLAN.read_text("utf-8").replace(KAPPA_LINE, KAPPA_LINE[:-1] + ", coefficient: fleiss}")
    (tmp_path / "aoven.yaml").write_text(text, "utf-8")
    before = sorted(p.name for p in tmp_path.iterdir())
    res = run_cli("check-plan", cwd=tmp_path)
    assert res.code == 2
    line = text.splitlines().index(next(ln for ln in text.splitlines() if "coefficient: fleiss" in ln)) + 1
    assert f"aoven.yaml:{line}: rules/kappa/coefficient: 'fleiss' is not one of" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# --------------------------------------------------------------------------- through the CLI


class Study(GitRepo):
    def act_as(self, who: tuple[str, str]) -> None:
        self.git("config", "user.name", who[0])
        self.git("config", "user.email", who[1])

    def cli(self, *args: str) -> None:
        res = run_cli(*args, cwd=self.path)
        assert res.code == 0, (args, res.output)


def sealed_example(root: Path, coefficient: str) -> Study:
    """The bundled example with the plan gating on ``coefficient``, every sheet sealed and revealed
    by its rater through the real CLI, the reconciliation committed by its raters."""
    repo = Study(root)
    plan_text = (EXAMPLE / "aoven.yaml").read_text("utf-8")
    assert "aggregate: min, undefined: exclude}" in plan_text
    gated = plan_text.replace("undefined: exclude}", f"undefined: exclude, coefficient: {coefficient}}}")
    repo.write("aoven.yaml", gated)
    for folder in ("test_a", "test_b", "test_b_stripped"):
        shutil.copytree(EXAMPLE / folder, root / "tests/phase2" / folder)
    repo.act_as(("Study Lead", "lead@example.org"))
    repo.commit("Pre-register the plan; add the responses")
    raters = load_plan(root / "aoven.yaml").raters
    for pass_id, suffix in (("unblinded", ""), ("blinded", "_blinded")):
        for rater in raters:
            name = f"scores_{rater.id}{suffix}.md"
            shutil.copy(EXAMPLE / name, root / "tests/phase2" / name)
            repo.act_as((rater.name, rater.emails[0]))
            repo.cli("seal", "--rater", rater.id, "--pass", pass_id)
    for pass_id in ("unblinded", "blinded"):
        for rater in raters:
            repo.act_as((rater.name, rater.emails[0]))
            repo.cli("reveal", "--rater", rater.id, "--pass", pass_id)
    lines = (EXAMPLE / "reconciliation.md").read_text("utf-8").splitlines(keepends=True)
    delimiter = next(i for i, line in enumerate(lines) if line.startswith("|---"))
    written = lines[: delimiter + 1]
    for rater in raters:
        written += [ln for ln in lines[delimiter + 1:] if ln.split("|")[2:3] == [f" {rater.id} "]]
        repo.write("tests/phase2/reconciliation.md", "".join(written))
        repo.commit(f"{rater.id}'s reconciliation rows", "tests/phase2/reconciliation.md",
                    author=(rater.name, rater.emails[0]))
    return repo


@pytest.mark.slow
def test_example_gating_on_gwet_counts_d7_and_shows_the_paradox(tmp_path: Path) -> None:
    """The example's D7 has κ 0.520 at 97.8 % weighted agreement: with `coefficient: gwet` it
    counts (AC2 0.959); the JSON carries the gate, the coefficients and the flag, the Markdown the
    table and the note that the plan gates on gwet."""
    repo = sealed_example(tmp_path / "study", "gwet")
    res = run_cli("report", "--format", "json", "--bootstrap", "0", cwd=repo.path)
    assert res.code == 0, res.output
    doc = checked_report(res.out)
    assert doc["verdict"] != "NOT-READY", doc["not_ready"]
    d7 = doc["kappa"]["unblinded"]["D7"]
    assert d7["value"] < 0.6 and d7["counts"] is True and "D7" in doc["counted_dimensions"]
    assert d7["gate"]["coefficient"] == "gwet" and d7["paradox"]["flagged"] is True
    assert d7["coefficients"]["gwet"]["name"] == "AC2" and d7["coefficients"]["raters"] == 3
    md = run_cli("report", "--bootstrap", "0", cwd=repo.path)
    assert md.code == 0, md.output
    assert "The plan gates dimensions on gwet per rater pair, the min over pairs" in md.out
    assert "⚠️ κ is 0.52 below 0.6 while weighted agreement is 97.78% (prevalence index 0.3333)" in md.out

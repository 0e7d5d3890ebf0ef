"""Markdown rendering of the report dict: golden file, structure, escaping, truncation.

Regenerate the golden file after an intended change (then review the diff):

    AOVEN_UPDATE_GOLDEN=1 python -m pytest tests/test_render_markdown.py -q -k golden
"""

from __future__ import annotations

import copy
import json
import os
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from aoven_git import numfmt
from aoven_git.render.markdown import render_markdown, truncate_summary

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "fixtures" / "report_sample.json"
GOLDEN = HERE / "golden" / "report_sample.md"
EVIL = "<script>alert(1)</script>"


def sample() -> dict[str, Any]:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


# --- variants derived from the sample (shared with test_render_html) ----------------------------


def not_ready_report() -> dict[str, Any]:
    r = sample()
    r.update(verdict="NOT-READY", summary="NOT-READY: seal violations and a pending rater.",
             reasons=["seal rules violated (2 violations)",
                      "required rater logician is pending in pass blinded"],
             not_ready=["required rater logician has not revealed scores for pass blinded",
                        "seal violation: scores_cto.md changed after its seal"],
             pending_raters={"unblinded": [], "blinded": ["logician"]})
    r["seals"] = {"verified": True, "status": "violated", "message": "2 violations found in history",
                  "violations": [
                      {"code": "sealed-file-changed", "rater": "cto",
                       "commit": "3f2a9c4e5b6d7081928374655647382910abcdef",
                       "message": "scores_cto.md changed after its seal"},
                      {"code": "read-before-seal", "rater": "redteam",
                       "commit": "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
                       "message": "scores_logician.md was readable before redteam sealed"},
                  ],
                  "forced_reveals": [{"rater": "logician", "pass": "blinded",
                                      "commit": "0123456789abcdef0123456789abcdef01234567",
                                      "message": "revealed with --force"}]}
    return r


def contested_report() -> dict[str, Any]:
    r = sample()
    r.update(verdict="CONTESTED", summary="CONTESTED: the verdict depends on 1 contested cell.",
             contested_cells=["Q2/B/D8"],
             extremes={"best": {"verdict": "PASS", "improvement": 0.33},
                       "worst": {"verdict": "INCONCLUSIVE", "improvement": 0.18}})
    r["cells"].append({"cell": "Q2/B/D8", "pass": "unblinded",
                       "scores": {"cto": 0, "logician": 3, "redteam": 1}, "flagged": True,
                       "resolution": "contested", "value": None, "value_exact": None})
    return r


def undefined_kappa_report() -> dict[str, Any]:
    r = sample()
    k = r["kappa"]["unblinded"]["D3"]
    k.update(value=None, min=None, mean=None, counts=False, reason=None)
    k["pairs"]["cto~logician"] = None
    k["intervals"]["cto~logician"] = None
    r["kappa"]["unblinded"]["D5"].update(value=None, reason="both raters constant", counts=False)
    r["improvement"] = None
    r["improvement_exact"] = None
    r["rules"][0].update(value=None, value_exact=None, outcome="not-evaluable",
                         reason="D3 does not count (kappa undefined)")
    r["verdict"] = "INCONCLUSIVE"
    return r


def not_verified_report() -> dict[str, Any]:
    r = sample()
    r["seals"] = {"verified": False, "status": "not-verified", "message": "not a git repository",
                  "violations": [], "forced_reveals": []}
    r["validation"] = None
    r["blinding"] = None
    return r


def evil_report() -> dict[str, Any]:
    """User-controlled strings everywhere they can appear."""
    r = sample()
    pair = f"cto~{EVIL}"
    for p in r["raters"]:
        r["raters"][p] = ["cto", EVIL]
    for per_dim in r["kappa"].values():
        for k in per_dim.values():
            k["pairs"] = {pair: 0.7}
            k["intervals"] = {pair: [0.5, 0.9]}
    r["cells"] = [{"cell": "Q1/A/D1|x", "pass": "unblinded", "scores": {"cto": 1, EVIL: 3}, "flagged": True,
                   "resolution": "consensus", "value": 2.0, "value_exact": "2"}]
    r["flagged_cells"] = ["Q1/A/D1|x"]
    r["self_bias"] = [{"rater": EVIL, "pass": "unblinded", "flagged": True, "b_worse": 0}]
    r["dimensions"][0]["name"] = 'Quote" onload="alert(2)'
    r["seals"]["status"] = "violated"
    r["seals"]["violations"] = [{"code": "x", "rater": EVIL, "commit": "deadbeef" * 5,
                                 "message": '"><img src=x onerror=alert(3)> | `tick` **bold** [l](http://e.x)'}]
    r["reasons"] = ["line one\nline two | pipe"]
    r["reconciliation"]["cells"][0]["proposals"][0]["justification"] = f"{EVIL} | `tick` **bold**\nnext"
    r["reconciliation"]["cells"][0]["proposals"][1]["rater"] = EVIL
    r["reconciliation"]["unattributed"] = [
        {"code": "unattributed-row", "path": f"study/{EVIL}|x.md", "line": 3, "cell": "Q1/A/D1",
         "rater": EVIL, "author": f"{EVIL}@example.org", "commit": "deadbeef" * 5,
         "message": '"><img src=x onerror=alert(4)>'}]
    r["excluded_raters"] = [{"rater": EVIL, "codes": ["x"], "messages": ["<b>m</b>"]}]
    r["deviations"] = [{"path": f"rules.{EVIL}", "default": "`a|b`", "value": EVIL, "line": 4,
                        "detail": EVIL}]
    r["seals"]["timeline"][0].update(rater=EVIL, author=f"{EVIL} <x@y>")
    r["source"].update(revision=EVIL, work_tree=True, uncommitted=[f"study/{EVIL}.md (M)"])
    return r


# --- variants with the provenance and audit keys (shared with test_render_audit) ----------------


def work_tree_report() -> dict[str, Any]:
    """`report --work-tree`: a preview from uncommitted files, attribution not checked."""
    r = sample()
    r["source"].update(work_tree=True, clean=False,
                       uncommitted=["tests/phase2/scores_cto.md (M)", "tests/phase2/reconciliation.md (??)"])
    r["reconciliation"].update(attribution="not-checked", note="computed from uncommitted files: who wrote "
                               "each reconciliation row was not checked")
    return r


def outside_git_report() -> dict[str, Any]:
    r = not_verified_report()
    r["source"] = {"git": False, "revision": None, "rev": None, "work_tree": True, "clean": None,
                   "uncommitted": [], "version": "0.1.0", "generated_at": "2026-11-26T10:00:00Z"}
    r["seals"].update(message="not a git repository, so the sealing history was not checked")
    r["reconciliation"].update(attribution="not-checked", note="not a git repository: who wrote each "
                               "reconciliation row was not checked")
    return r


def audit_report() -> dict[str, Any]:
    """Every new section with something to say: an excluded optional rater, a contested and a
    missing cell next to the unanimous one, a row someone else wrote, two deviations."""
    r = sample()
    message = "redteam sealed unblinded/main after other raters' scores were in the history"
    r["seals"]["violations"] = [{"code": "visible-at-seal", "rater": "redteam",
                                 "commit": "fb91dce7d5a1b2c3d4e5f60718293a4b5c6d7e8f", "message": message}]
    r["seals"]["excluded_raters"] = [{"rater": "redteam", "codes": ["visible-at-seal"]}]
    r["excluded_raters"] = [{"rater": "redteam", "codes": ["visible-at-seal"], "messages": [message]}]
    r["deviations"].insert(0, {"path": "rounds[main].questions", "line": 74, "value": "[Q1, Q2, Q3, Q4]",
                               "default": "[Q1, Q2, Q3, Q4, Q5, Q6, Q7, Q8, Q9, Q10]",
                               "detail": "removed Q5, Q6, Q7, Q8, Q9, Q10"})
    cells = r["reconciliation"]["cells"]
    cells.append({"cell": "Q2/B/D8", "pass": "unblinded", "state": "contested", "value": None, "missing": [],
                  "proposals": [
                      {"rater": "cto", "consensus": 1, "justification": 'The list "reads cleanly" overall.',
                       "line": 12, "author": "cto@example.org"},
                      {"rater": "logician", "consensus": 2, "justification": '"First, second, third" nests.',
                       "line": 13, "author": "logician@example.org"},
                      {"rater": "redteam", "consensus": "contested", "justification": "Cannot agree.",
                       "line": 14, "author": "redteam@example.org"}]})
    cells.append({"cell": "Q4/A/D1", "pass": "blinded", "state": "missing", "value": None,
                  "missing": ["logician"],
                  "proposals": [{"rater": "cto", "consensus": 2, "justification": '"Go is faster" is bare.',
                                 "line": 8, "author": "cto@example.org"}]})
    r["reconciliation"]["unattributed"] = [
        {"code": "unattributed-row", "path": "tests/phase2/reconciliation_blinded.md", "line": 9,
         "cell": "Q4/A/D1", "rater": "logician", "author": "lead@example.org",
         "commit": "a993ee02a96028df6d91ab92a6c57c12caa0185b",
         "message": "last written by lead@example.org, not by logician"}]
    r["contested_cells"] = ["Q2/B/D8"]
    return r


def amendment_entry(report: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """An exploratory amendment entry as analysis writes it: D8 of B raised by 0.6."""
    dims = copy.deepcopy(report["dimensions"])
    d8 = next(d for d in dims if d["id"] == "D8")
    d8.update(mean_B=1.6, mean_B_exact="8/5", delta=0.8, delta_exact="4/5")
    kappa = copy.deepcopy(report["kappa"]["unblinded"]["D8"])
    kappa.update(value=0.854, min=0.854)
    entry = {
        "id": "d8-load", "title": "Markers count toward load", "rationale": "A reader cannot skip a marker.",
        "label": "exploratory",
        "scope": {"dimensions": ["D8"], "conditions": ["B"], "passes": ["unblinded"],
                  "cells": {"unblinded": 10}},
        "verdict": "FAIL", "summary": "FAIL: D8 (Cognitive load) load rises by 0.8 (> 0.5)",
        "reasons": ["D8 (Cognitive load) load rises by 0.8 (> 0.5)"],
        "preregistered_verdict": report["verdict"],
        "change": "PASS → FAIL: D8 (Cognitive load) load rises by 0.8 (> 0.5)",
        "improvement": 0.3, "improvement_exact": "3/10", "means": {"A": 12.0, "B": 8.4},
        "means_exact": {"A": "12", "B": "42/5"}, "counted_dimensions": list(report["counted_dimensions"]),
        "excluded_dimensions": dict(report["excluded_dimensions"]), "dimensions": dims,
        "kappa": {"unblinded": {"D8": kappa}}, "raters": {"unblinded": ["cto", "logician", "redteam"]},
        "pending_raters": {"unblinded": []}, "excluded_raters": [],
        "changed_cells": [{"cell": f"Q{i}/B/D8", "pass": "unblinded", "rater": r, "from": 1, "to": 2}
                          for i in (2, 3, 9) for r in ("cto", "logician")],
        "consensus_changes": [{"cell": f"Q{i}/B/D8", "pass": "unblinded", "from": 1.0, "from_exact": "1",
                               "from_resolution": "agreed", "to": 2.0, "to_exact": "2",
                               "to_resolution": "agreed"} for i in (2, 3, 9)],
        "rules_changed": [{"id": "fail.load.D8", "kind": "fail",
                           "text": "D8 (Cognitive load): mean B − mean A > 0.5",
                           "from": "not-met", "to": "met", "value_from": 0.2, "value_from_exact": "1/5",
                           "value_to": 0.8, "value_to_exact": "4/5", "threshold": 0.5,
                           "threshold_exact": "1/2",
                           "reason": "D8 (Cognitive load) load rises by 0.8 (> 0.5)"}],
        "contested_cells": [], "not_ready": [],
    }
    entry.update(changes)
    return entry


def amended_report() -> dict[str, Any]:
    """Two amendments (the second one NOT-READY: a rater is pending) and a blind pass not yet
    unblinded."""
    r = sample()
    pending = ("required rater logician has not revealed the re-scores of amendment d7-clarity for pass "
               "unblinded")
    r["amendments"] = [
        amendment_entry(r),
        amendment_entry(r, id="d7-clarity", title="Clarity again", verdict="NOT-READY", reasons=[pending],
                        summary=f"NOT-READY: {pending}", change=f"not ready: {pending}", improvement=None,
                        improvement_exact=None, means={"A": None, "B": None},
                        means_exact={"A": None, "B": None},
                        changed_cells=[], consensus_changes=[], rules_changed=[], not_ready=[pending],
                        pending_raters={"unblinded": ["logician"]},
                        dimensions=[{**d, "mean_A": None, "mean_B": None, "delta": None, "mean_A_exact": None,
                                     "mean_B_exact": None, "delta_exact": None} for d in r["dimensions"]],
                        scope={"dimensions": ["D7"], "conditions": ["B"], "passes": ["unblinded"],
                               "cells": {"unblinded": 10}}),
    ]
    r["blind_passes"] = [{"pass": "blinded", "state": "pending", "key": "tests/phase2/blind/blinded/key.json",
                          "problem": None, "used_by_verdict": True}]
    return r


def evil_amended_report() -> dict[str, Any]:
    r = evil_report()
    r["amendments"] = [amendment_entry(r, id=EVIL, title=f"{EVIL} | `t` **b**", rationale=f"{EVIL}\nline",
                                       changed_cells=[{"cell": f"Q1/B/D8|{EVIL}", "pass": EVIL, "rater": EVIL,
                                                       "from": 1, "to": 2}],
                                       not_ready=[f"{EVIL} | pending"], reasons=[EVIL])]
    r["blind_passes"] = [{"pass": EVIL, "state": "invalid-key", "key": f"study/{EVIL}/key.json",
                          "problem": f"3: {EVIL}", "used_by_verdict": True}]
    return r


VARIANTS = {
    "legacy": lambda: legacy_report(),
    "amended": amended_report,
    "evil_amended": evil_amended_report,
    "sample": sample,
    "not_ready": not_ready_report,
    "work_tree": work_tree_report,
    "outside_git": outside_git_report,
    "audit": audit_report,
    "contested": contested_report,
    "undefined_kappa": undefined_kappa_report,
    "not_verified": not_verified_report,
    "evil": evil_report,
}


# --- helpers -------------------------------------------------------------------------------------


def md_tables(markdown: str) -> list[list[list[str]]]:
    """Tables as rows of cell texts, parsed by a real GFM-table parser (markdown-it-py)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    for i, tok in enumerate(tokens):
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            inline = tokens[i + 1]
            text = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))
            assert row is not None
            row.append(text)
        elif tok.type == "tr_close":
            assert row is not None
            tables[-1].append(row)
    return tables


def table_with(markdown: str, first_header: str, also: str | None = None) -> list[list[str]]:
    """The first table whose first header is `first_header` (and that has a header `also`)."""
    found = [t for t in md_tables(markdown)
             if t and t[0][0] == first_header and (also is None or also in t[0])]
    assert found, f"no table starting with {first_header!r}"
    return found[0]


# --- golden --------------------------------------------------------------------------------------


def test_golden_markdown_for_sample() -> None:
    text = render_markdown(sample())
    if os.environ.get("AOVEN_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
        pytest.skip("golden file rewritten; review the diff")
    assert text == GOLDEN.read_text(encoding="utf-8")


# --- structure -----------------------------------------------------------------------------------


def test_rules_table_lists_every_rule_with_its_outcome() -> None:
    report = sample()
    rows = table_with(render_markdown(report), "rule")
    # no rule has a reason: the empty column is left out
    assert rows[0] == ["rule", "kind", "condition", "value", "threshold", "outcome"]
    by_id = {r[0]: r for r in rows[1:]}
    assert len(by_id) == len(report["rules"]) == 17
    for rule in report["rules"]:
        row = by_id[rule["id"]]
        expected = {("pass", "met"): "✅ met", ("fail", "not-met"): "✅ not met"}
        assert row[5] == expected[(rule["kind"], rule["outcome"])]
    assert by_id["pass.improvement"][3] == "42.9% (143/333)"
    assert by_id["pass.improvement"][4] == "20.0%"
    assert by_id["pass.questions"][3:5] == ["7", "6"]
    assert by_id["pass.regression.D2"][3] == "-0.97 (-29/30)"  # exact value shown when rounding hides it
    assert by_id["pass.load.D8"][3] == "0.20"  # 1/5 is exact: no fraction


def test_fail_rule_met_and_not_evaluable_outcomes() -> None:
    r = sample()
    r["rules"][9].update(outcome="met")  # fail.improvement
    r["rules"][0].update(outcome="not-evaluable", reason="D8 does not count")
    rows = {row[0]: row for row in table_with(render_markdown(r), "rule")[1:]}
    assert rows["fail.improvement"][5] == "⛔ met: fails"
    assert rows["pass.improvement"][5] == "⚪ not evaluable"
    assert rows["pass.improvement"][6] == "D8 does not count"


def test_means_table_marks_excluded_dimension_and_kind() -> None:
    rows = {r[0]: r for r in table_with(render_markdown(sample()), "dimension")[1:]}
    assert rows["D1"][2:] == ["epistemic", "2.00", "1.00", "-1.00", "counted"]
    assert rows["D8"][2:] == ["quality · load", "0.80", "1.00", "+0.20", "counted"]
    assert rows["D7"][6] == "⛔ excluded: kappa 0.412 below 0.6 (cto~logician)"


def kappa_tables_of(text: str) -> list[list[list[str]]]:
    return [t for t in md_tables(text) if t[0][:2] in (["dimension", "κ (min)"], ["dimension", "κ (mean)"])]


def test_kappa_tables_per_pass_with_intervals() -> None:
    text = render_markdown(sample())
    kappa_tables = kappa_tables_of(text)
    assert len(kappa_tables) == 2  # unblinded (verdict pass first), blinded
    assert text.index("### Pass `unblinded` (verdict pass)") < text.index("### Pass `blinded`")
    head, *rows = kappa_tables[0]
    # κ is the plan's aggregate (min): the other aggregate has a column, the same number does not twice
    assert head == ["dimension", "κ (min)", "counts", "mean", "α", "n",
                    "cto~logician", "cto~redteam", "logician~redteam"]
    d1 = rows[0]
    assert d1[:6] == ["D1", "0.790", "yes", "0.828", "0.818", "20"]
    assert d1[6] == "0.831 [0.642, 0.939]"
    d7 = rows[6]
    assert d7[1:3] == ["0.412", "⛔ no"]
    blinded_d8 = kappa_tables[1][8]
    assert blinded_d8[1] == ("undefined (κ undefined for cto~logician: both raters scored every item 1 "
                             "(expected agreement = 1))")
    assert blinded_d8[6] == "undefined"
    assert blinded_d8[3] == "—"
    assert kappa_tables[1][5][8] == "0.909"  # D5 logician~redteam: κ without an interval


def test_kappa_table_with_mean_aggregate_shows_min_as_the_other_column() -> None:
    report = sample()
    report["kappa_settings"]["aggregate"] = "mean"
    head = kappa_tables_of(render_markdown(report))[0][0]
    assert head[:4] == ["dimension", "κ (mean)", "counts", "min"]


def test_agreement_caveats_said_once_per_kind() -> None:
    text = render_markdown(sample())
    settings = next(line for line in text.splitlines() if line.startswith("Settings:"))
    assert "95% BCa bootstrap intervals from 1000 resamples (seed 20260426)" in settings
    assert "percentile where BCa is undefined" in settings
    blinded = text[text.index("### Pass `blinded`"):text.index("## Flagged")]
    # every blinded κ rests on 10 items: one sentence for the pass, not eight
    assert blinded.count("rests on 10 items") == 1 and "for every dimension" in blinded
    assert "No interval for D5 (logician\\~redteam)" in blinded
    verdict_pass = text[text.index("### Pass `unblinded`"):text.index("### Pass `blinded`")]
    assert "rests on" not in verdict_pass  # 20 items is not a small sample
    wide = next(line for line in verdict_pass.splitlines() if "wider than 0.5" in line)
    assert "D7 (every pair)" in wide and "D8 (cto\\~logician)" in wide
    summary = next(line for line in text.splitlines() if line.startswith("⚠️ **Caveats:**"))
    assert "wide κ interval for D7, D8" in summary


def test_raters_table_says_who_is_required_and_who_scored() -> None:
    report = not_ready_report()
    rows = table_with(render_markdown(report), "rater", also="role")
    assert rows[0] == ["rater", "name", "role", "pass unblinded", "pass blinded"]
    by_rater = {r[0]: r for r in rows[1:]}
    assert by_rater["cto"][2:] == ["required", "✅ scored", "✅ scored"]
    assert by_rater["redteam"][2] == "optional"
    report["raters"]["blinded"] = ["cto", "redteam"]
    report["rater_roster"][2]["required"] = False
    by_rater = {r[0]: r for r in table_with(render_markdown(report), "rater", also="role")[1:]}
    assert by_rater["logician"][4] == "⏳ pending"  # required, missing: blocks the verdict


def test_undefined_kappa_without_reason_still_says_why_missing() -> None:
    text = render_markdown(undefined_kappa_report())
    rows = {r[0]: r for r in kappa_tables_of(text)[0][1:]}  # the verdict pass first
    assert rows["D3"][1] == "undefined (no reason given)"
    assert rows["D5"][1] == "undefined (both raters constant)"
    assert rows["D3"][6] == "undefined"
    assert "**Improvement:** undefined" in text


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_no_nan_or_none_leaks(name: str) -> None:
    text = render_markdown(VARIANTS[name]())
    assert not re.search(r"\b(nan|NaN|None|null|inf|Infinity)\b", text), name


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_table_rows_have_header_width(name: str) -> None:
    """Counted on the raw text: a GFM parser silently pads or drops cells, so it would hide this."""
    text = render_markdown(VARIANTS[name]())
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            widths = {len(re.split(r"(?<!\\)\|", row)) for row in block}
            assert len(widths) == 1, block
            block = []


def test_cells_flagged_with_each_rater_score_and_resolution() -> None:
    rows = table_with(render_markdown(sample()), "cell")
    assert rows[0] == ["cell", "pass", "cto", "logician", "redteam", "resolution", "value"]
    assert rows[1] == ["Q6/A/D3", "unblinded", "3", "1", "2", "consensus", "2.00"]
    assert len(rows) == 2
    text = render_markdown(sample())
    assert "| `Q6/B/D2` | `unblinded` | 1 | 2 | 1 | mean | 1.33 |" in text


def test_contested_shows_both_extremes_and_cell() -> None:
    text = render_markdown(contested_report())
    assert "## 🟠 Verdict: **CONTESTED**" in text
    assert "best case for B: **PASS** (improvement 33.0%)" in text
    assert "worst case for B: **INCONCLUSIVE** (improvement 18.0%)" in text
    rows = {r[0]: r for r in table_with(text, "cell")[1:]}
    assert rows["Q2/B/D8"][2:] == ["0", "3", "1", "⚖️ contested", "—"]


def test_self_bias_and_blinding() -> None:
    text = render_markdown(sample())
    rows = table_with(text, "rater", also="self-bias")
    assert ["logician", "unblinded", "0", "🚩 flagged for re-audit"] in rows
    assert sum(1 for r in rows if "flagged" in r[3]) == 1
    assert "1 rater pass flagged for re-audit" in text
    assert "**0.20** ≤ threshold 0.50" in text
    assert "B scores used for the verdict: pass `unblinded`." in text
    assert "no blinding divergence was computed" in render_markdown(not_verified_report())


def test_seals_complete_violated_and_not_verified() -> None:
    assert "✅ **complete**: 6 seals verified" in render_markdown(sample())
    text = render_markdown(not_ready_report())
    assert "## ⚪ Verdict: **NOT-READY**" in text
    assert "⛔ **violated**" in text
    rows = table_with(text, "code")
    assert rows[1][:3] == ["sealed-file-changed", "cto", "3f2a9c4"]
    assert rows[2][2] == "a1b2c3d"
    assert "3f2a9c4e5b" not in text  # commits are shown as short ids
    assert "- required rater logician has not revealed scores for pass blinded" in text
    assert "**Pending raters:** pass `blinded`: `logician`" in text
    assert "commit 0123456: revealed with --force" in text
    nv = render_markdown(not_verified_report())
    assert "⚠️ **seals were not verified**: not a git repository" in nv
    assert "Score files were not validated." in nv


def test_validation_summary() -> None:
    text = render_markdown(sample())
    assert "✅ 6 score files: 0 errors, 1 warning." in text
    rows = table_with(text, "file")
    assert rows[1][:4] == ["tests/phase2/scores_logician.md", "41", "⚠️ warning", "quote-normalised"]


def test_questions_table() -> None:
    rows = table_with(render_markdown(sample()), "question")
    assert rows[0][:4] == ["question", "text", "aggregate A", "aggregate B"]
    assert rows[6] == ["Q6", "What do you know about the last 6 months of geopolitical events?",
                       "12.00", "4.33", "-7.67", "6 of 7", "✅ yes"]
    assert rows[10][2:] == ["8.00", "9.00", "+1.00", "0 of 7", "no"]
    assert sum(1 for r in rows[1:] if r[6] == "✅ yes") == 7


def test_withheld_numbers_are_said_once_not_per_cell() -> None:
    report = not_ready_report()
    report.update(improvement=None, improvement_exact=None)
    for rule in report["rules"]:
        rule.update(value=None, value_exact=None, outcome="not-evaluable",
                    reason="withheld while the verdict is NOT-READY")
    for q in report["questions"]:
        q.update({k: None for k in q if k.startswith(("aggregate", "improv"))})
    for d in report["dimensions"]:
        d.update({k: None for k in d if k.startswith(("mean", "delta"))})
    text = render_markdown(report)
    assert text.count("Reason for every row: withheld while the verdict is NOT-READY.") == 1
    assert not any("withheld" in cell for row in table_with(text, "rule") for cell in row)
    assert table_with(text, "rule")[0] == ["rule", "kind", "condition", "threshold", "outcome"]
    assert "Means are withheld while the verdict is NOT-READY." in text
    assert table_with(text, "dimension", also="status")[0] == ["dimension", "name", "kind", "status"]
    assert table_with(text, "question")[0] == ["question", "text"]  # no "no" for an unknown answer


def legacy_report() -> dict[str, Any]:
    """A document written before the caveats, roster, question texts, exact κ, source,
    reconciliation, exclusions, deviations and seal timeline existed."""
    r = sample()
    for key in ("caveats", "rater_roster", "source", "reconciliation", "excluded_raters", "deviations"):
        del r[key]
    for key in ("timeline", "excluded_raters"):
        del r["seals"][key]
    for q in r["questions"]:
        for key in ("text", "aggregate_A_exact", "aggregate_B_exact"):
            del q[key]
    for key in ("threshold_exact", "undefined", "confidence", "interval_method", "caveat_min_items",
                "caveat_max_width"):
        del r["kappa_settings"][key]
    for per_dim in r["kappa"].values():
        for k in per_dim.values():
            for key in ("interval_methods", "interval_reasons", "pair_n"):
                del k[key]
    return r


def test_a_report_written_before_the_new_keys_still_renders() -> None:
    text = render_markdown(legacy_report())
    assert table_with(text, "question")[0][:2] == ["question", "aggregate A"]  # no empty text column
    assert table_with(text, "rater", also="pass blinded")[0] == ["rater", "pass unblinded", "pass blinded"]
    assert "percentile bootstrap intervals" in text  # what older reports computed
    assert "Caveats" not in text
    for absent in ("**Source:**", "## Deviations", "## Reconciliation", "**Timeline**", "Excluded raters"):
        assert absent not in text  # nothing is said about what the document does not know


def test_user_text_cannot_inject_html_or_break_tables() -> None:
    text = render_markdown(evil_report())
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script" not in rendered
    assert "<img" not in rendered
    assert "<a href" not in rendered  # no link from a violation message
    assert "<strong>bold</strong>" not in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    rows = table_with(text, "cell")
    assert rows[0] == ["cell", "pass", "cto", EVIL, "resolution", "value"]
    assert rows[1][0] == "Q1/A/D1|x"
    assert "1. line one line two \\| pipe" in text  # one list item, newline folded


# --- numbers -------------------------------------------------------------------------------------


def test_number_formatting_rounds_half_up_from_exact_values() -> None:
    assert numfmt.percent(0.3125, "5/16") == "31.3%"  # Python's round(31.25, 1) would give 31.2
    assert numfmt.percent(None, "1/3") == "33.3%"
    assert numfmt.percent(None, None) == "undefined"
    assert numfmt.kappa(0.8125) == "0.813"
    assert numfmt.kappa(-0.0004) == "0.000"  # never "-0.000"
    assert numfmt.kappa(float("nan"), "both raters constant") == "undefined (both raters constant)"
    assert numfmt.mean(None, "-29/30") == "-0.97"
    assert numfmt.mean(0.2, "1/5", signed=True) == "+0.20"
    assert numfmt.mean(-0.001, signed=True) == "0.00"
    assert numfmt.mean(None) == "—"


def _half_away(q: Fraction, places: int) -> Fraction:
    """An independent oracle for rounding half up (away from zero on a tie)."""
    scaled = abs(q) * 10**places
    whole = int(scaled + Fraction(1, 2))  # floor(x + 1/2) for x ≥ 0
    return (whole if q >= 0 else -whole) / Fraction(10**places)


@settings(max_examples=300, deadline=None)
@given(q=st.fractions(min_value=-1000, max_value=1000, max_denominator=10**6), places=st.integers(0, 6))
def test_decimal_rounds_half_up_exactly(q: Fraction, places: int) -> None:
    text = numfmt.decimal(q, places)
    expected = _half_away(q, places)
    assert Fraction(text) == expected
    assert not text.startswith("-") or expected != 0  # never "-0.00"
    assert len(text.split(".")[1]) == places if places else "." not in text


@settings(max_examples=300, deadline=None)
@given(t=st.fractions(min_value=0, max_value=1, max_denominator=20),
       offset=st.fractions(min_value=Fraction(-1, 10**6), max_value=Fraction(1, 10**6),
                           max_denominator=10**12))
def test_sentence_numbers_never_print_equal_to_a_different_threshold(t: Fraction, offset: Fraction) -> None:
    v = t + offset
    assert (numfmt.brief_near(v, t) == numfmt.brief(t)) is (v == t)
    assert (numfmt.brief_percent_near(v, t) == numfmt.brief_percent(t)) is (v == t)


def test_sentence_and_chart_formats() -> None:
    assert numfmt.brief(Fraction(3, 5)) == "0.6" and numfmt.brief(Fraction(37, 240)) == "0.1542"
    assert numfmt.brief(-0.00001) == "0" and numfmt.brief(2) == "2"
    assert numfmt.brief_percent(Fraction(31, 160)) == "19.38%"
    assert numfmt.brief_percent(Fraction(1, 5)) == "20%"
    assert numfmt.brief_percent(Fraction(1, 800)) == "0.13%"  # 0.125 %: half up, not to even
    assert numfmt.brief_near(Fraction(3, 5) - Fraction(1, 10**9), Fraction(3, 5)) == "0.599999999"
    assert numfmt.coordinate(10.04) == "10" and numfmt.coordinate(-0.04) == "0"
    assert numfmt.finite(True) is None and numfmt.finite(float("inf")) is None and numfmt.finite(2) == 2.0
    assert numfmt.to_fraction(0.1) == Fraction(1, 10) and numfmt.to_fraction(None, "x/0") is None
    assert numfmt.interval([0.1, None]) == "" and numfmt.interval([-0.25, 0.4]) == "[-0.250, 0.400]"


# --- truncation ----------------------------------------------------------------------------------

NOTE = "Report truncated"
LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines() splits on all of these


def test_truncate_leaves_small_summaries_alone() -> None:
    text = render_markdown(sample())
    assert truncate_summary(text) == text
    assert truncate_summary(text, len(text.encode("utf-8"))) == text


def test_truncate_cuts_at_line_boundary_under_limit_with_multibyte_text() -> None:
    line = "| `Q1/A/D1` | κ 0.812 ✅ — 🟢 ünïcödé |\n"
    text = "# report\n\n" + line * 5000
    limit = 20_000
    out = truncate_summary(text, limit)
    data = out.encode("utf-8")
    assert len(data) <= limit
    assert len(data) > limit - 2 * len(line.encode("utf-8")) - 400  # did not throw away much more than needed
    kept, note = out.split("\n\n> ⚠️ **Report truncated**", 1)
    assert text.startswith(kept + "\n")  # a prefix of whole lines
    assert "the JSON and HTML report artifacts" in note
    n_lines = len(kept.splitlines())
    assert f"after line {n_lines} of {len(text.splitlines())}" in note


def test_truncate_default_limit_is_github_safe() -> None:
    text = "ö" * 200 + "\n"
    big = text * 6000  # ~2.4 MB
    out = truncate_summary(big)
    assert len(out.encode("utf-8")) <= 1_000_000 < 1024 * 1024
    assert NOTE in out


def test_truncate_mentions_given_artifact() -> None:
    out = truncate_summary("a\n" * 1000, 500, full_report="the `aoven-report` artifact (report.html)")
    assert "the `aoven-report` artifact (report.html)" in out
    assert len(out.encode()) <= 500


def test_truncate_with_limit_below_note_size_is_still_valid_utf8_under_limit() -> None:
    out = truncate_summary("κ" * 1000 + "\n", 51)
    assert len(out.encode("utf-8")) <= 51


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                                  blacklist_characters=LINE_BREAKS), max_size=80),
                   max_size=60),
    limit=st.integers(min_value=300, max_value=4000),
)
def test_truncate_property(lines: list[str], limit: int) -> None:
    text = "\n".join(lines) + "\n"
    out = truncate_summary(text, limit)
    assert len(out.encode("utf-8")) <= limit
    if len(text.encode("utf-8")) <= limit:
        assert out == text
    else:
        kept = out.split("\n\n> ⚠️ **Report truncated**", 1)[0]
        assert kept == "" or text.startswith(kept.rstrip("\n") + "\n") or text.startswith(kept)
        assert NOTE in out


def test_renderer_does_not_mutate_input() -> None:
    report = evil_report()
    before = copy.deepcopy(report)
    render_markdown(report)
    assert report == before


def test_truncate_closes_a_code_fence_the_cut_leaves_open() -> None:
    text = "# Report\n\n```text\n" + "".join(f"line {i}\n" for i in range(5000))
    out = truncate_summary(text, 2000)
    assert len(out.encode("utf-8")) <= 2000
    kept = out.split("\n\n> ⚠️ **Report truncated**", 1)[0]
    assert kept.endswith("\n```")
    assert sum(1 for ln in kept.splitlines() if ln.startswith("```")) == 2
    closed = "# Report\n\n```text\nx\n```\n" + "".join(f"line {i}\n" for i in range(5000))
    assert not truncate_summary(closed, 2000).split("\n\n> ⚠️", 1)[0].endswith("```")


def test_a_not_ready_improvement_reads_withheld_not_undefined() -> None:
    """NOT-READY computes no improvement: the headline says it is withheld, as the rest of the
    report does, rather than "undefined" (which reads like a failed computation)."""
    r = not_ready_report()
    r.update(improvement=None, improvement_exact=None)
    assert "**Improvement:** withheld" in render_markdown(r)
    assert "**Improvement:** withheld" not in render_markdown(sample())

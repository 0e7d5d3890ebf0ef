"""Markdown rendering of the report document (GitHub job summary, `report --format markdown`).

The renderer reads only the report document, so it can be tested on hand-made documents and
cannot disagree with the JSON. Tables come from tables.py (shared with the HTML renderer) and
numbers from numfmt.py; each section of the page is one function here, in page order.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from aoven_git import numfmt
from aoven_git.numfmt import DASH
from aoven_git.render import audit, designs, exploratory, provenance
from aoven_git.render.tables import (
    NOMINAL_QUESTIONS,
    VERDICT_MARKS,
    Cell,
    Table,
    caveat_summary,
    cell_tables,
    checklist_sentence,
    checklist_table,
    coefficient_tables,
    describe,
    held,
    is_design,
    kappa_missing,
    kappa_notes,
    kappa_tables,
    labels,
    means_table,
    nominal,
    questions_table,
    rater_means_table,
    raters_table,
    rules_sentence,
    rules_table,
    self_bias_table,
    uncertainty_sentence,
    validation_table,
    violations_table,
    withheld,
)

__all__ = ["md", "md_code", "md_details", "md_table", "render_markdown", "truncate_summary"]

SUMMARY_LIMIT = 1_000_000
#: What the "Beyond κ" table shows, in one line (docs/statistics.md, "When κ misleads").
BEYOND_KAPPA = ("all raters, Gwet's multi-rater forms, same weights as κ, 95% intervals from Gwet's "
                "standard errors; bias: the pair whose score levels differ most")

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#!])")


def md(text: Any) -> str:
    """Escape user text for GFM: no raw HTML, no accidental emphasis/strike/links, safe in tables."""
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", flat)


def md_code(text: Any) -> str:
    flat = " ".join(str(text).split())
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or longest else ""
    return f"{fence}{pad}{flat.replace('|', chr(92) + '|')}{pad}{fence}"


def _md_cell(cell: Cell) -> str:
    if cell.text in ("", DASH) and not cell.mark:
        return cell.text
    body = md_code(cell.text) if cell.code else md(cell.text)
    return f"{cell.mark} {body}" if cell.mark else body


def md_table(table: Table) -> list[str]:
    """The table's notes (one paragraph each), then the GFM table."""
    notes = [line for note in table.notes for line in (md(note), "")]
    head = "| " + " | ".join(md(h) for h in table.headers) + " |"
    align = "|" + "|".join("---:" if i in table.numeric else "---" for i in range(len(table.headers))) + "|"
    body = ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    return [*notes, head, align, *body]


def md_details(summary: str, body: list[str]) -> list[str]:
    """`body` folded under a one-line `summary` (GitHub renders `<details>`; the summary is our
    own text, escaped as HTML; the body stays Markdown, so a blank line must follow `<summary>`)."""
    return ["<details>", f"<summary>{html.escape(summary)}</summary>", "", *body, "", "</details>", ""]


def _folded(summary: str, body: list[str], rows: int) -> list[str]:
    """`body` as is when short, else folded under `summary`."""
    return md_details(summary, body) if rows > audit.FOLD_AFTER else [*body, ""]


def _plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


# --------------------------------------------------------------------------- verdict


def _md_title(report: Mapping[str, Any]) -> list[str]:
    facts = [f"round {md_code(report.get('round') or DASH)}"]
    if report.get("plan_version") is not None:
        facts.append(f"plan version {md(report.get('plan_version'))}")
    if report.get("verdict_pass"):
        facts.append(f"verdict pass {md_code(report['verdict_pass'])}")
    return [f"# aoven-git report: {md(report.get('study') or 'study')}", "", " · ".join(facts), ""]


def _md_source(report: Mapping[str, Any]) -> list[str]:
    """Which revision the report was computed from, and a banner when that is not (only) the
    verified history (docs/report.md, "Source")."""
    facts = provenance.source_facts(report)
    lines = []
    if facts:
        lines += ["**Source:** " + " · ".join(
            f.prefix + (md_code(f.text) if f.code else md(f.text)) for f in facts), ""]
    banner = provenance.banner(report)
    if banner is not None:
        mark = "⛔" if banner.tone == "bad" else "⚠️"
        lines += [f"> {mark} **{md(banner.title)}.** {md(banner.text)}"]
        if banner.files:
            lines += [">"] + [f"> - {md_code(path)}" + (f" ({md(what)})" if what else "")
                              for path, what in banner.files]
            if banner.more:
                lines.append(f"> - and {banner.more} more (see the JSON report)")
        lines.append("")
    return lines



def _improvement(report: Mapping[str, Any]) -> str:
    """The improvement, or *withheld* when the verdict is NOT-READY (no number was computed
    because the data are not ready, not because the computation failed)."""
    if report.get("improvement") is None and report.get("verdict") == "NOT-READY":
        return "withheld"
    return numfmt.percent(report.get("improvement"), report.get("improvement_exact"))

def _md_heading(report: Mapping[str, Any]) -> list[str]:
    if is_design(report):
        return _md_design_heading(report)
    verdict = str(report.get("verdict") or "UNKNOWN")
    lines = [f"## {VERDICT_MARKS.get(verdict, '⚪')} Verdict: **{md(verdict)}**", ""]
    if report.get("summary"):
        lines += [f"> {md(report['summary'])}", ""]
    sentence = rules_sentence(report)
    if sentence:
        lines += [f"**Rules:** {md(sentence)}", ""]
    a, b = labels(report)
    means, exact = report.get("means") or {}, report.get("means_exact") or {}
    mean_a, mean_b = (held(report, means.get(c), numfmt.mean(means.get(c), exact.get(c))) for c in (a, b))
    lines += [
        f"**Improvement:** {_improvement(report)}"
        f" · **mean aggregate** {md(a)} {mean_a}, {md(b)} {mean_b}"
        f" · **counted dimensions** {len(report.get('counted_dimensions') or [])}"
        f" of {len(report.get('dimensions') or [])}",
        "",
    ]
    if report.get("terminal"):
        lines += ["> ⛔ **Terminal:** a second inconclusive round; study v0.1 ends here.", ""]
    return lines


def _md_design_heading(report: Mapping[str, Any]) -> list[str]:
    """A design's verdict block: the decision beside the verdict, the summary, the decision in
    one sentence, the criteria met and not met, then the means (an ordinal scale only)."""
    verdict = str(report.get("verdict") or "UNKNOWN")
    lines = [f"## {VERDICT_MARKS.get(verdict, '⚪')} Verdict: **{md(verdict)}**", "",
             f"**Decision:** {md(designs.decision_line(report))}", ""]
    if report.get("summary"):
        lines += [f"> {md(report['summary'])}", ""]
    lines += [md(designs.decision_sentence(report)), "",
              f"**Criteria:** {md(designs.criteria_sentence(report))}", ""]
    figures = [f"**counted dimensions** {len(report.get('counted_dimensions') or [])} of "
               f"{len(report.get('dimensions') or [])}"]
    if not nominal(report):
        means, exact = report.get("means") or {}, report.get("means_exact") or {}
        shown = ", ".join(f"{md(c)} {held(report, v, numfmt.mean(v, exact.get(c)))}"
                          for c, v in means.items())
        figures.insert(0, f"**mean aggregate** {shown}")
        if report.get("improvement") is not None or withheld(report):
            a, b = labels(report)
            figures.insert(0, f"**Improvement** ({md(b)} against {md(a)}): {_improvement(report)}")
    return [*lines, " · ".join(figures), ""]


def _md_why(report: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    reasons = [r for r in report.get("reasons") or [] if r not in (None, "")]
    if reasons:
        lines += ["**Why:**", ""] + [f"{i}. {md(r)}" for i, r in enumerate(reasons, 1)] + [""]
    not_ready = report.get("not_ready") or []
    if not_ready:
        lines += ["**Not ready because:**", ""] + [f"- {md(r)}" for r in not_ready] + [""]
    pending = {p: rs for p, rs in (report.get("pending_raters") or {}).items() if rs}
    if pending:
        lines += ["**Pending raters:** " + "; ".join(
            f"pass {md_code(p)}: " + ", ".join(md_code(r) for r in rs) for p, rs in pending.items()), ""]
    lines += _md_excluded_line(report)
    caveats = caveat_summary(report)
    if caveats:
        lines += [f"⚠️ **Caveats:** {md(caveats)}.", ""]
    ignored = len(audit.unattributed(report))
    if ignored:
        lines += [f"⚠️ **Reconciliation:** {_plural(ignored, 'row')} ignored because someone other than "
                  "the rater it names wrote it (see Reconciliation).", ""]
    late = provenance.after_reveal_summary(report)
    if late:
        lines += [f"⚠️ **Protocol:** {md(late)} (see Protocol deviations).", ""]
    departures = provenance.deviation_summary(report)
    if departures:
        lines += [f"📝 **Plan:** {md(departures)} (see Deviations).", ""]
    return lines


def _md_excluded_line(report: Mapping[str, Any]) -> list[str]:
    found = audit.excluded_sentence(report)
    if found is None:
        return []
    raters, meaning = found
    who = "; ".join(md_code(r) + (f" ({md(codes)})" if codes else "") for r, codes in raters)
    return [f"**Excluded raters:** {who}: {md(meaning)}.", ""]


def _md_contest_and_retest(report: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    extremes = report.get("extremes")
    if isinstance(extremes, Mapping):
        parts = []
        for key, label in (("best", "best case for B"), ("worst", "worst case for B")):
            e = extremes.get(key) or {}
            parts.append(f"{label}: **{md(e.get('verdict') or DASH)}**"
                         f" (improvement {numfmt.percent(e.get('improvement'), e.get('improvement_exact'))})")
        lines += ["**Contested cells at both extremes:** " + "; ".join(parts), ""]
    robust = report.get("robust_to_contested")
    if isinstance(robust, int) and robust > 0:
        lines += [f"The verdict is robust to {_plural(robust, 'contested cell')}.", ""]
    retest = report.get("retest")
    if isinstance(retest, Mapping):
        refs = ", ".join(md_code(r) for r in retest.get("refinements") or []) or "none"
        lines += [f"**Re-test round** {md_code(retest.get('round') or DASH)} · refinements: {refs}", ""]
        lines += [f"- ⚠️ {md(p)}" for p in retest.get("problems") or []]
        if retest.get("problems"):
            lines.append("")
    return lines


# --------------------------------------------------------------------------- sections


def _md_rules(report: Mapping[str, Any]) -> list[str]:
    if is_design(report):
        return _md_decision(report) + _md_criteria(report)
    return ["## Rules", "", *md_table(rules_table(report)), ""]


def _md_decision(report: Mapping[str, Any]) -> list[str]:
    """The decision table, each row with its outcome; what blocks an open decision, and why."""
    lines = ["## Decision", "", md(designs.DECISION_RULE), "", *md_table(designs.decision_table(report)), ""]
    d = designs.decision(report)
    blocking = [str(b) for b in d.get("blocking") or []]
    if blocking:
        lines += ["**Blocked by:** " + ", ".join(md_code(b) for b in blocking), ""]
    reasons = [str(r) for r in d.get("reasons") or [] if r]
    if reasons:
        lines += ["**Why:**", ""] + [f"{i}. {md(r)}" for i, r in enumerate(reasons, 1)] + [""]
    return lines


def _md_criteria(report: Mapping[str, Any]) -> list[str]:
    """The criteria table, then each criterion's values key by key (the charts are the HTML's)."""
    lines = ["## Criteria", "", md(designs.first_upper(designs.criteria_sentence(report) or "")), "",
             *md_table(designs.criteria_table(report)), ""]
    if designs.not_ready(report):
        return lines
    for criterion in designs.criteria(report):
        lines += _md_criterion(report, criterion)
    return lines


def _md_criterion(report: Mapping[str, Any], criterion: Mapping[str, Any]) -> list[str]:
    label, _, mark = designs.outcome_of(criterion)
    lines = [f"### {md_code(criterion.get('id') or DASH)} {md(criterion.get('text') or '')}: "
             f"{mark + ' ' if mark else ''}{md(label)}", ""]
    seed = criterion.get("kind") == "seed"
    table = designs.seed_rules_table(criterion) if seed else designs.values_table(report, criterion)
    if table.rows:
        what = _plural(len(table.rows), "rule" if seed else "value")
        lines += _folded(f"{what} of {criterion.get('id')}", md_table(table), len(table.rows))
    passes = [str(p) for p in criterion.get("passes") or []]
    if passes:
        lines += [f"Reads the consensus cells of pass {', '.join(md_code(p) for p in passes)}.", ""]
    extremes = designs.extremes_text(criterion)
    if extremes:
        lines += [f"⚖️ **Contested cells at their extremes:** {md(extremes)}.", ""]
    reasons = [str(r) for r in criterion.get("reasons") or [] if r]
    if reasons:
        lines += [f"- {md(r)}" for r in reasons] + [""]
    return lines


def _md_protocol(report: Mapping[str, Any]) -> list[str]:
    """Protocol events (amendments, withdrawals, forced reveals, excluded raters, plan edits after the
    first seal), then the descriptive edits in one line."""
    if provenance.protocol_part(report) is None:
        return []
    table = provenance.protocol_table(report)
    lines = ["## Protocol deviations", "", md(provenance.protocol_intro(report)), ""]
    if table.rows:
        lines += [*md_table(table), ""]
    descriptive = provenance.descriptive_line(report)
    return lines + ([md(descriptive), ""] if descriptive else [])


def _md_deviations(report: Mapping[str, Any]) -> list[str]:
    found = provenance.deviations(report)
    if found is None:
        return []
    protocol = [d for d in found if not d.descriptive]
    intro = provenance.deviations_intro(len(protocol), len(found) - len(protocol))
    lines = ["## Deviations from the published defaults", "", md(intro), ""]
    items = [f"- {md_code(d.path)}: {md(d.text)}" + (f" · line {d.line}" if d.line is not None else "")
             for d in protocol]
    if items:
        lines += _folded(f"{_plural(len(items), 'departure')} from the defaults", items, len(items))
    descriptive = provenance.descriptive_defaults(found)
    return lines + ([md(descriptive), ""] if descriptive else [])


def _md_means(report: Mapping[str, Any]) -> list[str]:
    if nominal(report):  # a labelled scale has no means: no section rather than an empty one
        return []
    out = ["## Means per dimension", ""]
    if report.get("dimensions"):
        out += [*md_table(means_table(report)), ""]
    excluded = report.get("excluded_dimensions") or {}
    if excluded:
        out += ["Excluded from the verdict: " + "; ".join(
            f"{md_code(d)} ({md(r)})" for d, r in excluded.items()) + ".", ""]
    sentence = uncertainty_sentence(report)
    if sentence:
        out += [md(sentence), ""]
    raters = rater_means_table(report)
    if raters.rows:
        title = "Each rater's means in the verdict pass"
        out += [f"**{title}**", "", *_folded(title, md_table(raters), len(raters.rows))]
    return out


def _md_raters(report: Mapping[str, Any]) -> list[str]:
    table = raters_table(report)
    if not table.rows:
        return []
    return ["## Raters", "", "Required raters must score every pass the verdict uses; optional raters "
            "add agreement data when they score.", "", *md_table(table), ""]


def agreement_settings(report: Mapping[str, Any]) -> str:
    """The one sentence that says how every κ on the page was computed."""
    ks = report.get("kappa_settings") or {}
    threshold = numfmt.kappa(ks.get("threshold")) if ks.get("threshold") is not None else DASH
    parts = [f"weights {ks.get('weights') or DASH} (from the full scale)", f"threshold {threshold}",
             f"κ per dimension: the {ks.get('aggregate') or DASH} over rater pairs"]
    if ks.get("bootstrap"):
        method = ks.get("interval_method") or "percentile"
        fallback = "; percentile where BCa is undefined" if method == "BCa" else ""
        level = numfmt.brief_percent(ks.get("confidence") or 0.95)
        parts.append(f"{level} {method} bootstrap intervals from {ks['bootstrap']} resamples (seed "
                     f"{ks.get('seed')}){fallback}")
    if nominal(report):  # unweighted κ and nominal α, whatever rules.kappa.weights says
        parts[0] = "no weights (a labelled scale: any two different labels disagree fully)"
        return "Settings: " + ", ".join(parts) + ". α is Krippendorff's α (nominal)."
    return "Settings: " + ", ".join(parts) + ". α is Krippendorff's α (ordinal)."


def agreement_title(report: Mapping[str, Any]) -> str:
    """κ is weighted on an ordinal scale only."""
    return "Agreement (κ)" if nominal(report) else "Agreement (weighted κ)"


def _md_agreement(report: Mapping[str, Any]) -> list[str]:
    out = [f"## {agreement_title(report)}", "", md(agreement_settings(report)), ""]
    coefficients = coefficient_tables(report)
    for pass_id, table in kappa_tables(report):
        tag = " (verdict pass)" if pass_id == report.get("verdict_pass") else ""
        blind = exploratory.blind_state(report, pass_id)
        if blind is not None:
            tag += " (blind)"
        out += [f"### Pass {md_code(pass_id)}{tag}", ""]
        if blind is not None and blind.get("state") != "unblinded":
            out += [f"⏳ {md(exploratory.blind_sentence(blind))}", ""]
            continue
        missing = kappa_missing(report, pass_id)
        if missing and withheld(report):  # every row would say the same: say it once
            out += [md(missing), ""]
            continue
        out += [*md_table(table), ""]
        notes = kappa_notes(report, pass_id)
        if notes:
            out += ["**Keep in mind:**", ""] + [f"- {md(n)}" for n in notes] + [""]
        beyond = coefficients.get(pass_id)
        if beyond is not None:
            out += [f"**Beyond κ** ({md(BEYOND_KAPPA)})", "", *md_table(beyond), ""]
    return out


def _md_cells(report: Mapping[str, Any]) -> list[str]:
    key_cells, other_cells = cell_tables(report)
    out = ["## Flagged and contested cells", ""]
    out += [*md_table(key_cells), ""] if key_cells.rows else ["No flagged or contested cells.", ""]
    if other_cells.rows:
        out += ["Other disagreements, resolved by the plan's rule:", "", *md_table(other_cells), ""]
    return out


def _md_reconciliation(report: Mapping[str, Any]) -> list[str]:
    """Each rater's own proposal per reconciled cell; open cells in full, unanimous ones folded
    when many; the rows ignored because someone else wrote them, with the fix."""
    if audit.reconciliation(report) is None:
        return []
    lines = ["## Reconciliation", "", md(audit.reconciliation_summary(report)), ""]
    note = audit.attribution_note(report)
    if note:
        lines += [f"⚠️ **Attribution not checked:** {md(note)}", ""]
    open_cells, agreed = audit.reconciliation_tables(report)
    counts = audit.state_counts(report)
    if open_cells.rows:
        lines += ["**Open cells** (contested: the verdict ranges over the values proposed; missing: no "
                  "consensus until every rater states their own value):", "", *md_table(open_cells), ""]
    if agreed.rows:
        n = counts.get("unanimous", 0)
        lines += _folded(f"{_plural(n, 'unanimous cell')}: each rater's proposal and quote",
                         ["**Unanimous cells:**", "", *md_table(agreed)], n)
    ignored = audit.unattributed_table(report)
    if ignored.rows:
        n = len(ignored.rows)
        lines += [f"⚠️ **{_plural(n, 'row')} ignored:** not written by the rater they name.", ""]
        lines += _folded(f"the {_plural(n, 'ignored row')}", md_table(ignored), n)
    return lines


def _md_self_bias(report: Mapping[str, Any]) -> list[str]:
    a, b = labels(report)
    flagged = sum(1 for e in report.get("self_bias") or [] if e.get("flagged"))
    out = ["## Self-bias", ""]
    out.append(f"{_plural(flagged, 'rater pass', 'rater passes')} flagged for re-audit (no cell with {md(b)} "
               f"scored worse than {md(a)})." if flagged else "No rater pass flagged for re-audit.")
    out.append("")
    table = self_bias_table(report)
    if table.rows:
        out += [*md_table(table), ""]
    return out


def _md_blinding(report: Mapping[str, Any]) -> list[str]:
    lines = ["## Blinding", ""]
    blinding = report.get("blinding")
    used = (blinding or {}).get("used") or report.get("b_scores_from")
    _, b = labels(report)
    if isinstance(blinding, Mapping):
        div = numfmt.mean(blinding.get("divergence"), blinding.get("divergence_exact"))
        thr = numfmt.mean(blinding.get("threshold"), blinding.get("threshold_exact"))
        q_div = numfmt.to_fraction(blinding.get("divergence"), blinding.get("divergence_exact"))
        q_thr = numfmt.to_fraction(blinding.get("threshold"), blinding.get("threshold_exact"))
        cmp = "vs" if q_div is None or q_thr is None else ("≤" if q_div <= q_thr else ">")
        lines.append(f"Mean |blinded − unblinded| divergence of {md(b)} scores (pass "
                     f"{md_code(blinding.get('pass') or DASH)}): **{div}** {cmp} threshold {thr}.")
    else:
        lines.append("The plan has no stripped pass; no blinding divergence was computed.")
    lines += ["", f"{md(b)} scores used for the verdict: pass {md_code(used or DASH)}.", ""]
    for blind in exploratory.blind_passes(report):
        mark = "✅" if blind.get("state") == "unblinded" else "⏳"
        lines += [f"{mark} **Blind pass** {md_code(blind.get('pass') or DASH)}: "
                  f"{md(exploratory.blind_sentence(blind))}", ""]
    return lines


def _md_exploratory_line(report: Mapping[str, Any]) -> list[str]:
    """One line under the verdict: the amendments' exploratory verdicts, pointing to their section."""
    entries = exploratory.amendments(report)
    if not entries:
        return []
    shown = "; ".join(f"{md_code(e.get('id'))} {VERDICT_MARKS.get(str(e.get('verdict')), '⚪')} "
                      f"{md(e.get('verdict') or DASH)}" for e in entries)
    return [f"🧪 **Exploratory, after amendments:** {shown}. The pre-registered verdict stays "
            f"**{md(report.get('verdict') or DASH)}** (see Amendments).", ""]


def _md_amendments(report: Mapping[str, Any]) -> list[str]:
    entries = exploratory.amendments(report)
    if not entries:
        return []
    lines = ["## Amendments (exploratory)", "", md(exploratory.INTRO), ""]
    for entry in entries:
        lines += _md_amendment(report, entry)
    return lines


def _md_amendment(report: Mapping[str, Any], entry: Mapping[str, Any]) -> list[str]:
    """One amendment: label and scope, its verdict beside the pre-registered one, what keeps it
    NOT-READY, then the rules, κ, re-scores and cell scores that moved."""
    verdict = str(entry.get("verdict") or "UNKNOWN")
    lines = [f"### 🧪 {md_code(entry.get('id') or DASH)}: {md(entry.get('title') or '')}", "",
             f"> **Exploratory** · {md(exploratory.scope_text(entry, report))}", "",
             f"{VERDICT_MARKS.get(verdict, '⚪')} {md(exploratory.status_line(entry))}", ""]
    if entry.get("rationale"):
        lines += [f"*Rationale:* {md(entry['rationale'])}", ""]
    not_ready = exploratory.not_ready_lines(entry)
    if not_ready:
        lines += ["**Not ready because:**", ""] + [f"- {md(r)}" for r in not_ready] + [""]
    lines += [*md_table(exploratory.comparison_table(report, entry)), ""]
    rules = exploratory.rules_table(entry)
    if rules.rows:
        lines += ["**Rules whose outcome moved:**", "", *md_table(rules), ""]
    kappa = exploratory.kappa_table(report, entry)
    if kappa.rows:
        lines += ["**Agreement on the amended dimensions:**", "", *md_table(kappa), ""]
    for table, title in ((exploratory.changed_cells_table(entry), exploratory.CHANGED_CELLS),
                         (exploratory.consensus_table(entry), exploratory.CONSENSUS_CHANGES)):
        n = len(table.rows)
        lines += [f"**{md(title)} ({n}):**" if n else f"{md(title)}: none.", ""]
        if n:
            lines += _folded(f"{title} ({n})", md_table(table), n)
    return lines


_SEAL_STATUS = {
    "complete": "✅ **complete**",
    "pending": "⏳ **pending**",
    "violated": "⛔ **violated**",
    "not-verified": "⚠️ **seals were not verified**",
    "unverifiable": "⚠️ **seals could not be verified**",
}


def _md_seals(report: Mapping[str, Any]) -> list[str]:
    seals = report.get("seals") or {}
    status = str(seals.get("status") or "not-verified")
    lines = ["## Seals", "", _SEAL_STATUS.get(status, f"**{md(status)}**")]
    if seals.get("message"):
        lines[-1] += f": {md(seals['message'])}"
    if status == "not-verified" and not seals.get("message"):
        lines[-1] += " (not a git repository, or verification was skipped)"
    lines.append("")
    vt = violations_table(report)
    if vt.rows:
        lines += [f"**Violations ({len(vt.rows)}):**", "", *md_table(vt), ""]
    if (provenance.source(report) or {}).get("work_tree") and seals.get("verified"):
        lines += ["These seals are those of the committed history; the uncommitted files this report "
                  "was computed from are not covered by them.", ""]
    lines += _md_excluded_line(report)
    forced = seals.get("forced_reveals") or []
    if forced:
        lines += ["**Forced reveals:**", ""] + [f"- {md(describe(f))}" for f in forced] + [""]
    anchors = audit.anchors_table(report)
    if anchors.rows:
        lines += ["**Time anchors** (RFC 3161 tokens):", "", *md_table(anchors), ""]
    events = audit.timeline_table(report)
    if events.rows:
        n = len(events.rows)
        lines += ["**Timeline** (in history order):", ""]
        lines += _folded(f"{_plural(n, 'commit')}: who sealed, revealed and reconciled", md_table(events), n)
    return lines


def _md_validation(report: Mapping[str, Any]) -> list[str]:
    val = report.get("validation")
    lines = ["## Validation", ""]
    if not isinstance(val, Mapping):
        return [*lines, "Score files were not validated.", ""]
    files = val.get("files") or []
    errors, warnings = val.get("errors") or 0, val.get("warnings") or 0
    mark = "✅" if val.get("ok") else "❌"
    lines += [f"{mark} {_plural(len(files), 'score file')}: {_plural(errors, 'error')}, "
              f"{_plural(warnings, 'warning')}.", ""]
    vt = validation_table(report)
    if vt.rows:
        lines += [*md_table(vt), ""]
    return lines


def _md_questions(report: Mapping[str, Any]) -> list[str]:
    a, b = labels(report)
    table = questions_table(report)
    if not table.rows:
        return ["## Questions", "", "No question aggregates.", ""]
    if nominal(report):
        return ["## Questions", "", md(designs.first_upper(NOMINAL_QUESTIONS.removeprefix("No chart: "))), "",
                *md_table(table), ""]
    return ["## Questions", "", f"Aggregate = sum over the counted dimensions; a question improves when "
            f"{md(b)} < {md(a)} on enough counted dimensions.", "", *md_table(table), ""]


def _md_checklist(report: Mapping[str, Any]) -> list[str]:
    """The reporting checklist (GRRAS); absent from documents written before it existed."""
    if report.get("reporting_checklist") is None:
        return []
    table = md_table(checklist_table(report))
    return ["## Reporting checklist", "", md(checklist_sentence(report)), "", *table, ""]


def _md_footer(report: Mapping[str, Any]) -> list[str]:
    footer = [md(report.get("generated_by") or "aoven-git")]
    if report.get("schema"):
        footer.append(f"schema {md_code(report['schema'])}")
    return ["---", "", "Generated by " + " · ".join(footer) + "."]


SECTIONS = (_md_title, _md_source, _md_heading, _md_why, _md_contest_and_retest, _md_exploratory_line,
            _md_rules, _md_protocol, _md_deviations, _md_means, _md_raters, _md_agreement, _md_cells,
            _md_reconciliation, _md_amendments, _md_self_bias, _md_blinding, _md_seals, _md_validation,
            _md_questions, _md_checklist, _md_footer)


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as GitHub-flavoured Markdown (job summary); no raw HTML but the `<details>`
    that fold long lists."""
    return "\n".join(line for section in SECTIONS for line in section(report)) + "\n"


def _fold_depths(lines: list[str]) -> list[int]:
    """How many `<details>` blocks are open after each line."""
    depths, depth = [], 0
    for line in lines:
        depth = max(0, depth + {"<details>": 1, "</details>": -1}.get(line.strip(), 0))
        depths.append(depth)
    return depths


def truncate_summary(markdown: str, limit_bytes: int = SUMMARY_LIMIT, *,
                     full_report: str = "the JSON and HTML report artifacts") -> str:
    """Keep a summary under GitHub's step-summary size limit (1 MiB), cutting at a line boundary.

    GitHub drops a step summary that is too large instead of shortening it, so the job would show
    nothing at all; a cut report with a pointer to the full one is better.
    """
    data = markdown.encode("utf-8")
    if len(data) <= limit_bytes:
        return markdown
    lines = markdown.splitlines(keepends=True)

    def note_for(kept: int) -> str:  # the note depends on how many lines survive
        return (f"\n\n> ⚠️ **Report truncated** after line {kept} of {len(lines)}: GitHub limits a job "
                f"summary to 1 MiB. The full report is in {full_report}.\n")

    fence_close = "\n```"
    details_close = "\n\n</details>"
    # room to close a code fence and the `<details>` blocks the cut would leave open
    reserve = len(fence_close) + len(details_close) * max(_fold_depths(lines), default=0)
    used, kept = 0, 0
    for line in lines:
        size = len(line.encode("utf-8"))
        if used + size + reserve + len(note_for(kept + 1).encode("utf-8")) > limit_bytes:
            break
        used += size
        kept += 1
    head = "".join(lines[:kept]).rstrip("\n")
    fences = sum(1 for ln in lines[:kept] if ln.lstrip().startswith(("```", "~~~")))
    if fences % 2:  # the note must not land inside an open code block
        head += fence_close
    head += details_close * ([0, *_fold_depths(lines)][kept])  # nor inside a fold, where nobody looks
    result = head + note_for(kept)
    encoded = result.encode("utf-8")
    if len(encoded) > limit_bytes:  # limit smaller than the note itself: cut on a character boundary
        result = encoded[:limit_bytes].decode("utf-8", "ignore")
    return result

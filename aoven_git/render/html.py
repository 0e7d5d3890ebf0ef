"""Self-contained HTML rendering of the report document.

One file, readable offline and archivable as a CI artifact: inline CSS, inline SVG charts, no
JavaScript, no fonts/images/links to fetch. A Content-Security-Policy meta tag makes the browser
refuse any external load or script, so even a mistake in escaping cannot turn a rater name into
running code. Tables are the same `Table` objects the Markdown renderer draws (tables.py), numbers
come from numfmt.py, and each section of the page is one function here, in page order.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from aoven_git import numfmt
from aoven_git.numfmt import DASH
from aoven_git.render import audit, designs, exploratory, provenance
from aoven_git.render.markdown import BEYOND_KAPPA, agreement_settings, agreement_title
from aoven_git.render.svg import (
    amendment_chart,
    conditions_chart,
    criterion_chart,
    kappa_chart,
    means_chart,
    questions_chart,
)
from aoven_git.render.tables import (
    WITHHELD,
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
    mean_conditions,
    means_missing,
    means_table,
    nominal,
    questions_missing,
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

__all__ = ["render_html"]

VERDICT_CLASS = {
    "PASS": "pass",
    "FAIL": "fail",
    "INCONCLUSIVE": "amber",
    "CONTESTED": "amber",
    "NOT-READY": "grey",
}

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

CSS = """
:root {
  --ink: #1f2933; --muted: #5f6b7a; --line: #dde2e8; --bg: #ffffff; --soft: #f6f7f9;
  --good: #2f7d4f; --good-bg: #e7f4ec; --bad: #b83232; --bad-bg: #fbeaea;
  --warn: #9a6100; --warn-bg: #fff3dc; --grey: #4b5563; --grey-bg: #eef0f3;
  --a: #d08a00; --b: #0072b2;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", "Liberation Sans",
        "DejaVu Sans", Arial, sans-serif;
}
main { max-width: 1080px; margin: 0 auto; padding: 28px 24px 48px; }
h1 { font-size: 1.55rem; margin: 0 0 2px; letter-spacing: -0.01em; }
h2 { font-size: 1.2rem; margin: 36px 0 10px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 22px 0 8px; }
p { margin: 6px 0 10px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono",
              "DejaVu Sans Mono", monospace; font-size: 0.88em; }
.meta { color: var(--muted); margin: 0; }
.meta span + span::before { content: " · "; }
.verdict { margin: 20px 0 8px; border-radius: 10px; padding: 18px 22px; border: 1px solid;
           border-left-width: 8px; }
.verdict .badge { display: inline-block; font-weight: 700; font-size: 1.45rem; letter-spacing: 0.04em;
                  padding: 2px 14px; border-radius: 6px; color: #fff; }
.verdict .label { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.08em; color: var(--muted);
                  margin-right: 10px; }
.verdict .summary { font-size: 1.08rem; margin: 12px 0 6px; }
.verdict ol, .verdict ul { margin: 6px 0 0; padding-left: 22px; }
.verdict h3 { margin: 12px 0 2px; font-size: 0.9rem; }
.v-pass { background: var(--good-bg); border-color: var(--good); }
.v-pass .badge { background: var(--good); }
.v-fail { background: var(--bad-bg); border-color: var(--bad); }
.v-fail .badge { background: var(--bad); }
.v-amber { background: var(--warn-bg); border-color: #c98a12; }
.v-amber .badge { background: #b7740a; }
.v-grey { background: var(--grey-bg); border-color: var(--grey); }
.v-grey .badge { background: var(--grey); }
.terminal { font-weight: 600; color: var(--bad); }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px;
           margin: 14px 0; }
.figure { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; background: var(--soft); }
.figure .k { font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.07em; color: var(--muted); }
.figure .v { font-size: 1.35rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.figure .s { font-size: 0.8rem; color: var(--muted); }
nav.toc { font-size: 0.9rem; margin: 10px 0 0; display: flex; flex-wrap: wrap; gap: 4px 14px; }
nav.toc a { color: var(--b); text-decoration: none; white-space: nowrap; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; margin: 8px 0 14px; }
table { border-collapse: collapse; width: 100%; font-size: 0.88rem; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 9px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; border-bottom: 2px solid var(--line); }
td code { white-space: nowrap; }
table.kappa td.t-warn { min-width: 16em; }
td.num, th.num { text-align: right; white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fbfcfd; }
.t-good { color: var(--good); font-weight: 600; }
.t-bad { color: var(--bad); font-weight: 600; }
.t-warn { color: var(--warn); font-weight: 600; }
.t-muted { color: var(--muted); }
.note { color: var(--muted); font-size: 0.9rem; }
ul.caveats { margin: 4px 0 14px; padding-left: 22px; color: var(--warn); font-size: 0.9rem; }
td.text { min-width: 14em; }
.status { display: inline-block; padding: 1px 10px; border-radius: 999px; font-weight: 600;
          font-size: 0.9rem; }
.s-good { background: var(--good-bg); color: var(--good); }
.s-bad { background: var(--bad-bg); color: var(--bad); }
.s-warn { background: var(--warn-bg); color: var(--warn); }
.s-grey { background: var(--grey-bg); color: var(--grey); }
figure.chart-box { margin: 10px 0 16px; border: 1px solid var(--line); border-radius: 8px; padding: 8px;
                   overflow-x: auto; }
figure.chart-box figcaption { font-size: 0.85rem; color: var(--muted); padding: 2px 6px 0; }
svg.chart { display: block; width: 100%; height: auto; min-width: 560px; font-family: inherit; }
svg.chart text { font-size: 12px; }
svg.chart text:not([fill]) { fill: var(--ink); }
svg.chart text.legend:not([fill]), svg.chart text.tick:not([fill]),
svg.chart text.axis-title:not([fill]), svg.chart text.value:not([fill]) { fill: var(--muted); }
svg.chart text.value { font-size: 10px; }
svg.chart text.sub, svg.chart text.kappa-status, svg.chart text.threshold-label { font-size: 11px; }
svg.chart text.cat, svg.chart text.kappa-value { font-weight: 600; }
svg.chart text.kappa-undefined { font-style: italic; }
.source { font-size: 0.88rem; margin-top: 2px; }
.source code[title] { text-decoration: underline dotted; cursor: help; }
.banner { margin: 14px 0 0; border-radius: 8px; padding: 12px 18px; border: 1px solid;
          border-left-width: 8px; }
.banner strong { display: block; font-size: 1.05rem; }
.banner ul { margin: 6px 0 0; padding-left: 22px; }
.b-bad { background: var(--bad-bg); border-color: var(--bad); color: var(--bad); }
.b-bad p, .b-bad li { color: var(--ink); }
.b-warn { background: var(--warn-bg); border-color: #c98a12; color: var(--warn); }
.b-warn p { color: var(--ink); }
ul.deviations li { margin: 2px 0; }
details { margin: 6px 0 14px; }
details > summary { cursor: pointer; color: var(--muted); font-size: 0.9rem; }
table.timeline { font-size: 0.82rem; width: auto; min-width: 60%; }
table.timeline td, table.timeline th { padding: 3px 9px; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(240px, 1fr)); gap: 10px;
        margin: 10px 0; }
.pair .verdict { margin: 0; padding: 10px 16px; border-left-width: 6px; }
.pair .verdict .badge { font-size: 1.1rem; }
.tag { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 0.75rem; font-weight: 700;
       letter-spacing: 0.06em; text-transform: uppercase; background: var(--warn-bg); color: var(--warn);
       border: 1px solid #c98a12; vertical-align: middle; }
.exploratory-note { margin: 8px 0 0; padding: 8px 14px; border: 1px dashed #c98a12; border-radius: 8px;
                    background: var(--warn-bg); }
section.amendment { border-top: 1px dashed var(--line); margin-top: 18px; }
footer { margin-top: 40px; color: var(--muted); font-size: 0.85rem; border-top: 1px solid var(--line);
         padding-top: 10px; }
@media (max-width: 640px) {
  main { padding: 16px 12px 32px; }
  body { font-size: 14px; }
  .verdict { padding: 14px; }
}
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  nav.toc { display: none; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  h2 { break-after: avoid; }
  figure.chart-box, .verdict, tr { break-inside: avoid; }
  .scroll, figure.chart-box { overflow: visible; }
  svg.chart { min-width: 0; }
}
"""


#: added to the page of a design only (criteria and a decision), so a seed page stays as it was
DESIGN_CSS = """
.verdict .decision { font-size: 1.15rem; margin: 12px 0 4px; }
.verdict .decision .label { display: inline; }
table.criteria td:nth-child(3) { min-width: 16em; }
table.criteria td:nth-child(4) { min-width: 12em; }
section.criterion { border-top: 1px dashed var(--line); margin-top: 18px; }
section.criterion h3 .status { margin-left: 8px; font-size: 0.8rem; vertical-align: middle; }
svg.chart text.criterion-status, svg.chart text.criterion-undefined { font-size: 11px; font-weight: 600; }
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _cell(cell: Cell, tag: str = "td") -> str:
    classes = []
    if cell.num:
        classes.append("num")
    if cell.tone:
        classes.append(f"t-{cell.tone}")
    attr = f' class="{" ".join(classes)}"' if classes else ""
    body = _e(cell.text)
    if cell.code and cell.text not in ("", DASH):
        body = f"<code>{body}</code>"
    return f"<{tag}{attr}>{body}</{tag}>"


def _table(table: Table, cls: str = "") -> str:
    """The table's notes as paragraphs, then the table in a horizontally scrolling box."""
    notes = "".join(f'<p class="note">{_e(n)}</p>\n' for n in table.notes)
    head = "".join(
        f'<th scope="col"{" class=num" if i in table.numeric else ""}>{_e(h)}</th>'
        for i, h in enumerate(table.headers)
    )
    body = "\n".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in table.rows)
    klass = f' class="{_e(cls)}"' if cls else ""
    return (f'{notes}<div class="scroll"><table{klass}>\n<thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody></table></div>")


def _code(text: Any) -> str:
    return f"<code>{_e(text)}</code>"


def _figure(svg: str, caption: str) -> str:
    return f'<figure class="chart-box">\n{svg}\n<figcaption>{_e(caption)}</figcaption>\n</figure>'


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _fold(summary: str, body: str, rows: int) -> str:
    """`body` as is when short, else inside a `<details>` with `summary` (no script needed)."""
    if rows <= audit.FOLD_AFTER:
        return body
    return f"<details><summary>{_e(summary)}</summary>\n{body}\n</details>"


def _list(items: list[str], tag: str = "ul", cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f"<{tag}{klass}>" + "".join(f"<li>{_e(i)}</li>" for i in items) + f"</{tag}>"


# --------------------------------------------------------------------------- verdict


def _verdict_block(report: Mapping[str, Any]) -> str:
    verdict = str(report.get("verdict") or "UNKNOWN")
    klass = VERDICT_CLASS.get(verdict, "grey")
    parts = [f'<section class="verdict v-{klass}" id="verdict" aria-label="Verdict">',
             f'<span class="label">Verdict</span><span class="badge">{_e(verdict)}</span>']
    line = designs.decision_line(report)
    if line is not None:
        parts.append(f'<p class="decision" id="decision-line"><span class="label">Decision</span>'
                     f"<strong>{_e(line)}</strong></p>")
    if report.get("summary"):
        parts.append(f'<p class="summary">{_e(report["summary"])}</p>')
    sentence = rules_sentence(report)
    if sentence:
        parts.append(f'<p class="rules-sentence"><strong>Rules:</strong> {_e(sentence)}</p>')
    parts += _design_sentences(report)
    if report.get("terminal"):
        parts.append('<p class="terminal">Terminal: a second inconclusive round; study v0.1 ends here.</p>')
    reasons = [r for r in report.get("reasons") or [] if r not in (None, "")]
    if reasons:
        parts.append("<h3>Why</h3>" + _list(reasons, "ol"))
    if report.get("not_ready"):
        parts.append("<h3>Not ready because</h3>" + _list(list(report["not_ready"])))
    pending = {p: rs for p, rs in (report.get("pending_raters") or {}).items() if rs}
    if pending:
        parts.append("<p><strong>Pending raters:</strong> " + "; ".join(
            f"pass {_code(p)}: " + ", ".join(_code(r) for r in rs) for p, rs in pending.items()) + "</p>")
    parts += _verdict_notes(report)
    parts += _contest_and_retest(report)
    parts.append("</section>")
    return "\n".join(parts)


def _design_sentences(report: Mapping[str, Any]) -> list[str]:
    """A design's headline: the decision in one sentence, then the criteria met and not met."""
    said = designs.decision_sentence(report)
    if said is None:
        return []
    parts = [f'<p class="decision-sentence">{_e(said)}</p>']
    criteria = designs.criteria_sentence(report)
    if criteria:
        parts.append(f'<p class="criteria-sentence"><strong>Criteria:</strong> {_e(criteria)}</p>')
    return parts


def _verdict_notes(report: Mapping[str, Any]) -> list[str]:
    """Excluded raters, caveats, ignored reconciliation rows, plan deviations: one line each."""
    parts = []
    parts += _excluded_line(report)
    caveats = caveat_summary(report)
    if caveats:
        parts.append(f'<p class="t-warn"><strong>Caveats:</strong> {_e(caveats)}.</p>')
    ignored = len(audit.unattributed(report))
    if ignored:
        parts.append(f'<p class="t-warn"><strong>Reconciliation:</strong> {_plural(ignored, "row")} ignored '
                     "because someone other than the rater it names wrote it (see "
                     '<a href="#reconciliation">Reconciliation</a>).</p>')
    late = provenance.after_reveal_summary(report)
    if late:
        parts.append(f'<p class="t-warn"><strong>Protocol:</strong> {_e(late)} '
                     '(see <a href="#protocol">Protocol deviations</a>).</p>')
    departures = provenance.deviation_summary(report)
    if departures:
        parts.append(f"<p><strong>Plan:</strong> {_e(departures)} "
                     '(see <a href="#deviations">Deviations</a>).</p>')
    return parts


def _excluded_line(report: Mapping[str, Any]) -> list[str]:
    found = audit.excluded_sentence(report)
    if found is None:
        return []
    raters, meaning = found
    who = "; ".join(_code(r) + (f" ({_e(codes)})" if codes else "") for r, codes in raters)
    return [f"<p><strong>Excluded raters:</strong> {who}: {_e(meaning)}.</p>"]


def _contest_and_retest(report: Mapping[str, Any]) -> list[str]:
    parts = []
    extremes = report.get("extremes")
    if isinstance(extremes, Mapping):
        items = []
        for key, label in (("best", "best case for B"), ("worst", "worst case for B")):
            e = extremes.get(key) or {}
            items.append(f"<li>{label}: <strong>{_e(e.get('verdict') or DASH)}</strong> (improvement "
                         f"{_e(numfmt.percent(e.get('improvement'), e.get('improvement_exact')))})</li>")
        parts.append("<h3>Contested cells at both extremes</h3><ul>" + "".join(items) + "</ul>")
    robust = report.get("robust_to_contested")
    if isinstance(robust, int) and robust > 0:
        parts.append(f"<p>The verdict is robust to {robust} contested cell{'s' if robust != 1 else ''}.</p>")
    retest = report.get("retest")
    if isinstance(retest, Mapping):
        refs = ", ".join(_code(r) for r in retest.get("refinements") or []) or "none"
        parts.append(f"<p><strong>Re-test round</strong> {_code(retest.get('round') or DASH)}; "
                     f"refinements: {refs}</p>")
        if retest.get("problems"):
            items = "".join(f'<li class="t-warn">{_e(p)}</li>' for p in retest["problems"])
            parts.append(f"<ul>{items}</ul>")
    return parts


def _figures(report: Mapping[str, Any]) -> str:
    if is_design(report):
        return _cards(_design_figures(report))
    a, b = labels(report)
    means, means_exact = report.get("means") or {}, report.get("means_exact") or {}
    rules = {r.get("id"): r for r in report.get("rules") or []}
    thr = rules.get("pass.improvement", {})
    seals = report.get("seals") or {}
    ks = report.get("kappa_settings") or {}
    raters = sorted({r for rs in (report.get("raters") or {}).values() for r in rs or []})
    items = [
        ("Improvement", held(report, report.get("improvement"),
                             numfmt.percent(report.get("improvement"), report.get("improvement_exact"))),
         f"pass needs ≥ {numfmt.percent(thr.get('threshold'), thr.get('threshold_exact'))}" if thr else ""),
        (f"Mean {a}", held(report, means.get(a), numfmt.mean(means.get(a), means_exact.get(a))),
         "aggregate, baseline"),
        (f"Mean {b}", held(report, means.get(b), numfmt.mean(means.get(b), means_exact.get(b))),
         "aggregate, treatment"),
        ("Counted dimensions",
         f"{len(report.get('counted_dimensions') or [])} / {len(report.get('dimensions') or [])}",
         f"κ ≥ {numfmt.kappa(ks.get('threshold'))}" if ks.get("threshold") is not None else ""),
        ("Raters", str(len(raters)), ", ".join(raters)),
        ("Seals", str(seals.get("status") or "not-verified"), _seal_note(report)),
    ]
    return _cards(items)


def _cards(items: list[tuple[str, str, str]]) -> str:
    cards = "".join(f'<div class="figure"><div class="k">{_e(k)}</div><div class="v">{_e(v)}</div>'
                    f'<div class="s">{_e(s)}</div></div>' for k, v, s in items)
    return f'<section class="figures" aria-label="Key figures">{cards}</section>'


def _design_figures(report: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """A design's key figures: the decision and the criteria first; the improvement and the
    means only on an ordinal scale, and the improvement only when the document has one."""
    d, found = designs.decision(report), designs.criteria(report)
    status = str(d.get("status") or "undecided")
    line = designs.decision_line(report) or DASH
    decided = status == "decided"
    outcomes = [str(c.get("outcome")) for c in found]
    held_, fails = outcomes.count("holds"), outcomes.count("fails")
    items = [("Decision", str(d.get("then") or DASH) if decided else status, line.split(" — ", 1)[-1]),
             ("Criteria hold", WITHHELD if designs.not_ready(report) else f"{held_} / {len(found)}",
              f"{fails} fail, {len(found) - held_ - fails} open")]
    if not nominal(report):
        if report.get("improvement") is not None or withheld(report):
            a, b = labels(report)
            items.append(("Improvement", held(report, report.get("improvement"), numfmt.percent(
                report.get("improvement"), report.get("improvement_exact"))), f"{b} against {a}"))
        means, exact = report.get("means") or {}, report.get("means_exact") or {}
        items += [(f"Mean {c}", held(report, v, numfmt.mean(v, exact.get(c))), "aggregate")
                  for c, v in means.items()]
    ks, seals = report.get("kappa_settings") or {}, report.get("seals") or {}
    raters = sorted({r for rs in (report.get("raters") or {}).values() for r in rs or []})
    counted = f"{len(report.get('counted_dimensions') or [])} / {len(report.get('dimensions') or [])}"
    return [
        *items,
        ("Counted dimensions", counted,
         f"κ ≥ {numfmt.kappa(ks.get('threshold'))}" if ks.get("threshold") is not None else ""),
        ("Raters", str(len(raters)), ", ".join(raters)),
        ("Seals", str(seals.get("status") or "not-verified"), _seal_note(report))]


def _seal_note(report: Mapping[str, Any]) -> str:
    if not (report.get("seals") or {}).get("verified"):
        return "not verified"
    if (provenance.source(report) or {}).get("work_tree"):
        return "history verified; not the uncommitted files"
    return "verified from git history"


# --------------------------------------------------------------------------- sections


def _rules(report: Mapping[str, Any]) -> str:
    return _table(rules_table(report), "rules")


def _decision(report: Mapping[str, Any]) -> str:
    """The decision table, each row with its outcome; what blocks an open decision, and why."""
    body = [f'<p class="note">{_e(designs.DECISION_RULE)}</p>',
            _table(designs.decision_table(report), "decision")]
    d = designs.decision(report)
    blocking = [str(b) for b in d.get("blocking") or []]
    if blocking:
        body.append("<p><strong>Blocked by:</strong> " + ", ".join(_code(b) for b in blocking) + "</p>")
    reasons = [str(r) for r in d.get("reasons") or [] if r]
    if reasons:
        body.append("<h3>Why</h3>" + _list(reasons, "ol"))
    return "\n".join(body)


def _criteria(report: Mapping[str, Any]) -> str:
    """The criteria table, then each criterion with its chart and its values key by key."""
    body = [f"<p>{_e(designs.first_upper(designs.criteria_sentence(report) or ''))}</p>",
            _table(designs.criteria_table(report), "criteria")]
    if designs.not_ready(report):  # one sentence for every chart: nothing to draw while withheld
        body.append('<p class="note">No charts: the criteria values are withheld while the verdict is '
                    "NOT-READY.</p>")
        return "\n".join(body)
    for i, criterion in enumerate(designs.criteria(report), 1):
        body.append(_criterion(report, criterion, i))
    return "\n".join(body)


def _criterion(report: Mapping[str, Any], criterion: Mapping[str, Any], i: int) -> str:
    """One criterion: its outcome, chart (or why none), values, reasons and contested extremes."""
    label, tone, _ = designs.outcome_of(criterion)
    status = {"good": "s-good", "bad": "s-bad", "warn": "s-warn"}.get(tone or "", "s-grey")
    out = [f'<section class="criterion" id="criterion-{i}">',
           f"<h3>{_code(criterion.get('id') or DASH)} {_e(criterion.get('text') or '')}"
           f'<span class="status {status}">{_e(label)}</span></h3>']
    missing = designs.chart_missing(report, criterion)
    if missing:
        out.append(f'<p class="note">{_e(missing)}</p>')
    else:
        sign = designs.signed(criterion)
        shown = [designs.value_text(v, x, signed=sign) for _, v, x, _ in designs.values(criterion)]
        bound = designs.bound_text(criterion.get("bound"))
        chart = criterion_chart(criterion, svg_id=f"chart-criterion-{i}", shown=shown, bound_said=bound)
        out.append(_figure(chart, f"{criterion.get('id')}: one bar per value from zero; dashed: the bound "
                                  f"{bound}; {designs.satisfied_text(report, criterion)}."))
    if criterion.get("kind") == "seed":
        out.append(_table(designs.seed_rules_table(criterion), "rules"))
    else:
        out.append(_table(designs.values_table(report, criterion), "criterion-values"))
    passes = [str(p) for p in criterion.get("passes") or []]
    if passes:
        read = ", ".join(_code(p) for p in passes)
        out.append(f'<p class="note">Reads the consensus cells of pass {read}.</p>')
    extremes = designs.extremes_text(criterion)
    if extremes:
        out.append(f'<p class="t-warn"><strong>Contested cells at their extremes:</strong> '
                   f"{_e(extremes)}.</p>")
    reasons = [str(r) for r in criterion.get("reasons") or [] if r]
    if reasons:
        out.append(_list(reasons, cls="caveats"))
    out.append("</section>")
    return "\n".join(out)


def _protocol(report: Mapping[str, Any]) -> str:
    """Protocol events, then the descriptive edits in one line."""
    out = [f"<p>{_e(provenance.protocol_intro(report))}</p>"]
    table = provenance.protocol_table(report)
    if table.rows:
        out.append(_table(table, "protocol"))
    descriptive = provenance.descriptive_line(report)
    if descriptive:
        out.append(f'<p class="note">{_e(descriptive)}</p>')
    return "\n".join(out)


def _deviations(report: Mapping[str, Any]) -> str:
    found = provenance.deviations(report) or []
    protocol = [d for d in found if not d.descriptive]
    intro = f"<p>{_e(provenance.deviations_intro(len(protocol), len(found) - len(protocol)))}</p>"
    descriptive = provenance.descriptive_defaults(found)
    tail = f'\n<p class="note">{_e(descriptive)}</p>' if descriptive else ""
    if not protocol:
        return intro + tail
    items = "".join(f"<li>{_code(d.path)}: {_e(d.text)}" + (f' <span class="note">· line {d.line}</span>'
                                                             if d.line is not None else "") + "</li>"
                    for d in protocol)
    n = len(protocol)
    listed = _fold(f"{_plural(n, 'departure')} from the defaults", f'<ul class="deviations">{items}</ul>', n)
    return f"{intro}\n{listed}{tail}"


def _means(report: Mapping[str, Any]) -> str:
    a, b = labels(report)
    conds = mean_conditions(report)
    if len(conds) > 2:  # a design's conditions: every one of them, not only the seed's pair
        caption = (f"Mean score per dimension, {', '.join(conds)} (lower is better; hover a bar for its "
                   "value). Faded bars on a grey band: excluded from the verdict.")
        chart = partial(conditions_chart, report, conds)
    else:
        caption = (f"Mean score per dimension, {a} vs {b} (lower is better). "
                   "Faded bars on a grey band: excluded from the verdict.")
        chart = partial(means_chart, report)
    out = _chart_or_why(means_missing(report), lambda: _figure(chart(), caption), means_table(report),
                        "means")
    sentence = uncertainty_sentence(report)
    if sentence:
        out += f'\n<p class="note">{_e(sentence)}</p>'
    raters = rater_means_table(report)
    if raters.rows:
        title = "Each rater's means in the verdict pass"
        folded = _fold(title, _table(raters, "means"), len(raters.rows))
        out += f"\n<p><strong>{_e(title)}</strong></p>\n" + folded
    return out


def _raters(report: Mapping[str, Any]) -> str:
    table = raters_table(report)
    if not table.rows:
        return '<p class="note">No raters listed.</p>'
    return ('<p class="note">Required raters must score every pass the verdict uses; optional raters add '
            "agreement data when they score.</p>\n" + _table(table, "raters"))


def _agreement(report: Mapping[str, Any]) -> str:
    body = [f'<p class="note">{_e(agreement_settings(report))}</p>']
    coefficients = coefficient_tables(report)
    for i, (pass_id, table) in enumerate(kappa_tables(report)):
        tag = " (verdict pass)" if pass_id == report.get("verdict_pass") else ""
        blind = exploratory.blind_state(report, pass_id)
        tag += " (blind)" if blind is not None else ""
        if blind is not None and blind.get("state") != "unblinded":
            body += [f"<h3>Pass {_code(pass_id)}{_e(tag)}</h3>",
                     f'<p class="t-warn">{_e(exploratory.blind_sentence(blind))}</p>']
            continue
        svg_id = "chart-kappa" if i == 0 else f"chart-kappa-{i + 1}"
        missing = kappa_missing(report, pass_id)
        body.append(f"<h3>Pass {_code(pass_id)}{_e(tag)}</h3>")
        if missing:  # no chart of empty rows; the table too when every row would say the same
            body.append(f'<p class="note">{_e(missing)}</p>')
            if withheld(report):
                continue
        else:
            body.append(_figure(kappa_chart(report, pass_id, svg_id=svg_id),
                                f"Weighted κ per dimension, pass {pass_id}; dashed line: threshold."))
        body.append(_table(table, "kappa"))
        notes = kappa_notes(report, pass_id)
        if notes:
            body.append("<p><strong>Keep in mind:</strong></p>" + _list(notes, cls="caveats"))
        beyond = coefficients.get(pass_id)
        if beyond is not None:
            body += [f"<p><strong>Beyond κ</strong> ({_e(BEYOND_KAPPA)})</p>", _table(beyond, "kappa")]
    return "\n".join(body)


def _cells(report: Mapping[str, Any]) -> str:
    key_cells, other_cells = cell_tables(report)
    none = '<p class="note">No flagged or contested cells.</p>'
    body = [_table(key_cells, "cells") if key_cells.rows else none]
    if other_cells.rows:
        body += ["<h3>Other disagreements, resolved by the plan's rule</h3>", _table(other_cells, "cells")]
    return "\n".join(body)


def _reconciliation(report: Mapping[str, Any]) -> str:
    """Each rater's own proposal per reconciled cell, and the rows ignored because someone else
    wrote them (the same tables as the Markdown)."""
    body = [f"<p>{_e(audit.reconciliation_summary(report))}</p>"]
    note = audit.attribution_note(report)
    if note:
        body.append(f'<p class="t-warn"><strong>Attribution not checked:</strong> {_e(note)}</p>')
    open_cells, agreed = audit.reconciliation_tables(report)
    if open_cells.rows:
        body += ["<h3>Open cells</h3>", '<p class="note">Contested: the verdict ranges over the values '
                 "proposed. Missing: no consensus until every rater states their own value.</p>",
                 _table(open_cells, "reconciliation")]
    if agreed.rows:
        n = audit.state_counts(report).get("unanimous", 0)
        summary = f"{_plural(n, 'unanimous cell')}: each rater's proposal and quote"
        body += ["<h3>Unanimous cells</h3>", _fold(summary, _table(agreed, "reconciliation"), n)]
    ignored = audit.unattributed_table(report)
    if ignored.rows:
        n = len(ignored.rows)
        body += [f"<h3>Ignored rows ({n})</h3>",
                 _fold(f"the {_plural(n, 'ignored row')}", _table(ignored, "unattributed"), n)]
    return "\n".join(body)


def _self_bias(report: Mapping[str, Any]) -> str:
    a, b = labels(report)
    flagged = sum(1 for e in report.get("self_bias") or [] if e.get("flagged"))
    body = [f"<p>{flagged} rater pass{'es' if flagged != 1 else ''} flagged for re-audit (no cell with "
            f"{_e(b)} scored worse than {_e(a)}).</p>" if flagged
            else "<p>No rater pass flagged for re-audit.</p>"]
    table = self_bias_table(report)
    if table.rows:
        body.append(_table(table, "self-bias"))
    return "\n".join(body)


def _blinding(report: Mapping[str, Any]) -> str:
    blinding = report.get("blinding")
    _, b = labels(report)
    used = (blinding or {}).get("used") or report.get("b_scores_from")
    if isinstance(blinding, Mapping):
        q_div = numfmt.to_fraction(blinding.get("divergence"), blinding.get("divergence_exact"))
        q_thr = numfmt.to_fraction(blinding.get("threshold"), blinding.get("threshold_exact"))
        cmp = "vs" if q_div is None or q_thr is None else ("≤" if q_div <= q_thr else ">")
        div = numfmt.mean(blinding.get("divergence"), blinding.get("divergence_exact"))
        thr = numfmt.mean(blinding.get("threshold"), blinding.get("threshold_exact"))
        first = (f"<p>Mean |blinded − unblinded| divergence of {_e(b)} scores (pass "
                 f"{_code(blinding.get('pass') or DASH)}): <strong>{_e(div)}</strong> {cmp} "
                 f"threshold {_e(thr)}.</p>")
    else:
        first = "<p>The plan has no stripped pass; no blinding divergence was computed.</p>"
    blind = "".join(f'\n<p class="{"t-good" if e.get("state") == "unblinded" else "t-warn"}"><strong>Blind '
                    f"pass</strong> {_code(e.get('pass') or DASH)}: {_e(exploratory.blind_sentence(e))}</p>"
                    for e in exploratory.blind_passes(report))
    return first + f"\n<p>{_e(b)} scores used for the verdict: pass {_code(used or DASH)}.</p>" + blind


def _exploratory_note(report: Mapping[str, Any]) -> str:
    """One line under the verdict: the amendments' exploratory verdicts, linked to their section."""
    entries = exploratory.amendments(report)
    if not entries:
        return ""
    shown = "; ".join(f"{_code(e.get('id'))} <strong>{_e(e.get('verdict') or DASH)}</strong>"
                      for e in entries)
    return (f'<p class="exploratory-note"><span class="tag">exploratory</span> After amendments: {shown}. '
            f"The pre-registered verdict stays <strong>{_e(report.get('verdict') or DASH)}</strong> "
            '(see <a href="#amendments">Amendments</a>).</p>')


def _verdict_card(verdict: Any, label: str, text: str) -> str:
    name = str(verdict or "UNKNOWN")
    return (f'<div class="verdict v-{VERDICT_CLASS.get(name, "grey")}"><span class="label">{_e(label)}</span>'
            f'<span class="badge">{_e(name)}</span><p class="summary">{_e(text)}</p></div>')


def _amendments(report: Mapping[str, Any]) -> str:
    body = [f'<p class="note">{_e(exploratory.INTRO)}</p>']
    for i, entry in enumerate(exploratory.amendments(report)):
        body.append(_amendment(report, entry, f"chart-amendment-{i + 1}"))
    return "\n".join(body)


def _amendment(report: Mapping[str, Any], entry: Mapping[str, Any], svg_id: str) -> str:
    """One amendment: label and scope, both verdicts side by side, what keeps it NOT-READY, the
    means chart, then the rules, κ, re-scores and cell scores that moved."""
    ident = str(entry.get("id") or DASH)
    reasons = [str(r) for r in entry.get("reasons") or [] if r] or [str(entry.get("summary") or "")]
    pre = _verdict_card(report.get("verdict"), "pre-registered", str(report.get("summary") or ""))
    out = [f'<section class="amendment" id="amendment-{_e(ident)}">',
           f'<h3><span class="tag">exploratory</span> {_code(ident)}: {_e(entry.get("title") or "")}</h3>',
           f'<p class="note">{_e(exploratory.scope_text(entry, report))}</p>',
           f'<div class="pair">{pre}{_verdict_card(entry.get("verdict"), "exploratory", reasons[0])}</div>']
    if entry.get("rationale"):
        out.append(f"<p><strong>Rationale:</strong> {_e(entry['rationale'])}</p>")
    if exploratory.not_ready_lines(entry):
        out.append("<p><strong>Not ready because:</strong></p>" + _list(exploratory.not_ready_lines(entry)))
    out.append(_table(exploratory.comparison_table(report, entry), "comparison"))
    a, b = labels(report)
    missing = exploratory.chart_missing(report, entry)
    out.append(f'<p class="note">{_e(missing)}</p>' if missing else _figure(
        amendment_chart(report, entry, svg_id=svg_id),
        f"Mean score per dimension, {a} and {b}: pre-registered (faded) and with {ident} "
        "(solid); amended dimensions on an amber band, ▼ where cells moved."))
    for table, title in ((exploratory.rules_table(entry), "Rules whose outcome moved"),
                         (exploratory.kappa_table(report, entry), "Agreement on the amended dimensions"),
                         (exploratory.changed_cells_table(entry), exploratory.CHANGED_CELLS),
                         (exploratory.consensus_table(entry), exploratory.CONSENSUS_CHANGES)):
        if table.rows:
            n = len(table.rows)
            out += [f"<h4>{_e(title)} ({n})</h4>", _fold(f"{title} ({n})", _table(table, "amendment"), n)]
    out.append("</section>")
    return "\n".join(out)


_SEAL_CLASS = {"complete": "s-good", "pending": "s-warn", "violated": "s-bad", "not-verified": "s-grey",
               "unverifiable": "s-warn"}
_SEAL_TEXT = {"complete": "complete", "pending": "pending", "violated": "violated",
              "not-verified": "seals were not verified", "unverifiable": "seals could not be verified"}


def _seals(report: Mapping[str, Any]) -> str:
    seals = report.get("seals") or {}
    status = str(seals.get("status") or "not-verified")
    out = [f'<p><span class="status {_SEAL_CLASS.get(status, "s-grey")}">{_e(_SEAL_TEXT.get(status, status))}'
           f"</span> {_e(seals.get('message') or '')}</p>"]
    if status == "not-verified" and not seals.get("message"):
        out.append('<p class="note">Not a git repository, or verification was skipped.</p>')
    vt = violations_table(report)
    if vt.rows:
        out.append(f"<h3>Violations ({len(vt.rows)})</h3>" + _table(vt))
    if (provenance.source(report) or {}).get("work_tree") and seals.get("verified"):
        out.append('<p class="note">These seals are those of the committed history; the uncommitted files '
                   "this report was computed from are not covered by them.</p>")
    out += _excluded_line(report)
    forced = seals.get("forced_reveals") or []
    if forced:
        out.append("<h3>Forced reveals</h3>" + _list([describe(f) for f in forced]))
    anchors = audit.anchors_table(report)
    if anchors.rows:
        out += ["<h3>Time anchors</h3>", '<p class="note">RFC 3161 tokens: the commit each fixes, by '
                "which authority and when.</p>", _table(anchors)]
    events = audit.timeline_table(report)
    if events.rows:
        out += ["<h3>Timeline</h3>", '<p class="note">Who sealed, revealed and reconciled, in history '
                "order.</p>", _table(events, "timeline")]
    return "\n".join(out)


def _validation(report: Mapping[str, Any]) -> str:
    val = report.get("validation")
    if not isinstance(val, Mapping):
        return '<p class="note">Score files were not validated.</p>'
    files = val.get("files") or []
    errors, warnings = val.get("errors") or 0, val.get("warnings") or 0
    cls = "s-good" if val.get("ok") else "s-bad"
    out = [f'<p><span class="status {cls}">{"valid" if val.get("ok") else "invalid"}</span> '
           f"{len(files)} score file{'s' if len(files) != 1 else ''}: "
           f"{errors} error{'s' if errors != 1 else ''}, "
           f"{warnings} warning{'s' if warnings != 1 else ''}.</p>"]
    vt = validation_table(report)
    if vt.rows:
        out.append(_table(vt))
    return "\n".join(out)


def _questions(report: Mapping[str, Any]) -> str:
    a, b = labels(report)
    caption = (f"Aggregate per question over the counted dimensions, {a} vs {b}; "
               "under each question: improved counted dimensions (✓ = the question improves).")
    return _chart_or_why(questions_missing(report), lambda: _figure(questions_chart(report), caption),
                         questions_table(report), "questions")


def _chart_or_why(missing: str | None, chart: Callable[[], str], table: Table, cls: str) -> str:
    """The chart above its table; or, when it would have no data, the sentence why in its place
    (which then also stands for the table's own note: the same thing, said once)."""
    if missing is None:
        return chart() + "\n" + _table(table, cls)
    return f'<p class="note">{_e(missing)}</p>\n' + _table(replace(table, notes=()), cls)


#: (anchor, heading, section) in page order; the table of contents is built from it.
def _checklist(report: Mapping[str, Any]) -> str:
    """The reporting checklist (GRRAS): what the report states, and what is missing."""
    return f"<p>{_e(checklist_sentence(report))}</p>" + _table(checklist_table(report), "checklist")


SECTIONS = (
    ("rules", "Rules", _rules), ("protocol", "Protocol deviations", _protocol),
    ("deviations", "Deviations from the published defaults", _deviations),
    ("means", "Means per dimension", _means), ("raters", "Raters", _raters),
    ("agreement", "Agreement (weighted κ)", _agreement), ("cells", "Flagged and contested cells", _cells),
    ("reconciliation", "Reconciliation", _reconciliation),
    ("amendments", "Amendments (exploratory)", _amendments), ("self-bias", "Self-bias", _self_bias),
    ("blinding", "Blinding", _blinding), ("seals", "Seals", _seals),
    ("validation", "Validation", _validation), ("questions", "Questions", _questions),
    ("checklist", "Reporting checklist", _checklist),
)
#: sections shown only when the document has their key (older documents have no such section)
OPTIONAL = {"deviations": "deviations", "reconciliation": "reconciliation", "protocol": "protocol_deviations",
            "checklist": "reporting_checklist"}
#: sections shown only when their key lists something (a plan without amendments has no section)
NONEMPTY = {"amendments"}
TOC_NAMES = {"deviations": "Deviations"}


def _sections(report: Mapping[str, Any]) -> list[tuple[str, str, Callable[[Mapping[str, Any]], str]]]:
    """The page's sections: a design has Decision and Criteria where the seed has Rules, a
    labelled scale no means and κ without weights."""
    out: list[tuple[str, str, Callable[[Mapping[str, Any]], str]]] = []
    for sid, name, section in SECTIONS:
        if sid == "rules" and is_design(report):
            out += [("decision", "Decision", _decision), ("criteria", "Criteria", _criteria)]
        elif sid == "means" and nominal(report):
            continue
        elif sid == "agreement":
            out.append((sid, agreement_title(report), section))
        else:
            out.append((sid, name, section))
    return out


def _head(report: Mapping[str, Any]) -> str:
    verdict = str(report.get("verdict") or "UNKNOWN")
    study = str(report.get("study") or "study")
    title = f"{verdict} · {study} · round {report.get('round') or DASH} · aoven-git report"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        f'<meta name="generator" content="{_e(report.get("generated_by") or "aoven-git")}">\n'
        f"<title>{_e(title)}</title>\n<style>{CSS}{DESIGN_CSS if is_design(report) else ''}</style>\n"
        "</head>\n<body>\n<main>\n"
    )


def _header(report: Mapping[str, Any]) -> str:
    meta = [f"<span>round {_code(report.get('round') or DASH)}</span>"]
    if report.get("plan_version") is not None:
        meta.append(f"<span>plan version {_e(report['plan_version'])}</span>")
    if report.get("verdict_pass"):
        meta.append(f"<span>verdict pass {_code(report['verdict_pass'])}</span>")
    if report.get("generated_by") and provenance.source(report) is None:  # else the source line says it
        meta.append(f"<span>{_e(report['generated_by'])}</span>")
    study = str(report.get("study") or "study")
    return (f'<header>\n<h1>aoven-git report: {_e(study)}</h1>\n<p class="meta">{"".join(meta)}</p>\n'
            f"{_source(report)}</header>{_banner(report)}")


def _source(report: Mapping[str, Any]) -> str:
    """The revision (short; the full id as its tooltip), work tree, version and time."""
    facts = provenance.source_facts(report)
    if not facts:
        return ""
    spans = "".join(
        f"<span>{_e(f.prefix)}" + (f'<code title="{_e(f.title)}">{_e(f.text)}</code>' if f.title
                                   else _code(f.text) if f.code else _e(f.text)) + "</span>"
        for f in facts)
    return f'<p class="meta source" id="source">Source: {spans}</p>\n'


def _banner(report: Mapping[str, Any]) -> str:
    banner = provenance.banner(report)
    if banner is None:
        return ""
    files = "".join(f"<li>{_code(path)}" + (f" ({_e(what)})" if what else "") + "</li>"
                    for path, what in banner.files)
    if banner.more:
        files += f"<li>and {banner.more} more (see the JSON report)</li>"
    return (f'\n<section class="banner b-{banner.tone}" id="source-banner" role="alert">'
            f"<strong>{_e(banner.title)}</strong><p>{_e(banner.text)}</p>"
            + (f"<ul>{files}</ul>" if files else "") + "</section>")


def render_html(report: Mapping[str, Any]) -> str:
    """The report as one self-contained HTML page (no network, no scripts)."""
    shown = [(sid, name, section) for sid, name, section in _sections(report)
             if (sid not in OPTIONAL or report.get(OPTIONAL[sid]) is not None)
             and (sid not in NONEMPTY or report.get(sid))]
    toc = "".join(f'<a href="#{sid}">{_e(TOC_NAMES.get(sid, name.split(" (")[0]))}</a>'
                  for sid, name, _ in shown)
    body = [_header(report), _verdict_block(report), _exploratory_note(report), _figures(report),
            f'<nav class="toc" aria-label="Contents">{toc}</nav>']
    for sid, name, section in shown:
        body.append(f'<section id="{sid}"><h2>{_e(name)}</h2>\n{section(report)}\n</section>')
    foot = _e(report.get("generated_by") or "aoven-git")
    if report.get("schema"):
        foot += f" · schema {_code(report['schema'])}"
    body.append(f"<footer>Generated by {foot}. Self-contained: no scripts, no network.</footer>")
    return _head(report) + "\n".join(part for part in body if part) + "\n</main>\n</body>\n</html>\n"

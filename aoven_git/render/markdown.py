"""Markdown rendering of the report dict (GitHub job summary, `report --format markdown`).

The renderer reads only the report contract (helper-notes/report-json.md), so it can be tested on
hand-made dicts and cannot disagree with the JSON. The tables are built once here as plain data
(`Table`/`Cell`) and the HTML renderer draws the same tables, so the two formats never drift apart.

Numbers are formatted from the exact `*_exact` fractions when present, rounding half up, so a value
that sits exactly on a rounding boundary (5/16 = 31.25%) prints the same everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from typing import Any

__all__ = [
    "VERDICT_MARKS",
    "Cell",
    "Table",
    "cell_tables",
    "fmt_interval",
    "fmt_kappa",
    "fmt_mean",
    "fmt_pct",
    "kappa_tables",
    "means_table",
    "ordered_passes",
    "pair_names",
    "questions_table",
    "render_markdown",
    "rules_table",
    "self_bias_table",
    "short_commit",
    "truncate_summary",
    "validation_table",
    "violations_table",
]

DASH = "—"
VERDICT_MARKS = {
    "PASS": "🟢",
    "FAIL": "🔴",
    "INCONCLUSIVE": "🟡",
    "CONTESTED": "🟠",
    "NOT-READY": "⚪",
}
SUMMARY_LIMIT = 1_000_000

# ---------------------------------------------------------------------------------------------
# numbers


def _exact(value: Any, exact: Any) -> Fraction | None:
    """The best available exact value: the `p/q` string if given, else the float's shortest repr."""
    if isinstance(exact, str) and exact.strip():
        try:
            return Fraction(exact.strip())
        except (ValueError, ZeroDivisionError):
            pass
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)


def _round(q: Fraction, places: int) -> str:
    with localcontext() as ctx:
        ctx.prec = 60
        d = Decimal(q.numerator) / Decimal(q.denominator)
        text = str(d.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]  # never print "-0.00"
    return text


def fmt_number(value: Any, exact: Any = None, places: int = 2, *, signed: bool = False) -> str:
    q = _exact(value, exact)
    if q is None:
        return DASH
    text = _round(q, places)
    if signed and not text.startswith("-") and text.strip("0.") != "":
        text = "+" + text
    return text


def fmt_mean(value: Any, exact: Any = None, *, signed: bool = False) -> str:
    return fmt_number(value, exact, 2, signed=signed)


def fmt_kappa(value: Any, reason: Any = None) -> str:
    """κ with 3 decimals; a missing κ is `undefined (reason)`, never NaN/None."""
    q = _exact(value, None)
    if q is None:
        why = str(reason).strip() if reason not in (None, "") else "no reason given"
        return f"undefined ({why})"
    return _round(q, 3)


def fmt_pct(value: Any, exact: Any = None) -> str:
    q = _exact(value, exact)
    if q is None:
        return "undefined"
    return _round(q * 100, 1) + "%"


def fmt_interval(interval: Any) -> str:
    if not isinstance(interval, Sequence) or isinstance(interval, str) or len(interval) != 2:
        return ""
    lo, hi = (_exact(v, None) for v in interval)
    if lo is None or hi is None:
        return ""
    return f"[{_round(lo, 3)}, {_round(hi, 3)}]"


def _exact_suffix(display: Fraction | None, exact: Any) -> str:
    """` (p/q)` when the decimal shown is not the exact value, so auditors see what was compared."""
    if not isinstance(exact, str) or display is None:
        return ""
    q = _exact(None, exact)
    if q is None or q == display:
        return ""
    return f" ({exact.strip()})"


def short_commit(commit: Any) -> str:
    text = str(commit or "").strip()
    return text[:7] if re.fullmatch(r"[0-9a-fA-F]{8,64}", text) else text


def _text(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


# ---------------------------------------------------------------------------------------------
# tables as data, drawn by both renderers


@dataclass(frozen=True)
class Cell:
    """One table cell: raw text (each renderer escapes it), plus presentation hints."""

    text: str
    tone: str | None = None  # "good" | "bad" | "warn" | "muted": colour in HTML
    mark: str = ""  # a leading symbol, used by Markdown (HTML colours instead)
    code: bool = False  # an identifier from the study: monospace
    num: bool = False  # right-aligned number


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric: frozenset[int] = field(default_factory=frozenset)  # right-aligned columns


def _c(value: Any, **hints: Any) -> Cell:
    return Cell(_text(value), **hints)


def _n(text: str, **hints: Any) -> Cell:
    return Cell(text, num=True, **hints)


def _labels(report: Mapping[str, Any]) -> tuple[str, str]:
    cond = report.get("conditions") or {}
    return str(cond.get("baseline") or "A"), str(cond.get("treatment") or "B")


def _rule_format(rule: Mapping[str, Any]) -> str:
    """How a rule's numbers read: improvement rules are percentages, question counts integers."""
    rid = str(rule.get("id", "")).lower()
    if "improvement" in rid:
        return "pct"
    return "int" if "question" in rid else "num"


def _rule_number(rule: Mapping[str, Any], key: str) -> str:
    value, exact = rule.get(key), rule.get(f"{key}_exact")
    q = _exact(value, exact)
    if q is None:
        return DASH
    style = _rule_format(rule)
    if style == "pct":
        shown = Fraction(Decimal(_round(q * 100, 1))) / 100
        return fmt_pct(value, exact) + _exact_suffix(shown, exact)
    if style == "int" and q.denominator == 1:
        return str(q.numerator)
    return fmt_number(value, exact, 2) + _exact_suffix(Fraction(Decimal(_round(q, 2))), exact)


_OUTCOME = {
    # (kind, outcome) -> (label, tone, mark); a fail rule that is "met" is what makes the verdict FAIL
    ("pass", "met"): ("met", "good", "✅"),
    ("pass", "not-met"): ("not met", "bad", "❌"),
    ("fail", "met"): ("met: fails", "bad", "⛔"),
    ("fail", "not-met"): ("not met", "good", "✅"),
}


def rules_table(report: Mapping[str, Any]) -> Table:
    rows = []
    for rule in report.get("rules") or []:
        kind, outcome = str(rule.get("kind", "")), str(rule.get("outcome", ""))
        if outcome == "not-evaluable":
            label, tone, mark = "not evaluable", "warn", "⚪"
        else:
            label, tone, mark = _OUTCOME.get((kind, outcome), (outcome or DASH, None, ""))
        rows.append((
            _c(rule.get("id"), code=True),
            _c(kind or None),
            _c(rule.get("text")),
            _n(_rule_number(rule, "value")),
            _n(_rule_number(rule, "threshold")),
            Cell(label, tone=tone, mark=mark),
            _c(rule.get("reason") or "", tone="muted"),
        ))
    return Table(("rule", "kind", "condition", "value", "threshold", "outcome", "reason"), tuple(rows),
                 frozenset({3, 4}))


def means_table(report: Mapping[str, Any]) -> Table:
    a, b = _labels(report)
    excluded = report.get("excluded_dimensions") or {}
    rows = []
    for dim in report.get("dimensions") or []:
        did = str(dim.get("id", ""))
        kind = str(dim.get("kind") or DASH) + (" · load" if dim.get("load") else "")
        if dim.get("counted", did not in excluded):
            status = Cell("counted", tone="good")
        else:
            status = Cell("excluded: " + str(excluded.get(did) or "does not count"), tone="bad", mark="⛔")
        muted = None if dim.get("counted", True) else "muted"
        rows.append((
            _c(did, code=True),
            _c(dim.get("name")),
            _c(kind),
            _n(fmt_mean(dim.get(f"mean_{a}"), dim.get(f"mean_{a}_exact")), tone=muted),
            _n(fmt_mean(dim.get(f"mean_{b}"), dim.get(f"mean_{b}_exact")), tone=muted),
            _n(fmt_mean(dim.get("delta"), dim.get("delta_exact"), signed=True), tone=muted),
            status,
        ))
    return Table(("dimension", "name", "kind", f"mean {a}", f"mean {b}", f"Δ ({b} − {a})", "status"),
                 tuple(rows), frozenset({3, 4, 5}))


def ordered_passes(report: Mapping[str, Any]) -> list[str]:
    """The verdict pass first, then the others in report order."""
    kappa = report.get("kappa") or {}
    first = report.get("verdict_pass")
    return ([first] if first in kappa else []) + [p for p in kappa if p != first]


def pair_names(per_dim: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    for entry in per_dim.values():
        for pair in (entry or {}).get("pairs") or {}:
            if pair not in names:
                names.append(pair)
    return names


def kappa_tables(report: Mapping[str, Any]) -> list[tuple[str, Table]]:
    """One κ table per pass. Only the verdict pass gates dimensions, so only its column says
    "counts"; another pass's column says whether κ reaches the threshold, without implying that
    its low κ excluded anything from the verdict."""
    out = []
    for pass_id in ordered_passes(report):
        per_dim = (report.get("kappa") or {}).get(pass_id) or {}
        pairs = pair_names(per_dim)
        gates = pass_id == report.get("verdict_pass")
        rows = []
        for did, k in per_dim.items():
            k = k or {}
            value = k.get("value")
            counts = bool(k.get("counts"))
            if gates:
                status = Cell("yes", tone="good") if counts else Cell("no", tone="bad", mark="⛔")
            else:
                status = Cell("yes", tone="good") if counts else Cell("no")
            row = [
                _c(did, code=True),
                Cell(fmt_kappa(value, k.get("reason")), num=value is not None,
                     tone=None if value is not None else "warn"),
                status,
                _n(fmt_kappa(k.get("min")) if k.get("min") is not None else DASH),
                _n(fmt_kappa(k.get("mean")) if k.get("mean") is not None else DASH),
                _n(fmt_kappa(k.get("alpha")) if k.get("alpha") is not None else DASH),
                _n(_text(k.get("n"))),
            ]
            for pair in pairs:
                pv = (k.get("pairs") or {}).get(pair)
                if pair not in (k.get("pairs") or {}):
                    row.append(_n(DASH, tone="muted"))
                elif pv is None:
                    row.append(Cell("undefined", tone="warn"))
                else:
                    iv = fmt_interval((k.get("intervals") or {}).get(pair))
                    row.append(_n(fmt_kappa(pv) + (f" {iv}" if iv else "")))
            rows.append(tuple(row))
        threshold = (report.get("kappa_settings") or {}).get("threshold")
        reach = f"≥ {fmt_kappa(threshold)}" if threshold is not None else "≥ threshold"
        headers = ("dimension", "κ", "counts" if gates else reach, "min", "mean", "α", "n", *pairs)
        out.append((pass_id, Table(headers, tuple(rows), frozenset({3, 4, 5, 6}))))
    return out


def _raters(report: Mapping[str, Any], cells: Iterable[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for group in (report.get("raters") or {}).values():
        for r in group or []:
            if r not in names:
                names.append(r)
    for cell in cells:
        for r in cell.get("scores") or {}:
            if r not in names:
                names.append(r)
    return names


def _score(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return fmt_number(value, None, 2) if isinstance(value, float) else _text(value)


def cell_tables(report: Mapping[str, Any]) -> tuple[Table, Table]:
    """(flagged or contested cells, other disagreements resolved by rule)."""
    cells = list(report.get("cells") or [])
    flagged_ids = set(report.get("flagged_cells") or [])
    contested_ids = set(report.get("contested_cells") or [])
    known = {(c.get("cell"), c.get("pass")) for c in cells}
    # A flagged id the analysis listed without a cell entry still has to be shown.
    for cid in sorted((flagged_ids | contested_ids) - {c for c, _ in known}):
        cells.append({"cell": cid, "pass": None, "scores": {}, "flagged": cid in flagged_ids,
                      "resolution": "contested" if cid in contested_ids else "missing", "value": None})
    raters = _raters(report, cells)
    tones = {"consensus": "good", "agreed": "good", "contested": "warn", "missing": "bad"}
    marks = {"contested": "⚖️", "missing": "❗"}

    def row(c: Mapping[str, Any]) -> tuple[Cell, ...]:
        res = str(c.get("resolution") or DASH)
        scores = c.get("scores") or {}
        return (
            _c(c.get("cell"), code=True),
            _c(c.get("pass"), code=c.get("pass") is not None),
            *(_n(_score(scores.get(r)), tone=None if r in scores else "muted") for r in raters),
            Cell(res, tone=tones.get(res), mark=marks.get(res, "")),
            _n(fmt_mean(c.get("value"), c.get("value_exact")) if c.get("value") is not None else DASH),
        )

    def is_key(c: Mapping[str, Any]) -> bool:
        return bool(c.get("flagged")) or c.get("cell") in flagged_ids or c.get("cell") in contested_ids \
            or c.get("resolution") in ("contested", "missing")

    headers = ("cell", "pass", *raters, "resolution", "value")
    numeric = frozenset(range(2, 2 + len(raters))) | {len(headers) - 1}
    return (Table(headers, tuple(row(c) for c in cells if is_key(c)), numeric),
            Table(headers, tuple(row(c) for c in cells if not is_key(c)), numeric))


def self_bias_table(report: Mapping[str, Any]) -> Table:
    a, b = _labels(report)
    rows = []
    for entry in report.get("self_bias") or []:
        flagged = bool(entry.get("flagged"))
        rows.append((
            _c(entry.get("rater"), code=True),
            _c(entry.get("pass"), code=True),
            _n(_text(entry.get("b_worse"))),
            Cell("flagged for re-audit" if flagged else "ok", tone="warn" if flagged else "good",
                 mark="🚩" if flagged else ""),
        ))
    return Table(("rater", "pass", f"cells with {b} worse than {a}", "self-bias"), tuple(rows),
                 frozenset({2}))


def _describe(item: Any) -> str:
    """Text of a forced reveal or other loosely specified record (dict or string)."""
    if isinstance(item, Mapping):
        parts = [f"{k} {short_commit(item[k]) if k == 'commit' else item[k]}"
                 for k in ("rater", "pass", "round", "commit") if item.get(k) not in (None, "")]
        msg = item.get("message") or item.get("reason")
        return ", ".join(parts) + (f": {msg}" if msg else "") if parts or msg else str(dict(item))
    return _text(item)


def violations_table(report: Mapping[str, Any]) -> Table:
    seals = report.get("seals") or {}
    rows = tuple(
        (_c(v.get("code"), code=True), _c(v.get("rater"), code=v.get("rater") is not None),
         _c(short_commit(v.get("commit")) or None, code=bool(v.get("commit"))), _c(v.get("message")))
        for v in seals.get("violations") or [] if isinstance(v, Mapping)
    )
    return Table(("code", "rater", "commit", "message"), rows)


def validation_table(report: Mapping[str, Any]) -> Table:
    rows = []
    for f in (report.get("validation") or {}).get("files") or []:
        for level in ("errors", "warnings"):
            for issue in f.get(level) or []:
                if isinstance(issue, Mapping):
                    line, code, msg = issue.get("line"), issue.get("code"), issue.get("message")
                else:
                    line, code, msg = None, None, issue
                rows.append((
                    _c(f.get("path"), code=True),
                    _n(_text(line)),
                    Cell(level[:-1], tone="bad" if level == "errors" else "warn",
                         mark="❌" if level == "errors" else "⚠️"),
                    _c(code, code=code is not None),
                    _c(msg),
                ))
    return Table(("file", "line", "level", "code", "message"), tuple(rows), frozenset({1}))


def questions_table(report: Mapping[str, Any]) -> Table:
    a, b = _labels(report)
    rows = []
    n_counted = len(report.get("counted_dimensions") or [])
    for q in report.get("questions") or []:
        qa, qb = q.get(f"aggregate_{a}"), q.get(f"aggregate_{b}")
        qa_x, qb_x = _exact(qa, q.get(f"aggregate_{a}_exact")), _exact(qb, q.get(f"aggregate_{b}_exact"))
        delta = fmt_mean(None, f"{qb_x - qa_x}") if qa_x is not None and qb_x is not None else DASH
        improves = bool(q.get("improves"))
        improved = q.get("improved_dimensions")
        rows.append((
            _c(q.get("id"), code=True),
            _n(fmt_mean(qa, q.get(f"aggregate_{a}_exact"))),
            _n(fmt_mean(qb, q.get(f"aggregate_{b}_exact"))),
            _n(delta if delta.startswith("-") or delta in (DASH, "0.00") else "+" + delta),
            _n(f"{_text(improved)} of {n_counted}" if n_counted else _text(improved)),
            Cell("yes", tone="good", mark="✅") if improves else Cell("no", tone="muted"),
        ))
    return Table(("question", f"aggregate {a}", f"aggregate {b}", f"Δ ({b} − {a})", "improved dimensions",
                  "improves"), tuple(rows), frozenset({1, 2, 3, 4}))


# ---------------------------------------------------------------------------------------------
# Markdown

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
    head = "| " + " | ".join(md(h) for h in table.headers) + " |"
    align = "|" + "|".join("---:" if i in table.numeric else "---" for i in range(len(table.headers))) + "|"
    body = ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows]
    return [head, align, *body]


def _md_verdict(report: Mapping[str, Any]) -> list[str]:
    verdict = str(report.get("verdict") or "UNKNOWN")
    mark = VERDICT_MARKS.get(verdict, "⚪")
    study = report.get("study") or "study"
    head = f"# aoven-git report: {md(study)}"
    facts = [f"round {md_code(report.get('round') or DASH)}"]
    if report.get("plan_version") is not None:
        facts.append(f"plan version {md(report.get('plan_version'))}")
    if report.get("verdict_pass"):
        facts.append(f"verdict pass {md_code(report['verdict_pass'])}")
    lines = [head, "", " · ".join(facts), "",
             f"## {mark} Verdict: **{md(verdict)}**", ""]
    if report.get("summary"):
        lines += [f"> {md(report['summary'])}", ""]
    a, b = _labels(report)
    means = report.get("means") or {}
    means_exact = report.get("means_exact") or {}
    lines += [
        f"**Improvement:** {fmt_pct(report.get('improvement'), report.get('improvement_exact'))}"
        f" · **mean aggregate** {md(a)} {fmt_mean(means.get(a), means_exact.get(a))},"
        f" {md(b)} {fmt_mean(means.get(b), means_exact.get(b))}"
        f" · **counted dimensions** {len(report.get('counted_dimensions') or [])}"
        f" of {len(report.get('dimensions') or [])}",
        "",
    ]
    if report.get("terminal"):
        lines += ["> ⛔ **Terminal:** a second inconclusive round; study v0.1 ends here.", ""]
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
    extremes = report.get("extremes")
    if isinstance(extremes, Mapping):
        parts = []
        for key, label in (("best", "best case for B"), ("worst", "worst case for B")):
            e = extremes.get(key) or {}
            parts.append(f"{label}: **{md(e.get('verdict') or DASH)}**"
                         f" (improvement {fmt_pct(e.get('improvement'), e.get('improvement_exact'))})")
        lines += ["**Contested cells at both extremes:** " + "; ".join(parts), ""]
    robust = report.get("robust_to_contested")
    if isinstance(robust, int) and robust > 0:
        lines += [f"The verdict is robust to {robust} contested cell{'s' if robust != 1 else ''}.", ""]
    retest = report.get("retest")
    if isinstance(retest, Mapping):
        refs = ", ".join(md_code(r) for r in retest.get("refinements") or []) or "none"
        lines += [f"**Re-test round** {md_code(retest.get('round') or DASH)} · refinements: {refs}", ""]
        lines += [f"- ⚠️ {md(p)}" for p in retest.get("problems") or []]
        if retest.get("problems"):
            lines.append("")
    return lines


def _md_blinding(report: Mapping[str, Any]) -> list[str]:
    lines = ["## Blinding", ""]
    blinding = report.get("blinding")
    used = (blinding or {}).get("used") or report.get("b_scores_from")
    _, b = _labels(report)
    if isinstance(blinding, Mapping):
        div = fmt_mean(blinding.get("divergence"), blinding.get("divergence_exact"))
        thr = fmt_mean(blinding.get("threshold"), blinding.get("threshold_exact"))
        q_div = _exact(blinding.get("divergence"), blinding.get("divergence_exact"))
        q_thr = _exact(blinding.get("threshold"), blinding.get("threshold_exact"))
        cmp = "≤" if q_div is not None and q_thr is not None and q_div <= q_thr else ">"
        if q_div is None:
            cmp = "vs"
        lines.append(f"Mean |blinded − unblinded| divergence of {md(b)} scores (pass "
                     f"{md_code(blinding.get('pass') or DASH)}): **{div}** {cmp} threshold {thr}.")
    else:
        lines.append("The plan has no stripped pass; no blinding divergence was computed.")
    lines += ["", f"{md(b)} scores used for the verdict: pass {md_code(used or DASH)}.", ""]
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
    forced = seals.get("forced_reveals") or []
    if forced:
        lines += ["**Forced reveals:**", ""] + [f"- {md(_describe(f))}" for f in forced] + [""]
    return lines


def _md_validation(report: Mapping[str, Any]) -> list[str]:
    val = report.get("validation")
    lines = ["## Validation", ""]
    if not isinstance(val, Mapping):
        return [*lines, "Score files were not validated.", ""]
    files = val.get("files") or []
    errors, warnings = val.get("errors") or 0, val.get("warnings") or 0
    mark = "✅" if val.get("ok") else "❌"
    lines += [f"{mark} {len(files)} score file{'s' if len(files) != 1 else ''}: "
              f"{errors} error{'s' if errors != 1 else ''}, "
              f"{warnings} warning{'s' if warnings != 1 else ''}.", ""]
    vt = validation_table(report)
    if vt.rows:
        lines += [*md_table(vt), ""]
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as GitHub-flavoured Markdown (job summary); no raw HTML."""
    a, b = _labels(report)
    out = _md_verdict(report)
    out += ["## Rules", "", *md_table(rules_table(report)), ""]

    out += ["## Means per dimension", ""]
    dims = report.get("dimensions") or []
    if dims:
        out += [*md_table(means_table(report)), ""]
    excluded = report.get("excluded_dimensions") or {}
    if excluded:
        out += ["Excluded from the verdict: " + "; ".join(
            f"{md_code(d)} ({md(r)})" for d, r in excluded.items()) + ".", ""]

    ks = report.get("kappa_settings") or {}
    out += ["## Agreement (weighted κ)", ""]
    settings = [f"weights {md(ks.get('weights') or DASH)}",
                f"threshold {fmt_kappa(ks.get('threshold')) if ks.get('threshold') is not None else DASH}",
                f"aggregate over pairs: {md(ks.get('aggregate') or DASH)}"]
    if ks.get("bootstrap"):
        settings.append(f"95% bootstrap intervals from {md(ks['bootstrap'])} resamples"
                        f" (seed {md(ks.get('seed'))})")
    out += ["Settings: " + ", ".join(settings) + ". α is Krippendorff's α (ordinal).", ""]
    raters = report.get("raters") or {}
    for pass_id, table in kappa_tables(report):
        tag = " (verdict pass)" if pass_id == report.get("verdict_pass") else ""
        who = ", ".join(md_code(r) for r in raters.get(pass_id) or [])
        out += [f"### Pass {md_code(pass_id)}{tag}", ""]
        if who:
            out += [f"Raters: {who}.", ""]
        out += [*md_table(table), ""]

    key_cells, other_cells = cell_tables(report)
    out += ["## Flagged and contested cells", ""]
    if key_cells.rows:
        out += [*md_table(key_cells), ""]
    else:
        out += ["No flagged or contested cells.", ""]
    if other_cells.rows:
        out += ["Other disagreements, resolved by the plan's rule:", "", *md_table(other_cells), ""]

    out += ["## Self-bias", ""]
    sb = self_bias_table(report)
    flagged = sum(1 for e in report.get("self_bias") or [] if e.get("flagged"))
    out.append(f"{flagged} rater pass{'es' if flagged != 1 else ''} flagged for re-audit "
               f"(no cell with {md(b)} scored worse than {md(a)})." if flagged else
               "No rater pass flagged for re-audit.")
    out.append("")
    if sb.rows:
        out += [*md_table(sb), ""]

    out += _md_blinding(report)
    out += _md_seals(report)
    out += _md_validation(report)

    out += ["## Questions", ""]
    qt = questions_table(report)
    if qt.rows:
        out += [f"Aggregate = sum over the counted dimensions; a question improves when {md(b)} < {md(a)}"
                " on enough counted dimensions.", "", *md_table(qt), ""]
    else:
        out += ["No question aggregates.", ""]
    footer = [md(report.get("generated_by") or "aoven-git")]
    if report.get("schema"):
        footer.append(f"schema {md_code(report['schema'])}")
    out += ["---", "", "Generated by " + " · ".join(footer) + "."]
    return "\n".join(out) + "\n"


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
    note_for = lambda kept: (  # noqa: E731 - the note depends on how many lines survive
        f"\n\n> ⚠️ **Report truncated** after line {kept} of {len(lines)}: GitHub limits a job summary to"
        f" 1 MiB. The full report is in {full_report}.\n"
    )
    fence_close = "\n```"
    reserve = len(fence_close)  # room to close a code fence the cut would leave open
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
    result = head + note_for(kept)
    encoded = result.encode("utf-8")
    if len(encoded) > limit_bytes:  # limit smaller than the note itself: cut on a character boundary
        result = encoded[:limit_bytes].decode("utf-8", "ignore")
    return result

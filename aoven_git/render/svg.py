"""Inline SVG charts for the HTML report.

Hand-written SVG rather than a plotting library: the report must be one self-contained file with
no scripts, and these three charts are simple enough that a dependency would cost more than it
saves. Every chart is an accessible image (role="img", <title>, aria-label); every mark carries a
<title> so hovering shows the exact number without JavaScript. All text is escaped here, because
dimension names, pass ids and rater names come from users' plan files.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from aoven_git.render.markdown import fmt_interval, fmt_kappa, fmt_mean, pair_names

__all__ = ["kappa_chart", "means_chart", "questions_chart"]

COLOR_A = "#d08a00"  # Okabe-Ito orange, darkened for contrast on white
COLOR_B = "#0072b2"  # Okabe-Ito blue
PAIR_COLORS = ("#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#000000", "#999933")
PAIR_SHAPES = ("circle", "square", "diamond", "triangle")
GOOD, BAD, WARN, INK, MUTED, GRID = "#2f7d4f", "#b83232", "#a86b00", "#1f2933", "#6b7785", "#e3e7ec"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _f(x: float) -> str:
    """Compact coordinates: the SVG stays small and byte-identical across runs."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _nice_max(value: float) -> tuple[float, float]:
    """(axis maximum, tick step) with at most 6 ticks above zero."""
    if value <= 0:
        return 1.0, 0.25
    for step in (0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        top = math.ceil(value / step - 1e-9) * step
        if top / step <= 6:
            return float(top), float(step)
    step = 10 ** math.ceil(math.log10(value / 6))
    return float(math.ceil(value / step) * step), float(step)


def _open(svg_id: str, cls: str, width: int, height: int, label: str) -> list[str]:
    return [
        f'<svg id="{_e(svg_id)}" class="chart {_e(cls)}" role="img" aria-label="{_e(label)}" '
        f'viewBox="0 0 {width} {height}" preserveAspectRatio="xMidYMid meet" focusable="false">',
        f"<title>{_e(label)}</title>",
    ]


def _legend_swatch(x: float, y: float, color: str, text: str, *, faded: bool = False) -> tuple[str, float]:
    extra = ' fill-opacity="0.35" stroke-dasharray="3 2"' if faded else ""
    svg = (f'<rect x="{_f(x)}" y="{_f(y - 9)}" width="12" height="12" rx="2" fill="{color}" '
           f'stroke="{color}"{extra}/>'
           f'<text class="legend" x="{_f(x + 17)}" y="{_f(y + 1)}">{_e(text)}</text>')
    return svg, x + 17 + 7.2 * len(text) + 18


def _grouped_bars(
    *, svg_id: str, cls: str, label: str, groups: Sequence[dict[str, Any]], a: str, b: str,
    y_title: str, legend_extra: str = "",
) -> str:
    """Vertical grouped bars, A then B per group; `groups` items: id, a, b, title, sub, sub_tone, faded."""
    width, height = 760, 330
    ml, mr, mt, mb = 56, 12, 44, 62
    pw, ph = width - ml - mr, height - mt - mb
    values = [v for g in groups for v in (_num(g["a"]), _num(g["b"])) if v is not None]
    top, step = _nice_max(max(values, default=0.0) * 1.08)  # headroom for value labels
    out = _open(svg_id, cls, width, height, label)

    def y(v: float) -> float:
        return mt + ph - (v / top) * ph

    # legend
    lx = ml
    sw, lx = _legend_swatch(lx, 18, COLOR_A, f"{a} (baseline)")
    out.append(sw)
    sw, lx = _legend_swatch(lx, 18, COLOR_B, f"{b} (treatment)")
    out.append(sw)
    if legend_extra:
        sw, lx = _legend_swatch(lx, 18, MUTED, legend_extra, faded=True)
        out.append(sw)
    # grid and axis
    ticks = round(top / step)
    for i in range(ticks + 1):
        v = i * step
        out.append(f'<line class="grid" x1="{ml}" x2="{ml + pw}" y1="{_f(y(v))}" y2="{_f(y(v))}" '
                   f'stroke="{GRID}"/>')
        out.append(f'<text class="tick" x="{ml - 6}" y="{_f(y(v) + 4)}" text-anchor="end">'
                   f"{_e(fmt_mean(v) if step < 1 else int(v) if v.is_integer() else v)}</text>")
    out.append(f'<text class="axis-title" transform="translate(14 {_f(mt + ph / 2)}) rotate(-90)" '
               f'text-anchor="middle">{_e(y_title)}</text>')
    n = max(len(groups), 1)
    gw = pw / n
    bw = min(30.0, gw * 0.34)
    for i, g in enumerate(groups):
        cx = ml + gw * (i + 0.5)
        faded = bool(g.get("faded"))
        if faded:
            out.append(f'<rect class="excluded-band" x="{_f(ml + gw * i + 2)}" y="{mt}" '
                       f'width="{_f(gw - 4)}" height="{ph}" fill="#f3f4f6"/>')
        for j, (key, color, cond) in enumerate((("a", COLOR_A, a), ("b", COLOR_B, b))):
            v = _num(g[key])
            x0 = cx - bw - 1.5 if j == 0 else cx + 1.5
            if v is None:
                out.append(f'<text class="tick" x="{_f(x0 + bw / 2)}" y="{_f(y(0) - 4)}" '
                           f'text-anchor="middle">—</text>')
                continue
            style = ' fill-opacity="0.35" stroke-dasharray="3 2"' if faded else ""
            h = max(y(0) - y(v), 0.0)
            out.append(
                f'<rect class="bar bar-{_e(key)}{" excluded" if faded else ""}" x="{_f(x0)}" '
                f'y="{_f(y(v))}" width="{_f(bw)}" height="{_f(h)}" fill="{color}" stroke="{color}"{style}>'
                f"<title>{_e(g['title'])}: {_e(cond)} {_e(fmt_mean(v))}</title></rect>"
            )
            out.append(f'<text class="value" x="{_f(x0 + bw / 2)}" y="{_f(y(v) - 4)}" '
                       f'text-anchor="middle">{_e(fmt_mean(v))}</text>')
        out.append(f'<text class="cat" x="{_f(cx)}" y="{_f(mt + ph + 18)}" text-anchor="middle">'
                   f"{_e(g['id'])}</text>")
        if g.get("sub"):
            color = {"good": GOOD, "bad": BAD, "warn": WARN}.get(g.get("sub_tone") or "", MUTED)
            out.append(f'<text class="sub" x="{_f(cx)}" y="{_f(mt + ph + 34)}" text-anchor="middle" '
                       f'fill="{color}">{_e(g["sub"])}</text>')
    out.append(f'<line class="axis" x1="{ml}" x2="{ml + pw}" y1="{_f(y(0))}" y2="{_f(y(0))}" '
               f'stroke="{INK}"/>')
    out.append("</svg>")
    return "\n".join(out)


def means_chart(report: Mapping[str, Any], *, svg_id: str = "chart-means") -> str:
    cond = report.get("conditions") or {}
    a, b = str(cond.get("baseline") or "A"), str(cond.get("treatment") or "B")
    excluded = report.get("excluded_dimensions") or {}
    groups = []
    for d in report.get("dimensions") or []:
        did = str(d.get("id", ""))
        counted = bool(d.get("counted", did not in excluded))
        sub = "excluded" if not counted else ("load" if d.get("load") else "")
        groups.append({"id": did, "a": d.get(f"mean_{a}"), "b": d.get(f"mean_{b}"),
                       "title": f"{did} {d.get('name') or ''}".strip() + ("" if counted else " (excluded)"),
                       "sub": sub, "sub_tone": "bad" if not counted else None, "faded": not counted})
    n_ex = sum(1 for g in groups if g["faded"])
    label = (f"Mean score per dimension, {a} versus {b}, lower is better; "
             f"{len(groups) - n_ex} counted, {n_ex} excluded for low agreement.")
    return _grouped_bars(svg_id=svg_id, cls="chart-means", label=label, groups=groups, a=a, b=b,
                         y_title="mean score (lower is better)",
                         legend_extra="excluded: κ below threshold" if n_ex else "")


def questions_chart(report: Mapping[str, Any], *, svg_id: str = "chart-questions") -> str:
    cond = report.get("conditions") or {}
    a, b = str(cond.get("baseline") or "A"), str(cond.get("treatment") or "B")
    n_counted = len(report.get("counted_dimensions") or [])
    groups = []
    for q in report.get("questions") or []:
        improved = q.get("improved_dimensions")
        frac = f"{improved}/{n_counted}" if n_counted and improved is not None else str(improved or "")
        groups.append({"id": str(q.get("id", "")), "a": q.get(f"aggregate_{a}"), "b": q.get(f"aggregate_{b}"),
                       "title": str(q.get("id", "")), "sub": ("✓ " if q.get("improves") else "") + frac,
                       "sub_tone": "good" if q.get("improves") else None})
    n_imp = sum(1 for q in report.get("questions") or [] if q.get("improves"))
    label = (f"Aggregate score per question over the counted dimensions, {a} versus {b}, lower is better; "
             f"{n_imp} of {len(groups)} questions improve.")
    return _grouped_bars(svg_id=svg_id, cls="chart-questions", label=label, groups=groups, a=a, b=b,
                         y_title="aggregate (lower is better)")


def _shape(kind: str, x: float, y: float, color: str, title: str) -> str:
    t = f"<title>{_e(title)}</title>"
    common = f'class="kappa-pair" fill="{color}" stroke="#ffffff" stroke-width="1"'
    if kind == "square":
        return f'<rect {common} x="{_f(x - 4)}" y="{_f(y - 4)}" width="8" height="8">{t}</rect>'
    if kind == "diamond":
        pts = f"{_f(x)},{_f(y - 5.5)} {_f(x + 5.5)},{_f(y)} {_f(x)},{_f(y + 5.5)} {_f(x - 5.5)},{_f(y)}"
        return f'<polygon {common} points="{pts}">{t}</polygon>'
    if kind == "triangle":
        pts = f"{_f(x)},{_f(y - 5.5)} {_f(x + 5)},{_f(y + 4)} {_f(x - 5)},{_f(y + 4)}"
        return f'<polygon {common} points="{pts}">{t}</polygon>'
    return f'<circle {common} cx="{_f(x)}" cy="{_f(y)}" r="4.5">{t}</circle>'


def kappa_chart(report: Mapping[str, Any], pass_id: str, *, svg_id: str = "chart-kappa") -> str:
    """κ per dimension: a bar for the aggregate, a dot with its 95% whisker per rater pair."""
    per_dim: Mapping[str, Any] = (report.get("kappa") or {}).get(pass_id) or {}
    settings = report.get("kappa_settings") or {}
    threshold = _num(settings.get("threshold"))
    aggregate = str(settings.get("aggregate") or "min")
    pairs = pair_names(per_dim)
    gates = pass_id == report.get("verdict_pass")
    lows = [threshold or 0.0, 0.0]
    for k in per_dim.values():
        k = k or {}
        lows += [v for v in (_num(k.get("value")), *(_num(p) for p in (k.get("pairs") or {}).values()))
                 if v is not None]
        for iv in (k.get("intervals") or {}).values():
            if isinstance(iv, Sequence) and len(iv) == 2 and _num(iv[0]) is not None:
                lows.append(float(iv[0]))
    lo = max(-1.0, math.floor(min(lows) / 0.2 + 1e-9) * 0.2)
    hi = 1.0
    width = 760
    ml, mr, mb, row = 58, 150, 34, 36
    pw = width - ml - mr
    # Legend: the aggregate on the first line, rater pairs wrapped on the following lines.
    legend = [f'<rect x="{ml}" y="9" width="14" height="12" fill="{GOOD}" fill-opacity="0.28"/>'
              f'<line x1="{ml + 14}" x2="{ml + 14}" y1="8" y2="22" stroke="{INK}" stroke-width="2.5"/>'
              f'<text class="legend" x="{ml + 20}" y="19">κ ({_e(aggregate)} over pairs); whiskers: '
              f"95% bootstrap interval per rater pair</text>"]
    lx, ly = float(ml), 19 + 20
    for i, pair in enumerate(pairs):
        item_w = 14 + 7.2 * len(pair) + 16
        if lx + item_w > width - 8 and lx > ml:
            lx, ly = float(ml), ly + 18
        color, shape = PAIR_COLORS[i % len(PAIR_COLORS)], PAIR_SHAPES[i % len(PAIR_SHAPES)]
        mark = _shape(shape, lx + 5, ly - 4, color, pair).replace('class="kappa-pair"', 'class="legend-mark"')
        legend.append(mark + f'<text class="legend" x="{_f(lx + 14)}" y="{_f(ly)}">{_e(pair)}</text>')
        lx += item_w
    mt = int(ly + 30)
    rows = max(len(per_dim), 1)
    height = mt + rows * row + mb

    def x(v: float) -> float:
        return ml + (min(max(v, lo), hi) - lo) / (hi - lo) * pw

    n_counts = sum(1 for k in per_dim.values() if (k or {}).get("counts"))
    label = (f"Weighted kappa per dimension for pass {pass_id}: {aggregate} over rater pairs as bars, "
             f"each pair with its 95% interval"
             + (f", threshold {fmt_kappa(threshold)}" if threshold is not None else "")
             + f"; {n_counts} of {len(per_dim)} dimensions reach it.")
    out = _open(svg_id, "chart-kappa", width, height, label)
    out += legend
    # grid
    steps = round((hi - lo) / 0.2)
    for i in range(steps + 1):
        v = lo + i * 0.2
        out.append(f'<line class="grid" x1="{_f(x(v))}" x2="{_f(x(v))}" y1="{mt - 6}" y2="{mt + rows * row}" '
                   f'stroke="{GRID}"/>'
                   f'<text class="tick" x="{_f(x(v))}" y="{mt + rows * row + 16}" text-anchor="middle">'
                   f"{v:.1f}</text>")
    out.append(f'<line class="axis" x1="{_f(x(0))}" x2="{_f(x(0))}" y1="{mt - 6}" y2="{mt + rows * row}" '
               f'stroke="{INK}"/>')
    out.append(f'<text class="axis-title" x="{_f(ml + pw / 2)}" y="{height - 2}" text-anchor="middle">'
               f"weighted κ</text>")
    spread = 18.0
    offsets = ([0.0] if len(pairs) <= 1
               else [-spread / 2 + spread * i / (len(pairs) - 1) for i in range(len(pairs))])
    for r, (did, k) in enumerate(per_dim.items()):
        k = k or {}
        cy = mt + r * row + row / 2
        value = _num(k.get("value"))
        counts = bool(k.get("counts"))
        out.append(f'<text class="cat" x="{ml - 8}" y="{_f(cy + 4)}" text-anchor="end">{_e(did)}</text>')
        if value is None:
            reason = k.get("reason") or "no reason given"
            out.append(f'<text class="kappa-undefined" x="{_f(x(0) + 6)}" y="{_f(cy + 4)}" fill="{WARN}">'
                       f"undefined<title>{_e(did)}: {_e(fmt_kappa(None, reason))}</title></text>")
        else:
            x0, x1 = sorted((x(0), x(value)))
            meaning = (("counts" if counts else "does not count") if gates
                       else ("reaches" if counts else "below") + " the threshold")
            color = GOOD if counts else BAD
            out.append(f'<rect class="kappa-aggregate {"counts" if counts else "excluded"}" x="{_f(x0)}" '
                       f'y="{_f(cy - 13)}" width="{_f(max(x1 - x0, 1.0))}" height="26" fill="{color}" '
                       f'fill-opacity="0.22"><title>{_e(did)}: κ {_e(fmt_kappa(value))} '
                       f'({_e(meaning)})</title></rect>'
                       f'<line x1="{_f(x(value))}" x2="{_f(x(value))}" y1="{_f(cy - 13)}" y2="{_f(cy + 13)}" '
                       f'stroke="{INK}" stroke-width="2.5"/>')
        for i, pair in enumerate(pairs):
            pv = _num((k.get("pairs") or {}).get(pair))
            if pv is None:
                continue
            py = cy + offsets[i]
            color, shape = PAIR_COLORS[i % len(PAIR_COLORS)], PAIR_SHAPES[i % len(PAIR_SHAPES)]
            iv = (k.get("intervals") or {}).get(pair)
            if isinstance(iv, Sequence) and len(iv) == 2 and None not in (_num(iv[0]), _num(iv[1])):
                a_, b_ = x(float(iv[0])), x(float(iv[1]))
                out.append(f'<path class="kappa-whisker" d="M{_f(a_)} {_f(py)}H{_f(b_)}M{_f(a_)} {_f(py - 3)}'
                           f'v6M{_f(b_)} {_f(py - 3)}v6" stroke="{color}" stroke-width="1.3" fill="none"/>')
            out.append(_shape(shape, x(pv), py, color,
                              f"{did} {pair}: κ {fmt_kappa(pv)} {fmt_interval(iv)}".rstrip()))
        # only the verdict pass gates dimensions; another pass's low κ excludes nothing
        status = ("counts" if counts else "excluded") if gates else ("reaches" if counts else "below")
        shown = fmt_kappa(value) if value is not None else "undefined"
        out.append(f'<text class="kappa-value" x="{width - mr + 14}" y="{_f(cy + 4)}">{_e(shown)}</text>'
                   f'<text class="kappa-status" x="{width - mr + 82}" y="{_f(cy + 4)}" '
                   f'fill="{GOOD if counts else BAD}">{status}</text>')
    if threshold is not None:
        tx = x(threshold)
        out.append(f'<line class="threshold" x1="{_f(tx)}" x2="{_f(tx)}" y1="{mt - 14}" '
                   f'y2="{mt + rows * row}" '
                   f'stroke="{BAD}" stroke-width="1.6" stroke-dasharray="6 4"/>'
                   f'<text class="threshold-label" x="{_f(tx)}" y="{mt - 18}" text-anchor="middle" '
                   f'fill="{BAD}">threshold {_e(fmt_kappa(threshold))}</text>')
    out.append("</svg>")
    return "\n".join(out)

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
from dataclasses import dataclass
from typing import Any

from aoven_git import numfmt
from aoven_git.render.exploratory import means_rows
from aoven_git.render.tables import labels, pair_names

__all__ = ["amendment_chart", "conditions_chart", "criterion_chart", "kappa_chart", "means_chart",
           "questions_chart"]

COLOR_A = "#d08a00"  # Okabe-Ito orange, darkened for contrast on white
COLOR_B = "#0072b2"  # Okabe-Ito blue
PAIR_COLORS = ("#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#000000", "#999933")
PAIR_SHAPES = ("circle", "square", "diamond", "triangle")
GOOD, BAD, WARN, INK, MUTED, GRID = "#2f7d4f", "#b83232", "#a86b00", "#1f2933", "#6b7785", "#e3e7ec"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


_f = numfmt.coordinate
_num = numfmt.finite


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


@dataclass(frozen=True)
class _Plot:
    """The plotting area of a bar chart: margins, size and the value axis (0 … top)."""

    left: float
    top_margin: float
    width: float
    height: float
    top: float

    def y(self, v: float) -> float:
        return self.top_margin + self.height - (v / self.top) * self.height


def _bar_legend(a: str, b: str, extra: str) -> list[str]:
    out, lx = [], 56.0
    for color, text, faded in ((COLOR_A, f"{a} (baseline)", False), (COLOR_B, f"{b} (treatment)", False),
                               (MUTED, extra, True)):
        if text:
            svg, lx = _legend_swatch(lx, 18, color, text, faded=faded)
            out.append(svg)
    return out


def _bar_axis(plot: _Plot, step: float, y_title: str) -> list[str]:
    out = []
    for i in range(round(plot.top / step) + 1):
        v = i * step
        y = _f(plot.y(v))
        out.append(f'<line class="grid" x1="{_f(plot.left)}" x2="{_f(plot.left + plot.width)}" y1="{y}" '
                   f'y2="{y}" stroke="{GRID}"/>')
        out.append(f'<text class="tick" x="{_f(plot.left - 6)}" y="{_f(plot.y(v) + 4)}" text-anchor="end">'
                   f"{_e(numfmt.mean(v) if step < 1 else numfmt.brief(v))}</text>")
    out.append(f'<text class="axis-title" transform="translate(14 {_f(plot.top_margin + plot.height / 2)}) '
               f'rotate(-90)" text-anchor="middle">{_e(y_title)}</text>')
    return out


def _bar_group(plot: _Plot, g: Mapping[str, Any], i: int, gw: float, bw: float, a: str, b: str) -> list[str]:
    """Both bars of one group (A then B), its label and the line under it."""
    cx = plot.left + gw * (i + 0.5)
    faded = bool(g.get("faded"))
    out = []
    if faded:
        out.append(f'<rect class="excluded-band" x="{_f(plot.left + gw * i + 2)}" y="{_f(plot.top_margin)}" '
                   f'width="{_f(gw - 4)}" height="{_f(plot.height)}" fill="#f3f4f6"/>')
    for j, (key, color, cond) in enumerate((("a", COLOR_A, a), ("b", COLOR_B, b))):
        v = _num(g[key])
        x0 = cx - bw - 1.5 if j == 0 else cx + 1.5
        if v is None:
            out.append(f'<text class="tick" x="{_f(x0 + bw / 2)}" y="{_f(plot.y(0) - 4)}" '
                       f'text-anchor="middle">—</text>')
            continue
        style = ' fill-opacity="0.35" stroke-dasharray="3 2"' if faded else ""
        h = max(plot.y(0) - plot.y(v), 0.0)
        out.append(
            f'<rect class="bar bar-{_e(key)}{" excluded" if faded else ""}" x="{_f(x0)}" '
            f'y="{_f(plot.y(v))}" width="{_f(bw)}" height="{_f(h)}" fill="{color}" stroke="{color}"{style}>'
            f"<title>{_e(g['title'])}: {_e(cond)} {_e(numfmt.mean(v))}</title></rect>"
        )
        out.append(f'<text class="value" x="{_f(x0 + bw / 2)}" y="{_f(plot.y(v) - 4)}" '
                   f'text-anchor="middle">{_e(numfmt.mean(v))}</text>')
    base = plot.top_margin + plot.height
    out.append(f'<text class="cat" x="{_f(cx)}" y="{_f(base + 18)}" text-anchor="middle">'
               f'{_e(g["id"])}</text>')
    if g.get("sub"):
        color = {"good": GOOD, "bad": BAD, "warn": WARN}.get(g.get("sub_tone") or "", MUTED)
        out.append(f'<text class="sub" x="{_f(cx)}" y="{_f(base + 34)}" text-anchor="middle" '
                   f'fill="{color}">{_e(g["sub"])}</text>')
    return out


def _grouped_bars(
    *, svg_id: str, cls: str, label: str, groups: Sequence[dict[str, Any]], a: str, b: str,
    y_title: str, legend_extra: str = "",
) -> str:
    """Vertical grouped bars, A then B per group; `groups` items: id, a, b, title, sub, sub_tone, faded."""
    width, height = 760, 330
    ml, mr, mt, mb = 56, 12, 44, 62
    values = [v for g in groups for v in (_num(g["a"]), _num(g["b"])) if v is not None]
    top, step = _nice_max(max(values, default=0.0) * 1.08)  # headroom for value labels
    plot = _Plot(ml, mt, width - ml - mr, height - mt - mb, top)
    gw = plot.width / max(len(groups), 1)
    bw = min(30.0, gw * 0.34)
    out = _open(svg_id, cls, width, height, label)
    out += _bar_legend(a, b, legend_extra)
    out += _bar_axis(plot, step, y_title)
    for i, g in enumerate(groups):
        out += _bar_group(plot, g, i, gw, bw, a, b)
    y0 = _f(plot.y(0))
    out.append(f'<line class="axis" x1="{ml}" x2="{_f(ml + plot.width)}" y1="{y0}" y2="{y0}" '
               f'stroke="{INK}"/>')
    out.append("</svg>")
    return "\n".join(out)


def means_chart(report: Mapping[str, Any], *, svg_id: str = "chart-means") -> str:
    a, b = labels(report)
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
    a, b = labels(report)
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


@dataclass(frozen=True)
class _KappaFrame:
    """Geometry of a κ chart: one row per dimension, the κ axis from ``lo`` to 1."""

    lo: float
    top: int  # y of the first row
    rows: int
    width: int = 760
    left: int = 58
    right: int = 150
    row: int = 36
    bottom: int = 34

    @property
    def plot_width(self) -> int:
        return self.width - self.left - self.right

    @property
    def height(self) -> int:
        return self.top + self.rows * self.row + self.bottom

    @property
    def base(self) -> int:
        return self.top + self.rows * self.row

    def x(self, v: float) -> float:
        return self.left + (min(max(v, self.lo), 1.0) - self.lo) / (1.0 - self.lo) * self.plot_width


def _kappa_low(per_dim: Mapping[str, Any], threshold: float | None) -> float:
    """The left end of the κ axis: the lowest κ, interval bound or threshold, down to a 0.2 step."""
    lows = [threshold or 0.0, 0.0]
    for k in per_dim.values():
        k = k or {}
        lows += [v for v in (_num(k.get("value")), *(_num(p) for p in (k.get("pairs") or {}).values()))
                 if v is not None]
        for iv in (k.get("intervals") or {}).values():
            if isinstance(iv, Sequence) and len(iv) == 2 and _num(iv[0]) is not None:
                lows.append(float(iv[0]))
    return max(-1.0, math.floor(min(lows) / 0.2 + 1e-9) * 0.2)


def _kappa_legend(
    pairs: Sequence[str], aggregate: str, frame_left: int, width: int
) -> tuple[list[str], float]:
    """The aggregate on the first line, rater pairs wrapped on the following ones; and the y of
    the last legend line."""
    ml = frame_left
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
    return legend, ly


def _kappa_grid(frame: _KappaFrame) -> list[str]:
    out = []
    for i in range(round((1.0 - frame.lo) / 0.2) + 1):
        v = frame.lo + i * 0.2
        out.append(f'<line class="grid" x1="{_f(frame.x(v))}" x2="{_f(frame.x(v))}" y1="{frame.top - 6}" '
                   f'y2="{frame.base}" stroke="{GRID}"/>'
                   f'<text class="tick" x="{_f(frame.x(v))}" y="{frame.base + 16}" text-anchor="middle">'
                   f"{numfmt.fixed(v, places=1)}</text>")
    out.append(f'<line class="axis" x1="{_f(frame.x(0))}" x2="{_f(frame.x(0))}" y1="{frame.top - 6}" '
               f'y2="{frame.base}" stroke="{INK}"/>')
    out.append(f'<text class="axis-title" x="{_f(frame.left + frame.plot_width / 2)}" y="{frame.height - 2}" '
               f'text-anchor="middle">weighted κ</text>')
    return out


def _kappa_aggregate(frame: _KappaFrame, did: str, k: Mapping[str, Any], cy: float, gates: bool) -> str:
    """The dimension's κ as a bar from 0 (or its reason when undefined)."""
    value, counts = _num(k.get("value")), bool(k.get("counts"))
    if value is None:
        reason = k.get("reason") or "no reason given"
        return (f'<text class="kappa-undefined" x="{_f(frame.x(0) + 6)}" y="{_f(cy + 4)}" fill="{WARN}">'
                f"undefined<title>{_e(did)}: {_e(numfmt.kappa(None, reason))}</title></text>")
    x0, x1 = sorted((frame.x(0), frame.x(value)))
    meaning = ("counts" if counts else "does not count") if gates else (
        ("reaches" if counts else "below") + " the threshold")
    return (f'<rect class="kappa-aggregate {"counts" if counts else "excluded"}" x="{_f(x0)}" '
            f'y="{_f(cy - 13)}" width="{_f(max(x1 - x0, 1.0))}" height="26" fill="{GOOD if counts else BAD}" '
            f'fill-opacity="0.22"><title>{_e(did)}: κ {_e(numfmt.kappa(value))} '
            f'({_e(meaning)})</title></rect>'
            f'<line x1="{_f(frame.x(value))}" x2="{_f(frame.x(value))}" y1="{_f(cy - 13)}" '
            f'y2="{_f(cy + 13)}" stroke="{INK}" stroke-width="2.5"/>')


def _kappa_pairs(
    frame: _KappaFrame, did: str, k: Mapping[str, Any], cy: float, pairs: Sequence[str]
) -> list[str]:
    """Each pair's κ as a mark with its interval as a whisker, spread vertically within the row."""
    spread = 18.0
    offsets = ([0.0] if len(pairs) <= 1
               else [-spread / 2 + spread * i / (len(pairs) - 1) for i in range(len(pairs))])
    out = []
    for i, pair in enumerate(pairs):
        pv = _num((k.get("pairs") or {}).get(pair))
        if pv is None:
            continue
        py = cy + offsets[i]
        color, shape = PAIR_COLORS[i % len(PAIR_COLORS)], PAIR_SHAPES[i % len(PAIR_SHAPES)]
        iv = (k.get("intervals") or {}).get(pair)
        if isinstance(iv, Sequence) and len(iv) == 2 and None not in (_num(iv[0]), _num(iv[1])):
            a_, b_ = frame.x(float(iv[0])), frame.x(float(iv[1]))
            out.append(f'<path class="kappa-whisker" d="M{_f(a_)} {_f(py)}H{_f(b_)}M{_f(a_)} {_f(py - 3)}'
                       f'v6M{_f(b_)} {_f(py - 3)}v6" stroke="{color}" stroke-width="1.3" fill="none"/>')
        out.append(_shape(shape, frame.x(pv), py, color,
                          f"{did} {pair}: κ {numfmt.kappa(pv)} {numfmt.interval(iv)}".rstrip()))
    return out


def _kappa_status(frame: _KappaFrame, k: Mapping[str, Any], cy: float, gates: bool) -> str:
    # only the verdict pass gates dimensions; another pass's low κ excludes nothing
    counts, value = bool(k.get("counts")), _num(k.get("value"))
    status = ("counts" if counts else "excluded") if gates else ("reaches" if counts else "below")
    shown = numfmt.kappa(value) if value is not None else "undefined"
    x = frame.width - frame.right
    return (f'<text class="kappa-value" x="{x + 14}" y="{_f(cy + 4)}">{_e(shown)}</text>'
            f'<text class="kappa-status" x="{x + 82}" y="{_f(cy + 4)}" '
            f'fill="{GOOD if counts else BAD}">{status}</text>')


def _threshold_line(frame: _KappaFrame, threshold: float) -> str:
    tx = _f(frame.x(threshold))
    return (f'<line class="threshold" x1="{tx}" x2="{tx}" y1="{frame.top - 14}" y2="{frame.base}" '
            f'stroke="{BAD}" stroke-width="1.6" stroke-dasharray="6 4"/>'
            f'<text class="threshold-label" x="{tx}" y="{frame.top - 18}" text-anchor="middle" '
            f'fill="{BAD}">threshold {_e(numfmt.kappa(threshold))}</text>')


def kappa_chart(report: Mapping[str, Any], pass_id: str, *, svg_id: str = "chart-kappa") -> str:
    """κ per dimension: a bar for the aggregate, a dot with its 95% whisker per rater pair."""
    per_dim: Mapping[str, Any] = (report.get("kappa") or {}).get(pass_id) or {}
    settings = report.get("kappa_settings") or {}
    threshold = _num(settings.get("threshold"))
    aggregate = str(settings.get("aggregate") or "min")
    pairs = pair_names(per_dim)
    gates = pass_id == report.get("verdict_pass")
    legend, legend_y = _kappa_legend(pairs, aggregate, 58, 760)
    frame = _KappaFrame(_kappa_low(per_dim, threshold), int(legend_y + 30), max(len(per_dim), 1))
    n_counts = sum(1 for k in per_dim.values() if (k or {}).get("counts"))
    label = (f"Weighted kappa per dimension for pass {pass_id}: {aggregate} over rater pairs as bars, "
             f"each pair with its 95% interval"
             + (f", threshold {numfmt.kappa(threshold)}" if threshold is not None else "")
             + f"; {n_counts} of {len(per_dim)} dimensions reach it.")
    out = _open(svg_id, "chart-kappa", frame.width, frame.height, label) + legend + _kappa_grid(frame)
    for r, (did, k) in enumerate(per_dim.items()):
        k = k or {}
        cy = frame.top + r * frame.row + frame.row / 2
        out.append(f'<text class="cat" x="{frame.left - 8}" y="{_f(cy + 4)}" text-anchor="end">'
                   f"{_e(did)}</text>")
        out.append(_kappa_aggregate(frame, did, k, cy, gates))
        out += _kappa_pairs(frame, did, k, cy, pairs)
        out.append(_kappa_status(frame, k, cy, gates))
    if threshold is not None:
        out.append(_threshold_line(frame, threshold))
    out.append("</svg>")
    return "\n".join(out)


# --------------------------------------------------------------------------- amendments

AMENDED_BAND = "#fff3dc"


def _amended_bars(plot: _Plot, row: Mapping[str, Any], x: float, bw: float, a: str, b: str) -> list[str]:
    """The four bars of one dimension: A and B, each pre-registered (faded) then exploratory
    (solid), a mark over a solid bar whose condition has cells that moved."""
    out = []
    for j, (cond, color) in enumerate(((a, COLOR_A), (b, COLOR_B))):
        # the condition of `Q2/B/D8`, or of `L1/TRT#2/V` with a replicate
        moved = [c for c in row["moved"] if [p.partition("#")[0] for p in c.split("/")[1:2]] == [cond]]
        for k, (key, label) in enumerate((("pre", "pre-registered"), ("new", "exploratory"))):
            v = _num(row[key][cond])
            x0 = x + (2 * j + k) * bw + j * 6
            if v is None:
                out.append(f'<text class="tick" x="{_f(x0 + bw / 2)}" y="{_f(plot.y(0) - 4)}" '
                           f'text-anchor="middle">—</text>')
                continue
            style = ' fill-opacity="0.3" stroke-dasharray="3 2"' if key == "pre" else ""
            out.append(f'<rect class="bar bar-{key} bar-{_e(cond)}" x="{_f(x0)}" y="{_f(plot.y(v))}" '
                       f'width="{_f(bw - 1)}" height="{_f(max(plot.y(0) - plot.y(v), 0.0))}" fill="{color}" '
                       f'stroke="{color}"{style}><title>{_e(row["id"])} {_e(cond)}, {label}: '
                       f"{_e(numfmt.mean(v))}</title></rect>")
            if key == "new":
                out.append(f'<text class="value" x="{_f(x0 + bw / 2)}" y="{_f(plot.y(v) - 4)}" '
                           f'text-anchor="middle">{_e(numfmt.mean(v))}</text>')
            if key == "new" and moved:
                cy = plot.y(v) - 17
                what = f"{row['id']} {cond}: {len(moved)} cell{'s' if len(moved) != 1 else ''} moved"
                out.append(f'<path class="moved-mark" d="M{_f(x0 + bw / 2)} {_f(cy + 5)}l-4.5 -7h9z" '
                           f'fill="{WARN}"><title>{_e(what)} ({_e(", ".join(moved))})</title></path>')
    return out


def _amended_group(plot: _Plot, row: Mapping[str, Any], i: int, gw: float, a: str, b: str) -> list[str]:
    bw = min(16.0, gw * 0.19)
    cx = plot.left + gw * (i + 0.5)
    out = []
    if row["amended"]:
        out.append(f'<rect class="amended-band" x="{_f(plot.left + gw * i + 2)}" y="{_f(plot.top_margin)}" '
                   f'width="{_f(gw - 4)}" height="{_f(plot.height)}" fill="{AMENDED_BAND}"/>')
    out += _amended_bars(plot, row, cx - 2 * bw - 3, bw, a, b)
    base = plot.top_margin + plot.height
    out.append(f'<text class="cat" x="{_f(cx)}" y="{_f(base + 18)}" text-anchor="middle">'
               f'{_e(row["id"])}</text>')
    n = len(row["moved"])
    sub = f"✎ {n} cell{'s' if n != 1 else ''} moved" if n else ("amended" if row["amended"] else
                                                               ("" if row["counted"] else "excluded"))
    if sub:
        color = WARN if row["amended"] else BAD
        out.append(f'<text class="sub" x="{_f(cx)}" y="{_f(base + 34)}" text-anchor="middle" '
                   f'fill="{color}">{_e(sub)}</text>')
    return out


def amendment_chart(report: Mapping[str, Any], entry: Mapping[str, Any], *, svg_id: str) -> str:
    """Mean score per dimension, pre-registered (faded) against the amendment's exploratory
    layer (solid), for both conditions; amended dimensions on a band, moved cells marked."""
    a, b = labels(report)
    rows = means_rows(report, entry)
    width, height = 760, 340
    ml, mr, mt, mb = 56, 12, 44, 62
    values = [v for r in rows for side in ("pre", "new") for v in (_num(r[side][a]), _num(r[side][b]))
              if v is not None]
    top, step = _nice_max(max(values, default=0.0) * 1.15)  # headroom for labels and marks
    plot = _Plot(ml, mt, width - ml - mr, height - mt - mb, top)
    gw = plot.width / max(len(rows), 1)
    moved = sum(len(r["moved"]) for r in rows)
    label = (f"Amendment {entry.get('id')}: mean score per dimension, {a} and {b}, pre-registered (faded) "
             f"and exploratory (solid), lower is better; {moved} cell{'s' if moved != 1 else ''} moved.")
    out = _open(svg_id, "chart-amendment", width, height, label)
    lx = 56.0
    for color, text, faded in ((COLOR_A, f"{a} (baseline)", False), (COLOR_B, f"{b} (treatment)", False),
                               (MUTED, "faded: pre-registered", True)):
        svg, lx = _legend_swatch(lx, 18, color, text, faded=faded)
        out.append(svg)
    out.append(f'<rect x="{_f(lx)}" y="9" width="12" height="12" fill="{AMENDED_BAND}" stroke="{WARN}"/>'
               f'<text class="legend" x="{_f(lx + 17)}" y="19">amended; ▼ cells moved</text>')
    out += _bar_axis(plot, step, "mean score (lower is better)")
    for i, row in enumerate(rows):
        out += _amended_group(plot, row, i, gw, a, b)
    y0 = _f(plot.y(0))
    out.append(f'<line class="axis" x1="{ml}" x2="{_f(ml + plot.width)}" y1="{y0}" y2="{y0}" '
               f'stroke="{INK}"/>')
    out.append("</svg>")
    return "\n".join(out)


# --------------------------------------------------------------------------- criteria (designs)


def _nice_range(lo: float, hi: float) -> tuple[float, float, float]:
    """(axis start, axis end, tick step) covering lo … hi with at most eight steps."""
    if hi - lo <= 0:
        lo, hi = lo - 1, hi + 1
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100):
        start, end = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
        if (end - start) / step <= 8:
            return float(start), float(end), float(step)
    step = 10 ** math.ceil(math.log10((hi - lo) / 8))
    return float(math.floor(lo / step) * step), float(math.ceil(hi / step) * step), float(step)


@dataclass(frozen=True)
class _RowFrame:
    """Geometry of a criterion chart: one horizontal bar per value, the value axis lo … hi."""

    lo: float
    hi: float
    rows: int
    width: int = 760
    left: int = 96
    right: int = 200
    top: int = 58
    row: int = 30
    bottom: int = 40

    @property
    def plot_width(self) -> int:
        return self.width - self.left - self.right

    @property
    def base(self) -> int:
        return self.top + self.rows * self.row

    @property
    def height(self) -> int:
        return self.base + self.bottom

    def x(self, v: float) -> float:
        return self.left + (min(max(v, self.lo), self.hi) - self.lo) / (self.hi - self.lo) * self.plot_width


def _criterion_frame(values: Sequence[float], bound: Mapping[str, Any] | None, rows: int) -> _RowFrame:
    """The axis spans every value, zero and the bound (both edges of a `within` band)."""
    points = [0.0, *values]
    b = _num(numfmt.to_fraction((bound or {}).get("value"), (bound or {}).get("value_exact")))
    if b is not None:
        points += [b, -b] if (bound or {}).get("kind") == "within" else [b]
    lo, hi = min(points), max(points)
    pad = (hi - lo) * 0.06 or 0.5
    start, end, _ = _nice_range(lo - (pad if lo < 0 else 0), hi + (pad if hi > 0 else 0))
    return _RowFrame(start, end, max(rows, 1))


def _criterion_axis(frame: _RowFrame, title: str) -> list[str]:
    _, _, step = _nice_range(frame.lo, frame.hi)
    out = []
    for i in range(round((frame.hi - frame.lo) / step) + 1):
        v = frame.lo + i * step
        x = _f(frame.x(v))
        out.append(f'<line class="grid" x1="{x}" x2="{x}" y1="{frame.top - 6}" y2="{frame.base}" '
                   f'stroke="{GRID}"/>'
                   f'<text class="tick" x="{x}" y="{frame.base + 16}" text-anchor="middle">'
                   f"{_e(numfmt.brief(round(v, 6)))}</text>")
    x0 = _f(frame.x(0))
    out.append(f'<line class="axis zero" x1="{x0}" x2="{x0}" y1="{frame.top - 6}" y2="{frame.base}" '
               f'stroke="{INK}"/>')
    out.append(f'<text class="axis-title" x="{_f(frame.left + frame.plot_width / 2)}" y="{frame.height - 4}" '
               f'text-anchor="middle">{_e(title)}</text>')
    return out


def _criterion_bound(frame: _RowFrame, bound: Mapping[str, Any] | None, said: str) -> list[str]:
    """The bound: a shaded band with dashed edges for `within`, else one dashed line."""
    b = _num(numfmt.to_fraction((bound or {}).get("value"), (bound or {}).get("value_exact")))
    if b is None:
        return []
    y1, y2 = frame.top - 14, frame.base
    edges = [-abs(b), abs(b)] if (bound or {}).get("kind") == "within" else [b]
    out = []
    if len(edges) == 2:
        x0, x1 = frame.x(edges[0]), frame.x(edges[1])
        out.append(f'<rect class="bound-band" x="{_f(x0)}" y="{_f(y1)}" width="{_f(max(x1 - x0, 1.0))}" '
                   f'height="{_f(y2 - y1)}" fill="{GOOD}" fill-opacity="0.10"/>')
    for edge in edges:
        x = _f(frame.x(edge))
        out.append(f'<line class="bound" x1="{x}" x2="{x}" y1="{_f(y1)}" y2="{_f(y2)}" stroke="{INK}" '
                   f'stroke-width="1.6" stroke-dasharray="6 4"><title>bound {_e(said)}</title></line>')
    out.append(f'<text class="threshold-label" x="{_f(frame.x(edges[-1]))}" y="{_f(y1 - 4)}" '
               f'text-anchor="middle">bound {_e(said)}</text>')
    return out


def _criterion_row(frame: _RowFrame, cy: float, key: str, shown: str, value: float | None,
                   ok: bool | None) -> list[str]:
    """One value: its key, a bar from zero coloured by whether it satisfies the bound, the
    number, and the words "meets" or "misses" (colour is never the only sign)."""
    out = [f'<text class="cat" x="{frame.left - 8}" y="{_f(cy + 4)}" text-anchor="end">{_e(key)}</text>']
    right = frame.width - frame.right + 12
    if value is None:
        out.append(f'<text class="criterion-undefined" x="{_f(frame.x(0) + 6)}" y="{_f(cy + 4)}" '
                   f'fill="{WARN}">undefined<title>{_e(key)}: undefined</title></text>')
        out.append(f'<text class="criterion-status" x="{right + 104}" y="{_f(cy + 4)}" fill="{WARN}">'
                   "undefined</text>")
        return out
    state, color = ("unknown", MUTED) if ok is None else ("meets", GOOD) if ok else ("misses", BAD)
    x0, x1 = sorted((frame.x(0), frame.x(value)))
    out.append(f'<rect class="criterion-bar {state}" x="{_f(x0)}" y="{_f(cy - 8)}" '
               f'width="{_f(max(x1 - x0, 1.0))}" height="16" fill="{color}" fill-opacity="0.75">'
               f"<title>{_e(key)}: {_e(shown)}, {state} the bound</title></rect>")
    mark = {"meets": "✓ ", "misses": "✗ "}.get(state, "")
    out.append(f'<text class="value" x="{right}" y="{_f(cy + 4)}">{_e(shown)}</text>'
               f'<text class="criterion-status" x="{right + 104}" y="{_f(cy + 4)}" fill="{color}">'
               f"{mark}{state}</text>")
    return out


def criterion_chart(criterion: Mapping[str, Any], *, svg_id: str, shown: Sequence[str] = (),
                    bound_said: str = "") -> str:
    """One criterion: a bar per value (dimension, sum or question) from zero, the bound as a
    dashed line (a band for `within`), each bar saying whether it meets the bound. `shown` are
    the values as the tables print them, `bound_said` the bound as the tables print it."""
    vals = criterion.get("values") or {}
    exact = criterion.get("values_exact") or {}
    sat = criterion.get("satisfied") or {}
    keys = [str(k) for k in vals]
    numbers = [_num(numfmt.to_fraction(vals[k], exact.get(k))) for k in vals]
    frame = _criterion_frame([v for v in numbers if v is not None], criterion.get("bound"), len(keys))
    meets = sum(1 for k in vals if sat.get(k) is True)
    label = (f"Criterion {criterion.get('id')}: {criterion.get('text') or ''} — {meets} of {len(keys)} "
             f"values meet the bound {bound_said}; outcome {criterion.get('outcome')}.")
    out = _open(svg_id, "chart-criterion", frame.width, frame.height, label)
    out.append(f'<rect x="{frame.left}" y="9" width="14" height="12" fill="{GOOD}" fill-opacity="0.75"/>'
               f'<text class="legend" x="{frame.left + 20}" y="19">meets the bound</text>'
               f'<rect x="{frame.left + 140}" y="9" width="14" height="12" fill="{BAD}" fill-opacity="0.75"/>'
               f'<text class="legend" x="{frame.left + 160}" y="19">misses it</text>'
               f'<line x1="{frame.left + 250}" x2="{frame.left + 250}" y1="8" y2="22" stroke="{INK}" '
               f'stroke-dasharray="4 3" stroke-width="1.6"/>'
               f'<text class="legend" x="{frame.left + 258}" y="19">the bound</text>')
    out += _criterion_axis(frame, "value (v)")
    out += _criterion_bound(frame, criterion.get("bound"), bound_said)
    for r, key in enumerate(keys):
        cy = frame.top + r * frame.row + frame.row / 2
        number = numbers[r]
        text = shown[r] if r < len(shown) else numfmt.brief(number) if number is not None else "undefined"
        ok = sat.get(key) if isinstance(sat.get(key), bool) else None
        out += _criterion_row(frame, cy, key, text, number, ok)
    out.append("</svg>")
    return "\n".join(out)


# --------------------------------------------------------------------------- a design's conditions

#: one colour per condition of a design: the baseline and the first treatment as in every chart,
#: then the Okabe-Ito colours the κ chart uses for rater pairs
CONDITION_COLORS = (COLOR_A, COLOR_B, *PAIR_COLORS)


def _condition_bars(plot: _Plot, d: Mapping[str, Any], conds: Sequence[str], cx: float, bw: float,
                    faded: bool) -> list[str]:
    """One dimension's bars, one per condition, left to right in the document's order; the value
    of each is its tooltip (labels over bars this narrow would overlap)."""
    out = []
    style = ' fill-opacity="0.35" stroke-dasharray="3 2"' if faded else ""
    for j, cond in enumerate(conds):
        color = CONDITION_COLORS[j % len(CONDITION_COLORS)]
        x0 = cx - bw * len(conds) / 2 + j * bw
        v = _num(numfmt.to_fraction(d.get(f"mean_{cond}"), d.get(f"mean_{cond}_exact")))
        if v is None:
            out.append(f'<text class="tick" x="{_f(x0 + bw / 2)}" y="{_f(plot.y(0) - 4)}" '
                       f'text-anchor="middle">—</text>')
            continue
        out.append(f'<rect class="bar bar-condition" x="{_f(x0 + 0.5)}" y="{_f(plot.y(v))}" '
                   f'width="{_f(bw - 1)}" height="{_f(max(plot.y(0) - plot.y(v), 0.0))}" fill="{color}" '
                   f'stroke="{color}"{style}><title>{_e(d.get("id"))}: {_e(cond)} {_e(numfmt.mean(v))}'
                   f"</title></rect>")
    return out


def conditions_chart(report: Mapping[str, Any], conds: Sequence[str], *, svg_id: str = "chart-means") -> str:
    """A design's mean score per dimension for every condition (more than the seed's two): one bar
    per condition, dimensions excluded by the agreement gate faded on a grey band."""
    a = labels(report)[0]
    dims = list(report.get("dimensions") or [])
    width, height = 760, 330
    ml, mr, mt, mb = 56, 12, 44, 62
    values = [v for d in dims for c in conds
              if (v := _num(numfmt.to_fraction(d.get(f"mean_{c}"), d.get(f"mean_{c}_exact")))) is not None]
    top, step = _nice_max(max(values, default=0.0) * 1.08)
    plot = _Plot(ml, mt, width - ml - mr, height - mt - mb, top)
    gw = plot.width / max(len(dims), 1)
    bw = min(22.0, gw * 0.8 / max(len(conds), 1))
    label = (f"Mean score per dimension for each of {len(conds)} conditions ({', '.join(conds)}), lower is "
             "better; faded: excluded for low agreement.")
    out = _open(svg_id, "chart-means chart-conditions", width, height, label)
    lx = 56.0
    for j, cond in enumerate(conds):
        svg, lx = _legend_swatch(lx, 18, CONDITION_COLORS[j % len(CONDITION_COLORS)],
                                 f"{cond} (baseline)" if cond == a else cond)
        out.append(svg)
    out += _bar_axis(plot, step, "mean score (lower is better)")
    base = plot.top_margin + plot.height
    for i, d in enumerate(dims):
        cx = plot.left + gw * (i + 0.5)
        faded = not d.get("counted", True)
        if faded:
            out.append(f'<rect class="excluded-band" x="{_f(plot.left + gw * i + 2)}" '
                       f'y="{_f(plot.top_margin)}" width="{_f(gw - 4)}" height="{_f(plot.height)}" '
                       'fill="#f3f4f6"/>')
        out += _condition_bars(plot, d, conds, cx, bw, faded)
        out.append(f'<text class="cat" x="{_f(cx)}" y="{_f(base + 18)}" text-anchor="middle">'
                   f'{_e(d.get("id"))}</text>')
        if faded:
            out.append(f'<text class="sub" x="{_f(cx)}" y="{_f(base + 34)}" text-anchor="middle" '
                       f'fill="{BAD}">excluded</text>')
    y0 = _f(plot.y(0))
    out.append(f'<line class="axis" x1="{ml}" x2="{_f(ml + plot.width)}" y1="{y0}" y2="{y0}" '
               f'stroke="{INK}"/>')
    out.append("</svg>")
    return "\n".join(out)

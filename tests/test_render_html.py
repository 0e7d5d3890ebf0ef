"""HTML rendering: self-contained, escaped, charts present and drawn to scale, renders in Chromium.

The Chromium checks run whenever a Chromium binary is installed. The screenshot in the docs is
the real report of the bundled example study (what `aoven-git demo` writes), not a hand-made
document; to refresh it after a styling change or a change to the example:

    AOVEN_UPDATE_SCREENSHOT=1 python -m pytest tests/test_render_html.py -q -k example_study_screenshot
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from aoven_git.render.html import CSP, render_html

ROOT = Path(__file__).resolve().parent.parent


def _load_variants() -> Any:
    """The report variants live next door; loaded by path so any pytest import mode works."""
    path = Path(__file__).with_name("test_render_markdown.py")
    spec = importlib.util.spec_from_file_location("_render_variants", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_V = _load_variants()
EVIL, VARIANTS, sample = _V.EVIL, _V.VARIANTS, _V.sample
contested_report, not_ready_report, not_verified_report = (
    _V.contested_report, _V.not_ready_report, _V.not_verified_report)
evil_report = _V.evil_report
SCREENSHOT = ROOT / "docs" / "report-screenshot.png"


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node] = []
        self.content: list[str | Node] = []  # text and children in document order

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def iter(self) -> Any:
        yield self
        for c in self.children:
            yield from c.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter()
                if (tag is None or n.tag == tag) and (cls is None or cls in n.classes())]

    def all_text(self) -> str:
        return "".join(c if isinstance(c, str) else c.all_text() for c in self.content)


VOID = {"meta", "link", "br", "img", "hr", "input", "source", "area", "base", "col", "embed", "param",
        "track", "wbr"}


class Tree(HTMLParser):
    """A small DOM from the standard library parser; SVG leaf elements are written self-closing."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.style = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        self.cur.content.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        self.cur.content.append(node)

    def handle_endtag(self, tag: str) -> None:
        node = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"unbalanced </{tag}>"
        self.cur = node.parent

    def handle_data(self, data: str) -> None:
        self.cur.content.append(data)
        if self.cur.tag == "style":
            self.style += data


def parse(doc: str) -> Tree:
    t = Tree()
    t.feed(doc)
    t.close()
    assert t.cur is t.root, "unclosed elements"
    return t


def by_id(tree: Tree, ident: str) -> Node:
    found = [n for n in tree.root.iter() if n.attrs.get("id") == ident]
    assert len(found) == 1, f"expected one #{ident}, found {len(found)}"
    return found[0]


# --- self-contained and safe ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_self_contained_no_network_no_script(name: str) -> None:
    doc = render_html(VARIANTS[name]())
    tree = parse(doc)
    tags = {n.tag for n in tree.root.iter()}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "video", "audio", "base", "form"}
    for n in tree.root.iter():
        for attr, value in n.attrs.items():
            assert not attr.startswith("on"), (n.tag, attr)
            if attr in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
                assert (value or "").startswith("#"), (n.tag, attr, value)
            assert "url(" not in (value or "").lower()
    assert "url(" not in tree.style.lower() and "@import" not in tree.style
    csp = [n for n in tree.root.find_all("meta") if n.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in (csp[0].attrs.get("content") or "")
    assert "script-src" not in (csp[0].attrs.get("content") or "")  # scripts fall under 'none'


def test_sample_has_no_external_reference_at_all() -> None:
    doc = render_html(sample())
    assert "http://" not in doc and "https://" not in doc
    assert doc.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in doc


def test_malicious_strings_are_escaped() -> None:
    doc = render_html(evil_report())
    tree = parse(doc)
    assert not tree.root.find_all("script")
    assert not tree.root.find_all("img")
    assert "<script>alert(1)</script>" not in doc
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc
    # the quote in a dimension name does not open an attribute in the SVG <title>/aria-label
    assert all("onload" not in a for n in tree.root.iter() for a in n.attrs)
    texts = tree.root.all_text()
    assert EVIL in texts  # shown to the reader as text, verbatim
    assert '"><img src=x onerror=alert(3)>' in texts


def test_verdict_colour_classes() -> None:
    cases = {"PASS": "v-pass", "FAIL": "v-fail", "INCONCLUSIVE": "v-amber", "CONTESTED": "v-amber",
             "NOT-READY": "v-grey"}
    for verdict, cls in cases.items():
        r = sample()
        r["verdict"] = verdict
        section = by_id(parse(render_html(r)), "verdict")
        assert cls in section.classes(), verdict
        assert section.find_all("span", "badge")[0].all_text() == verdict


# --- charts --------------------------------------------------------------------------------------


def _chart(tree: Tree, ident: str, cls: str) -> Node:
    svg = by_id(tree, ident)
    assert svg.tag == "svg" and cls in svg.classes()
    assert svg.attrs.get("role") == "img"
    assert (svg.attrs.get("aria-label") or "").strip()
    first = svg.children[0]
    assert first.tag == "title" and first.all_text().strip()
    return svg


def _f(node: Node, attr: str) -> float:
    return float(node.attrs[attr] or "nan")


def test_means_chart_bars_to_scale_and_excluded_marked() -> None:
    tree = parse(render_html(sample()))
    svg = _chart(tree, "chart-means", "chart-means")
    bars = svg.find_all("rect", "bar")
    assert len(bars) == 16  # 8 dimensions x (A, B)
    a_bars, b_bars = svg.find_all("rect", "bar-a"), svg.find_all("rect", "bar-b")
    assert len(a_bars) == len(b_bars) == 8
    excluded = svg.find_all("rect", "excluded")
    assert len(excluded) == 2 and all("D7" in e.all_text() for e in excluded)
    assert len(svg.find_all("rect", "excluded-band")) == 1
    # heights proportional to the means of the sample (D1: A 2.0, B 1.0; D3: A 1.5, B 0.7)
    h = [_f(b, "height") for b in a_bars], [_f(b, "height") for b in b_bars]
    assert h[0][0] == pytest.approx(2 * h[1][0], rel=0.02)
    assert h[1][2] / h[0][2] == pytest.approx(0.7 / 1.5, rel=0.02)
    # bars share a baseline
    bottoms = {round(_f(b, "y") + _f(b, "height"), 1) for b in bars}
    assert len(bottoms) == 1


def test_kappa_charts_marks_and_threshold_line() -> None:
    tree = parse(render_html(sample()))
    main = _chart(tree, "chart-kappa", "chart-kappa")
    assert "unblinded" in (main.attrs.get("aria-label") or "")
    assert len(main.find_all("rect", "kappa-aggregate")) == 8
    assert len(main.find_all(cls="kappa-pair")) == 24
    assert len(main.find_all(cls="kappa-whisker")) == 24
    excluded = main.find_all("rect", "excluded")
    assert len(excluded) == 1 and "D7" in excluded[0].all_text()
    thr = main.find_all("line", "threshold")
    assert len(thr) == 1 and thr[0].attrs.get("stroke-dasharray")
    # the dashed line sits where the axis says 0.6
    ticks = {t.all_text(): _f(t, "x") for t in main.find_all("text", "tick")}
    assert _f(thr[0], "x1") == pytest.approx(ticks["0.6"], abs=0.2)
    # an aggregate bar ends at its value on the same axis (D1 κ = 0.7904)
    d1 = main.find_all("rect", "kappa-aggregate")[0]
    x0, x1 = ticks["0.0"], ticks["1.0"]
    assert _f(d1, "x") + _f(d1, "width") == pytest.approx(x0 + 0.7904 * (x1 - x0), abs=0.3)

    blinded = _chart(tree, "chart-kappa-2", "chart-kappa")
    assert len(blinded.find_all("rect", "kappa-aggregate")) == 7
    undefined = blinded.find_all("text", "kappa-undefined")
    assert len(undefined) == 1 and "expected agreement = 1" in undefined[0].all_text()
    assert len(blinded.find_all(cls="kappa-pair")) == 23  # one pair undefined: no dot
    neg = {t.all_text() for t in blinded.find_all("text", "tick")}
    assert "-0.4" in neg  # axis extends to the lowest interval bound (-0.25)


def test_questions_chart() -> None:
    tree = parse(render_html(sample()))
    svg = _chart(tree, "chart-questions", "chart-questions")
    bars = svg.find_all("rect", "bar")
    assert len(bars) == 20
    subs = [t.all_text() for t in svg.find_all("text", "sub")]
    assert subs[0] == "✓ 6/7" and subs[9] == "0/7"
    assert sum(s.startswith("✓") for s in subs) == 7
    b_q6, a_q6 = svg.find_all("rect", "bar-b")[5], svg.find_all("rect", "bar-a")[5]
    assert _f(b_q6, "height") / _f(a_q6, "height") == pytest.approx(4.3333 / 12, rel=0.02)


def test_tables_mirror_markdown_content() -> None:
    tree = parse(render_html(not_ready_report()))
    tables = tree.root.find_all("table")
    classes = [t.attrs.get("class") for t in tables]
    assert classes[:4] == ["rules", "means", "raters", "kappa"]
    rules_rows = tables[0].find_all("tr")
    assert len(rules_rows) == 1 + 17
    seals_text = by_id(tree, "seals").all_text()
    assert "violated" in seals_text and "3f2a9c4" in seals_text and "3f2a9c4e" not in seals_text
    assert "revealed with --force" in seals_text
    verdict_text = by_id(tree, "verdict").all_text()
    assert "required rater logician has not revealed scores for pass blinded" in verdict_text
    c = parse(render_html(contested_report()))
    assert "worst case for B: INCONCLUSIVE (improvement 18.0%)" in by_id(c, "verdict").all_text()
    nv = by_id(parse(render_html(not_verified_report())), "seals").all_text()
    assert "seals were not verified" in nv


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_no_nan_or_none_in_html(name: str) -> None:
    text = parse(render_html(VARIANTS[name]())).root.all_text()
    assert not re.search(r"\b(nan|NaN|None|null|Infinity)\b", text), name


# --- headless Chromium ---------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _run_chromium(tmp: Path, page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    binary = _chromium()
    if binary is None:
        pytest.skip("chromium not installed: no chromium/chromium-browser/google-chrome on PATH")
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", f"--user-data-dir={tmp / 'profile'}", "--enable-logging=stderr", "--v=0",
           *extra, page.resolve().as_uri()]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired as exc:  # pragma: no cover - environment problem, not a skip
        raise AssertionError(f"chromium did not finish in 120 s: {cmd}") from exc


def _console_lines(stderr: str) -> list[str]:
    """Messages the page wrote to the console (incl. CSP refusals and uncaught errors)."""
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


def _png_pixels(data: bytes, max_rows: int = 800) -> tuple[int, int, int, bytes]:
    """(width, height, bpp, the first `max_rows` unfiltered rows) of an 8-bit RGB/RGBA PNG, stdlib only."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = chunk
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, ctype = struct.unpack(">IIBB", ihdr[:10])
    assert depth == 8 and ctype in (2, 6), (depth, ctype)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    out = bytearray()
    prev = bytearray(stride)
    for y in range(min(height, max_rows)):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += line
        prev = line
    return width, height, bpp, bytes(out)


def _screenshot(tmp: Path, html_text: str, png: Path) -> subprocess.CompletedProcess[str]:
    page = tmp / "report.html"
    page.write_text(html_text, encoding="utf-8")
    return _run_chromium(tmp, page, f"--screenshot={png}", "--window-size=1280,2400")


def test_chromium_console_capture_detects_page_errors(tmp_path: Path) -> None:
    """Control for the next test: the stderr method really sees console errors and CSP refusals."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><body><p id=x>x</p><script>console.error('boom-123');"
                    "missingFn();</script></body></html>", encoding="utf-8")
    proc = _run_chromium(tmp_path, page, "--dump-dom")
    lines = _console_lines(proc.stderr)
    assert any("boom-123" in ln for ln in lines), proc.stderr[-2000:]
    assert any("Uncaught" in ln for ln in lines)
    # with the report's CSP an injected script is refused, and the refusal is visible too
    page.write_text(f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{CSP}">'
                    "</head><body><script>console.error('must-not-run')</script></body></html>",
                    encoding="utf-8")
    proc = _run_chromium(tmp_path, page, "--dump-dom")
    lines = _console_lines(proc.stderr)
    assert not any("must-not-run" in ln for ln in lines)
    assert any("Content Security Policy" in ln for ln in lines), proc.stderr[-2000:]


@pytest.mark.slow
def test_chromium_renders_report_without_console_errors(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(sample()), encoding="utf-8")
    proc = _run_chromium(tmp_path, page, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    for ident in ("chart-means", "chart-kappa", "chart-questions"):
        assert f'id="{ident}"' in dom
    assert _console_lines(proc.stderr) == []


@pytest.mark.slow
def test_chromium_screenshot_is_non_trivial(tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    proc = _screenshot(tmp_path, render_html(sample()), png)
    assert png.exists(), proc.stderr[-2000:]
    data = png.read_bytes()
    assert len(data) > 50_000
    width, height, bpp, pixels = _png_pixels(data, max_rows=450)
    assert (width, height) == (1280, 2400)
    total = width * 450
    non_white = sum(1 for i in range(0, len(pixels), bpp * 7) if min(pixels[i:i + 3]) < 235)
    assert non_white / (total / 7) > 0.05  # text, tables and charts, not a blank page
    # the PASS badge colour (#2f7d4f) is painted near the top of the page
    top = pixels[: width * 450 * bpp]
    green = sum(1 for i in range(0, len(top), bpp)
                if abs(top[i] - 0x2F) < 12 and abs(top[i + 1] - 0x7D) < 12 and abs(top[i + 2] - 0x4F) < 12)
    assert green > 500


def _green_pixels(pixels: bytes, bpp: int) -> int:
    """Pixels of the PASS badge colour (#2f7d4f)."""
    target = (0x2F, 0x7D, 0x4F)
    return sum(1 for i in range(0, len(pixels), bpp)
               if all(abs(pixels[i + c] - target[c]) < 12 for c in range(3)))


@pytest.mark.slow
def test_example_study_screenshot(tmp_path: Path) -> None:
    """The README's picture is the demo's own HTML report of the bundled example study.

    Builds it the way a new user does (`aoven-git demo --keep`), checks the page renders with the
    verdict, charts and no console errors, and (with AOVEN_UPDATE_SCREENSHOT=1) saves the PNG.
    """
    if _chromium() is None:
        pytest.skip("chromium not installed: no chromium/chromium-browser/google-chrome on PATH")
    kept = tmp_path / "study"
    proc = subprocess.run([sys.executable, "-m", "aoven_git", "demo", "--keep", str(kept)],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = kept / "aoven-report.html"
    html_text = page.read_text(encoding="utf-8")
    assert "Verdict" in html_text and "aoven-v0.1" in html_text
    dom = _run_chromium(tmp_path, page, "--dump-dom")
    for ident in ("chart-means", "chart-kappa", "chart-questions"):
        assert ident in dom.stdout
    assert _console_lines(dom.stderr) == []
    png = tmp_path / "example.png"
    shot = _run_chromium(tmp_path, page, f"--screenshot={png}", "--window-size=1280,2400")
    assert png.exists(), shot.stderr[-2000:]
    data = png.read_bytes()
    width, height, bpp, pixels = _png_pixels(data, max_rows=450)
    assert (width, height) == (1280, 2400)
    assert _green_pixels(pixels[: width * 450 * bpp], bpp) > 500  # the example study passes
    if os.environ.get("AOVEN_UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        SCREENSHOT.write_bytes(data)


def test_docs_screenshot_is_a_full_width_report() -> None:
    """The committed picture is what `test_example_study_screenshot` writes: 1280x2400, PASS badge."""
    data = SCREENSHOT.read_bytes()
    width, height, bpp, pixels = _png_pixels(data, max_rows=450)
    assert (width, height) == (1280, 2400)
    assert _green_pixels(pixels, bpp) > 500


def test_only_the_verdict_pass_says_excluded() -> None:
    """A low κ in the blinded pass gates nothing: its chart must not call a dimension excluded."""
    report = sample()
    assert report["verdict_pass"] == "unblinded"
    assert report["kappa"]["blinded"]["D7"]["counts"] is False
    html = render_html(report)
    tree = parse(html)
    verdict_chart, other_chart = by_id(tree, "chart-kappa"), by_id(tree, "chart-kappa-2")

    def statuses(chart: Node) -> list[str]:
        return ["".join(c for c in n.content if isinstance(c, str))
                for n in chart.iter() if "kappa-status" in n.classes()]

    assert "excluded" in statuses(verdict_chart)
    assert "excluded" not in statuses(other_chart) and "counts" not in statuses(other_chart)
    assert statuses(other_chart).count("below") == sum(
        1 for k in report["kappa"]["blinded"].values() if not k["counts"])
    from aoven_git.render.markdown import render_markdown

    md_text = render_markdown(report)
    blinded = md_text[md_text.index("### Pass `blinded`"):]
    header = next(line for line in blinded.splitlines() if line.startswith("| dimension"))
    assert "| ≥ 0.600 |" in header and "counts" not in header


def test_raters_caveats_and_question_texts_in_html() -> None:
    tree = parse(render_html(sample()))
    raters = by_id(tree, "raters")
    rows = [[c.all_text() for c in tr.find_all("td")] for tr in raters.find_all("tr")[1:]]
    assert ["redteam", "Red Team", "optional", "scored", "scored"] in rows
    caveats = [li.all_text() for ul in by_id(tree, "agreement").find_all("ul", "caveats")
               for li in ul.find_all("li")]
    assert sum("rests on 10 items for every dimension" in c for c in caveats) == 1
    assert any(c.startswith("No interval for D5 (logician~redteam)") for c in caveats)
    assert "wide κ interval for D7, D8" in by_id(tree, "verdict").all_text()
    head = [th.all_text() for th in by_id(tree, "questions").find_all("th")]
    assert head[:2] == ["question", "text"]
    assert "Is it ethical to eat meat?" in by_id(tree, "questions").all_text()

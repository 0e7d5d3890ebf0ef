"""A design's HTML report in headless Chromium (as tests/test_render_html.py does for the seed's):
the page loads under its Content-Security-Policy with no console error, the decision and every
criterion chart are in the DOM, and a criterion chart is painted with both outcomes' colours next
to the words that say them. Skipped when no Chromium is installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from aoven_git.render.designs import bound_text, value_text, values
from aoven_git.render.html import CSP, CSS, DESIGN_CSS, render_html
from aoven_git.render.svg import criterion_chart
from tests.design_documents import DESIGN_VARIANTS, probe_document

HERE = Path(__file__).resolve().parent


def _load_html_tests() -> Any:
    spec = importlib.util.spec_from_file_location("_html_designs_helpers", HERE / "test_render_html.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_H = _load_html_tests()
_run_chromium, _console_lines, _png_pixels = _H._run_chromium, _H._console_lines, _H._png_pixels

#: chart ids each variant must show in the browser's DOM (seed criteria have no chart; NOT-READY none)
EXPECTED = {
    "decided": ["chart-criterion-1", "chart-criterion-2", "chart-criterion-4", "chart-criterion-5"],
    "probes": ["chart-criterion-1", "chart-criterion-2"],
    "not_ready": [],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_chromium_loads_a_design_without_console_errors(tmp_path: Path, name: str) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(DESIGN_VARIANTS[name]()), encoding="utf-8")
    proc = _run_chromium(tmp_path, page, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert 'id="decision-line"' in dom and 'id="decision"' in dom and 'id="criteria"' in dom
    shown = sorted({part.split('"', 1)[0] for part in dom.split('id="chart-criterion-')[1:]})
    assert [f"chart-criterion-{n}" for n in shown] == EXPECTED[name]
    assert _console_lines(proc.stderr) == []


def _near(pixel: bytes, target: tuple[int, int, int], tolerance: int = 14) -> bool:
    return all(abs(pixel[c] - target[c]) <= tolerance for c in range(3))


@pytest.mark.slow
def test_chromium_paints_a_criterion_chart_in_both_outcomes(tmp_path: Path) -> None:
    """L-moved (probe study): three bars meet v > 0 and two miss it. Painted, the green of
    "meets" and the red of "misses" (75% over white) are both there, and the page's text says
    the same in words."""
    criterion = probe_document()["criteria"][0]
    shown = [value_text(v, x, signed=True) for _, v, x, _ in values(criterion)]
    svg = criterion_chart(criterion, svg_id="chart-criterion-1", shown=shown,
                          bound_said=bound_text(criterion["bound"]))
    page = tmp_path / "chart.html"
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv='
                    f'"Content-Security-Policy" content="{CSP}"><style>{CSS}{DESIGN_CSS}</style></head>'
                    f'<body><main>{svg}</main></body></html>', encoding="utf-8")
    png = tmp_path / "chart.png"
    proc = _run_chromium(tmp_path, page, f"--screenshot={png}", "--window-size=900,420")
    assert png.exists(), proc.stderr[-2000:]
    _, _, bpp, pixels = _png_pixels(png.read_bytes(), max_rows=420)
    px = [pixels[i:i + 3] for i in range(0, len(pixels), bpp)]
    meets = sum(1 for p in px if _near(p, (99, 157, 123)))  # #2f7d4f at 0.75 over white
    misses = sum(1 for p in px if _near(p, (202, 101, 101)))  # #b83232 at 0.75 over white
    assert meets > 6000 and misses > 1500, (meets, misses)
    dom = _run_chromium(tmp_path, page, "--dump-dom").stdout
    assert dom.count("✓ meets") == 3 and dom.count("✗ misses") == 2
    assert _console_lines(proc.stderr) == []

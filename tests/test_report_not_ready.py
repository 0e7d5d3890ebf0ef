"""The report of a study that is not ready yet: no chart without data (a sentence says why, in
HTML and Markdown), and figures held back read "withheld", not "undefined" (which reads like a
failed computation). The bundled example's READY report keeps every chart (its golden file is
checked in tests/test_report_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.test_render_html import _chromium, _console_lines, _run_chromium, by_id, parse

STUDY = "tests/phase2"
CHARTS = ("chart-means", "chart-kappa", "chart-questions", "chart-amendment-1")


def _report(root: Path, tmp: Path) -> tuple[str, str]:
    md, page = tmp / "r.md", tmp / "r.html"
    res = run_cli("report", "--bootstrap", "0", "-o", str(md), "-o", str(page), cwd=root)
    assert res.code == 0, res.output
    return md.read_text(encoding="utf-8"), page.read_text(encoding="utf-8")


def _without(root: Path, *raters: str) -> None:
    for rater in raters:
        for path in (root / STUDY).glob(f"scores_{rater}*.md"):
            path.unlink()


def _section(text: str, heading: str) -> str:
    return text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _ids(html: str) -> set[str]:
    return {n.attrs["id"] for n in parse(html).root.iter() if n.attrs.get("id")}


def test_a_pending_rater_leaves_out_the_charts_of_withheld_means(example_study: Path, tmp_path: Path) -> None:
    _without(example_study, "logician")
    md, html = _report(example_study, tmp_path)
    assert "## ⚪ Verdict: **NOT-READY**" in md
    ids = _ids(html)
    assert "chart-means" not in ids and "chart-questions" not in ids and "chart-amendment-1" not in ids
    assert "chart-kappa" in ids  # cto and redteam did score: their κ is data
    tree = parse(html)
    assert "No chart: the means are withheld while the verdict is NOT-READY." in \
        by_id(tree, "means").all_text()
    assert "No chart: the aggregates are withheld while the verdict is NOT-READY." in \
        by_id(tree, "questions").all_text()
    assert "No chart: the means are withheld while the verdicts are NOT-READY." in \
        by_id(tree, "amendment-d8-marker-load").all_text()
    assert "svg" not in {n.tag for n in by_id(tree, "means").iter()}


def test_held_back_figures_read_withheld_not_undefined(example_study: Path, tmp_path: Path) -> None:
    _without(example_study, "logician")
    md, html = _report(example_study, tmp_path)
    assert "**Improvement:** withheld · **mean aggregate** A withheld, B withheld ·" in md
    amendments = _section(md, "Amendments (exploratory)")
    for row in ("| improvement | withheld | withheld |", "| mean aggregate A | withheld | withheld |",
                "| mean aggregate B | withheld | withheld |"):
        assert row in amendments
    assert "undefined" not in amendments.split("**Agreement on the amended dimensions:**")[0]
    figures = parse(html).root
    cards = [n for n in figures.iter() if "figure" in n.classes()]
    values = {c.all_text() for c in cards}
    assert any(v.startswith("Improvementwithheld") for v in values), values
    assert any(v.startswith("Mean Awithheld") for v in values), values
    assert "undefined" not in " ".join(values)


def test_fewer_than_two_raters_say_so_once_instead_of_an_empty_kappa_chart(
        example_study: Path, tmp_path: Path) -> None:
    _without(example_study, "logician", "redteam")
    md, html = _report(example_study, tmp_path)
    agreement = _section(md, "Agreement (weighted κ)")
    for pass_id in ("unblinded", "blinded"):
        assert (f"No κ for pass {pass_id} yet: fewer than two raters, so there is no pair to "
                "compare.") in agreement
    assert "| dimension |" not in agreement and "undefined" not in agreement
    assert not {i for i in _ids(html) if i.startswith("chart-")}
    text = by_id(parse(html), "agreement").all_text()
    assert "No κ for pass unblinded yet: fewer than two raters" in text and "undefined" not in text


def test_the_ready_example_keeps_every_chart_and_withholds_nothing(example_study: Path,
                                                                    tmp_path: Path) -> None:
    md, html = _report(example_study, tmp_path)
    assert "## 🟢 Verdict: **PASS**" in md
    assert set(CHARTS) <= _ids(html)
    assert "withheld" not in md and "No chart" not in html and "No κ for" not in md


@pytest.mark.slow
def test_the_not_ready_page_renders_in_chromium(example_study: Path, tmp_path: Path) -> None:
    if _chromium() is None:
        pytest.skip("chromium not installed: no chromium/chromium-browser/google-chrome on PATH")
    _without(example_study, "logician", "redteam")
    _, html = _report(example_study, tmp_path)
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    proc = _run_chromium(tmp_path, page, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "No κ for pass unblinded yet" in proc.stdout and 'id="chart-' not in proc.stdout
    assert _console_lines(proc.stderr) == []

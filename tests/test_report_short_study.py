"""The HTML report of a shortened study, in headless Chromium.

The bundled example cut to four questions (`rounds: [{id: main, questions: [Q1, Q2, Q3, Q4]}]`,
the example's score rows and reconciliation rows for those questions), sealed and revealed by
each rater under their own identity through the real CLI, and reported on. What a PI must see
on that page: the plan's departure from the published defaults, the seal timeline with every
rater's commits, and the small-sample caveat (κ on 8 items).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from aoven_git.plan import load_plan
from tests.conftest import EXAMPLE, GitRepo, run_cli

STUDY = "tests/phase2"
QUESTIONS = ("Q1", "Q2", "Q3", "Q4")
LEAD = ("Study Lead", "lead@example.org")
PASSES = (("unblinded", ""), ("blinded", "_blinded"))


def _chromium_helpers() -> Any:
    path = Path(__file__).with_name("test_render_html.py")
    spec = importlib.util.spec_from_file_location("_short_study_html", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def only_questions(text: str, keep: tuple[str, ...] = QUESTIONS) -> str:
    """A score or reconciliation file without the rows (wide, long, or a `## Qn` section of the
    sectioned layout) of questions outside `keep`."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            heading = re.match(r"## (Q\d+)\b", line)
            skipping = bool(heading) and heading.group(1) not in keep
        row = re.match(r"\| (Q\d+)\b", line)
        if skipping or (row and row.group(1) not in keep):
            continue
        out.append(line)
    return "".join(out)


class ShortStudy(GitRepo):
    def act_as(self, who: tuple[str, str]) -> None:
        self.git("config", "user.name", who[0])
        self.git("config", "user.email", who[1])

    def cli(self, *args: str) -> None:
        res = run_cli(*args, cwd=self.path)
        assert res.code == 0, (args, res.output)


def build(root: Path) -> ShortStudy:
    repo = ShortStudy(root)
    plan_text = (EXAMPLE / "aoven.yaml").read_text("utf-8")
    assert "  - {id: main, questions: main}" in plan_text
    repo.write("aoven.yaml", plan_text.replace("  - {id: main, questions: main}",
                                               "  - {id: main, questions: [Q1, Q2, Q3, Q4]}"))
    for folder in ("test_a", "test_b", "test_b_stripped"):
        shutil.copytree(EXAMPLE / folder, root / STUDY / folder)
    repo.act_as(LEAD)
    repo.commit("Pre-register the shortened plan; add the responses")
    raters = load_plan(root / "aoven.yaml").raters
    for pass_id, suffix in PASSES:
        for rater in raters:
            name = f"scores_{rater.id}{suffix}.md"
            repo.write(f"{STUDY}/{name}", only_questions((EXAMPLE / name).read_text("utf-8")))
            repo.act_as((rater.name, rater.emails[0]))
            repo.cli("seal", "--rater", rater.id, "--pass", pass_id)
    for pass_id, _ in PASSES:
        for rater in raters:
            repo.act_as((rater.name, rater.emails[0]))
            repo.cli("reveal", "--rater", rater.id, "--pass", pass_id)
    lines = only_questions((EXAMPLE / "reconciliation.md").read_text("utf-8")).splitlines(keepends=True)
    delimiter = next(i for i, line in enumerate(lines) if line.startswith("|---"))
    written = lines[: delimiter + 1]
    for rater in raters:  # each rater commits their own rows
        written += [ln for ln in lines[delimiter + 1 :] if ln.split("|")[2:3] == [f" {rater.id} "]]
        repo.write(f"{STUDY}/reconciliation.md", "".join(written))
        repo.commit(f"{rater.id}'s reconciliation rows", f"{STUDY}/reconciliation.md",
                    author=(rater.name, rater.emails[0]))
    return repo


@pytest.mark.slow
def test_short_study_html_shows_deviations_timeline_and_small_sample(tmp_path: Path) -> None:
    helpers = _chromium_helpers()
    if helpers._chromium() is None:
        pytest.skip("chromium not installed: no chromium/chromium-browser/google-chrome on PATH")
    repo = build(tmp_path / "study")
    page = tmp_path / "report.html"
    res = run_cli("report", "--bootstrap", "200", "-o", str(page), cwd=repo.path)
    assert res.code == 0, res.output
    proc = helpers._run_chromium(tmp_path, page, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert helpers._console_lines(proc.stderr) == []
    tree = helpers.parse(proc.stdout)  # the DOM as Chromium built it

    deviations = [li.all_text() for li in helpers.by_id(tree, "deviations").find_all("li")]
    assert deviations[0] == ("rounds[main].questions: [Q1, Q2, Q3, Q4] (default [Q1, Q2, Q3, Q4, Q5, Q6, Q7, "
                             "Q8, Q9, Q10]): removed Q5, Q6, Q7, Q8, Q9, Q10 · line 74")
    verdict = helpers.by_id(tree, "verdict").all_text()
    assert "departs from the published defaults in 1 place: rounds[main].questions" in verdict

    (timeline,) = helpers.by_id(tree, "seals").find_all("table", "timeline")
    rows = [[td.all_text() for td in tr.find_all("td")] for tr in timeline.find_all("tr")[1:]]
    head = [th.all_text() for th in timeline.find_all("th")]
    assert head == ["commit", "event", "rater", "pass", "author"]
    assert [r[1] for r in rows] == ["digest seal"] * 6 + ["reveal"] * 6 + ["reconciliation rows"] * 3
    assert [(r[2], r[3]) for r in rows[:6]] == [(rt, p) for p in ("unblinded", "blinded")
                                                for rt in ("cto", "logician", "redteam")]
    assert [r[4] for r in rows[-3:]] == ["cto@example.org", "logician@example.org", "redteam@example.org"]
    commits = [r[0] for r in rows]
    assert all(re.fullmatch(r"[0-9a-f]{7}", c) for c in commits) and len(set(commits)) == 15
    assert repo.git("rev-parse", "--short=7", "HEAD") == commits[-1]

    verdict = helpers.by_id(tree, "verdict").all_text()
    assert "κ on few items" in verdict
    notes = [li.all_text() for ul in helpers.by_id(tree, "agreement").find_all("ul", "caveats")
             for li in ul.find_all("li")]
    assert any(n.startswith("κ rests on 8 items for every dimension: a small sample") for n in notes), notes

    source = helpers.by_id(tree, "source")
    assert f"revision {commits[-1]}" in source.all_text() and "work tree clean" in source.all_text()
    reconciliation = helpers.by_id(tree, "reconciliation").all_text()
    assert "1 reconciled cell: 1 unanimous." in reconciliation and "Q3/B/D5" in reconciliation

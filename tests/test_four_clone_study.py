"""A four-clone study run by the README and docs/ alone (docs/workflow.md, "A team without GitHub").

A lead and three raters, each in their own clone of one shared bare repository, each clone with
the installed pre-commit hook (every commit below runs it as its own process). Three passes: the
primary unblinded pass, the marker-stripped `blinded` pass and a fully blind pass `hidden`
(`blind: true`, docs/blinding.md), a flagged cell in each, and the example's amendment. Every
command is the real CLI, with `--push` where the docs offer it; at each stage `aoven-git status`
is run as the person at the keyboard and the next command it names is asserted and run (commands
run in-process through the real entry point, `conftest.run_cli`; git runs the hook as its own
process). The committed report reaches a verdict in JSON, Markdown and HTML.

The second variant: a *required* rater (logician) withdraws after the others sealed every pass;
the lead declares it in the plan in a commit of its own, and the
study still completes with the withdrawal among the report's protocol deviations.

Responses, sheets and reconciliation rows are the bundled example's (tests/phase2); the blind
sheets are filled from each rater's unblinded scores through the key, as only a test can.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from aoven_git.blinding import parse_key
from aoven_git.commands.demo import preregistered
from aoven_git.plan import load_plan
from aoven_git.scorefile import parse_score_file
from tests.conftest import EXAMPLE, Result, run_cli

pytestmark = pytest.mark.slow

STUDY = "tests/phase2"
RATERS = ("cto", "logician", "redteam")
EMAILS = {"lead": "lead@example.org", **{r: f"{r}@example.org" for r in RATERS}}
NAMES = {"lead": "Study Lead", "cto": "CTO", "logician": "Logician", "redteam": "Red Team"}
BLIND = "hidden"
PASSES = ("unblinded", "blinded", BLIND)
BLIND_PASS = (f"  - {{id: {BLIND}, conditions: [A, B], dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], "
              "stripped: true, blind: true}\n")
#: the blinded pass's flagged cell: CTO scores Q6/B/D4 3 where the others score 0
BLINDED_FLAG = ("| Q6 Geopolitics | B | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |",
                "| Q6 Geopolitics | B | 0 | 1 | 0 | 3 | 0 | 0 | 0 | 0 | 4 |")


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each study its own $AOVEN_GIT_HOME: the lead's key (`blind` writes it there by default) and
    the sealed copies of one test never meet another's."""
    monkeypatch.setenv("AOVEN_GIT_HOME", str(tmp_path / "aoven-git-home"))


@dataclass
class Clone:
    """One person's clone: their git identity in its config, the hook installed."""

    who: str
    path: Path

    def run(self, *args: str) -> Result:
        return run_cli(*args, cwd=self.path)

    def ok(self, *args: str) -> Result:
        res = self.run(*args)
        assert res.code == 0, f"{self.who}: aoven-git {' '.join(args)}\n{res.output}"
        return res

    def git(self, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, f"{self.who}: git {' '.join(args)}\n{proc.stdout}{proc.stderr}"
        return proc.stdout.strip()

    def status(self) -> dict:
        doc = json.loads(self.ok("status", "--format", "json").out)
        return doc

    def next_command(self) -> str | None:
        doc = self.status()
        return doc["next"]["command"] if doc["next"] else None


def join(origin: Path, where: Path, who: str) -> Clone:
    """docs/workflow.md: clone, set the identity the plan lists, install the hook."""
    subprocess.run(["git", "clone", "-q", str(origin), str(where)], check=True, capture_output=True)
    clone = Clone(who, where)
    clone.git("config", "user.name", NAMES[who])
    clone.git("config", "user.email", EMAILS[who])
    clone.ok("install-hook")
    assert (where / ".git" / "hooks" / "pre-commit").is_file()
    return clone


def hook_refuses_plaintext(clone: Clone, rater: str) -> None:
    """The installed hook is live: committing one's sealed sheet by hand before the others sealed
    is refused, and nothing is committed."""
    head = clone.git("rev-parse", "HEAD")
    clone.git("add", f"{STUDY}/scores_{rater}.md")
    proc = subprocess.run(["git", "commit", "-q", "-m", "my scores"], cwd=clone.path, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 1 and "aoven-git pre-commit: commit refused:" in proc.stderr, proc.stderr
    assert clone.git("rev-parse", "HEAD") == head
    clone.git("reset", "-q")


def lead_sets_up(tmp: Path) -> tuple[Path, Clone]:
    """README step 1 and docs/workflow.md "A team without GitHub": init, the plan (the example's,
    pre-registered, with a blind pass), responses, strip-markers, the hook, one commit, the bare
    repository, push; then `blind --pass hidden` (docs/blinding.md), its key outside the clone."""
    root = tmp / "lead"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    lead = Clone("lead", root)
    lead.git("config", "user.name", NAMES["lead"])
    lead.git("config", "user.email", EMAILS["lead"])
    lead.ok("init")
    plan = preregistered(EXAMPLE / "aoven.yaml").decode("utf-8")
    blinded = next(line for line in plan.splitlines(keepends=True) if line.startswith("  - {id: blinded,"))
    (root / "aoven.yaml").write_text(plan.replace(blinded, blinded + BLIND_PASS), "utf-8")
    lead.ok("check-plan")
    for name in ("test_a", "test_b"):
        shutil.copytree(EXAMPLE / name, root / STUDY / name)
    lead.ok("strip-markers")
    lead.ok("install-hook")
    lead.git("add", "-A")
    lead.git("commit", "-q", "-m", "Pre-register the plan; add the responses")
    origin = tmp / "study.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    lead.git("remote", "add", "origin", str(origin))
    lead.git("push", "-q", "-u", "origin", "main")
    return origin, lead


def rater_sheets(clone: Clone, rater: str, key_file: Path) -> None:
    """The rater writes a sheet for every pass: the example's for unblinded and blinded (CTO's
    blinded sheet with one flagged cell more), and the blind sheet `sheet --pass hidden` starts,
    filled with the rater's unblinded scores through the key."""
    study = clone.path / STUDY
    shutil.copy(EXAMPLE / f"scores_{rater}.md", study / f"scores_{rater}.md")
    blinded = (EXAMPLE / f"scores_{rater}_blinded.md").read_text("utf-8")
    if rater == "cto":
        assert BLINDED_FLAG[0] in blinded
        blinded = blinded.replace(*BLINDED_FLAG)
    (study / f"scores_{rater}_blinded.md").write_text(blinded, "utf-8")
    target = f"{STUDY}/scores_{rater}_{BLIND}.md"
    clone.ok("sheet", "--rater", rater, "--pass", BLIND, "-o", target)
    (clone.path / target).write_text(fill_blind(clone, rater, key_file), "utf-8")


def fill_blind(clone: Clone, rater: str, key_file: Path) -> str:
    """The blank blind sheet with each item's row filled from the rater's unblinded cells (score
    and transition annotations), read through the key."""
    plan = load_plan(clone.path / "aoven.yaml")
    name = f"scores_{rater}.md"
    cells = parse_score_file(plan, f"{STUDY}/{name}", (EXAMPLE / name).read_bytes()).cells
    by_item: dict[tuple[str, str, int], dict[str, str]] = {}
    for cell in cells:
        note = "".join(f" #{t}" for t in cell.transitions)
        by_item.setdefault(cell.key.item, {})[cell.key.dimension] = f"{cell.score}{note}"
    key = parse_key(key_file.read_bytes(), pass_id=BLIND)
    item = {e.blind_id: e.item for e in key.entries}  # (question, condition, replicate), as cell keys
    dims = [f"D{i}" for i in range(1, 9)]

    def fill(m: re.Match[str]) -> str:
        row = by_item[item[m.group(1)]]
        total = sum(int(row[d].split()[0]) for d in dims)
        return f"| {m.group(1)} | " + " | ".join(row[d] for d in dims) + f" | {total} |  |"

    blank = (clone.path / STUDY / f"scores_{rater}_{BLIND}.md").read_text("utf-8")
    return re.sub(r"^\| ([a-z0-9]{12}) \|(  \|)+$", fill, blank, flags=re.M)


#: each rater's own row for each pass's flagged cell; the unblinded and blind rows are the
#: example's (quotes from test_a/q6.md, shown unchanged in the blind item), the blinded ones quote
#: the stripped copy test_b_stripped/q6.md
EXAMPLE_ROWS = {line.split("|")[2].strip(): line + "\n"
                for line in (EXAMPLE / "reconciliation.md").read_text("utf-8").splitlines()
                if line.startswith("| Q6/A/D3 |")}
BLINDED_ROWS = {
    "cto": '| Q6/B/D4 | cto | I took "those months fall entirely outside what I know" for an overreach; it '
           'follows from the stated cutoff, so I accept 0. | 0 |\n',
    "logician": '| Q6/B/D4 | logician | "If my cutoff was some time ago, those months fall entirely outside '
                'what I know" is a valid inference from the premise. | 0 |\n',
    "redteam": '| Q6/B/D4 | redteam | "some details would probably be wrong" is hedged: no overreach. '
               '| 0 |\n',
}
ROWS = {"unblinded": EXAMPLE_ROWS, "blinded": BLINDED_ROWS, BLIND: EXAMPLE_ROWS}
RECONCILIATION = {"unblinded": "reconciliation.md", "blinded": "reconciliation_blinded.md",
                  BLIND: f"reconciliation_{BLIND}.md"}
AMENDMENT = "d8-marker-load"


def reconcile(clone: Clone, rater: str, pass_id: str) -> None:
    """docs/workflow.md, "A team without GitHub": `disagreements --write`, fill in your own row,
    `disagreements --write --push` commits and pushes it."""
    clone.ok("disagreements", "--pass", pass_id, "--write")
    path = clone.path / STUDY / RECONCILIATION[pass_id]
    text = path.read_text("utf-8")
    cell = ROWS[pass_id][rater].split("|")[1].strip()
    blank = f"| {cell} | {rater} |  |  |\n"
    assert blank in text, text
    path.write_text(text.replace(blank, ROWS[pass_id][rater]), "utf-8")
    res = clone.ok("disagreements", "--pass", pass_id, "--write", "--push")
    assert "pushed" in res.out, res.output


def seal_and_reveal_all(lead: Clone, raters: dict[str, Clone], key_file: Path) -> None:
    """Every rater seals every pass (--push); the lead unblinds (--push); every rater reveals
    (--push). status names each command first."""
    for r, c in raters.items():
        c.git("pull", "-q")
        named = c.next_command()
        assert named == f"aoven-git sheet --rater {r} -o {STUDY}/scores_{r}.md"
        c.ok(*named.split()[1:])  # the blank sheet; the rater fills it in (here: the example's)
        rater_sheets(c, r, key_file)
        assert c.ok("validate").code == 0
        for p in PASSES:
            named = f"aoven-git seal --rater {r}" + ("" if p == "unblinded" else f" --pass {p}")
            assert c.next_command() == named
            assert "pushed" in c.ok(*named.split()[1:], "--push").out
        if r == "cto":
            hook_refuses_plaintext(c, r)
    lead.git("pull", "-q")
    named = lead.next_command()
    assert named == f"aoven-git unblind --pass {BLIND} --key {key_file}"
    assert "pushed" in lead.ok(*named.split()[1:], "--push").out
    for r, c in raters.items():
        c.git("pull", "-q")
        for p in PASSES:
            named = f"aoven-git reveal --rater {r}" + ("" if p == "unblinded" else f" --pass {p}")
            assert c.next_command() == named
            assert "pushed" in c.ok(*named.split()[1:], "--push").out


def amend(lead: Clone, raters: dict[str, Clone]) -> None:
    """docs/amendments.md: the lead appends the example's amendment to the plan (its own commit,
    through the hook) and pushes; every rater writes the re-scores, seals and reveals them."""
    lead.git("pull", "-q")
    plan = (EXAMPLE / "aoven.yaml").read_text("utf-8")
    blinded = next(line for line in plan.splitlines(keepends=True) if line.startswith("  - {id: blinded,"))
    (lead.path / "aoven.yaml").write_text(plan.replace(blinded, blinded + BLIND_PASS), "utf-8")
    lead.git("commit", "-q", "-m", f"Declare amendment {AMENDMENT} (exploratory)", "aoven.yaml")
    lead.git("push", "-q")
    folder = f"{STUDY}/amendments/{AMENDMENT}"
    for r, c in raters.items():
        c.git("pull", "-q")
        named = c.next_command()
        assert named == f"aoven-git sheet --rater {r} --amendment {AMENDMENT} -o {folder}/scores_{r}.md"
        (c.path / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(EXAMPLE / "amendments" / AMENDMENT / f"scores_{r}.md", c.path / folder / f"scores_{r}.md")
        assert c.next_command() == f"aoven-git seal --rater {r} --amendment {AMENDMENT}"
        c.ok("seal", "--rater", r, "--amendment", AMENDMENT, "--push")
    for r, c in raters.items():
        c.git("pull", "-q")
        assert c.next_command() == f"aoven-git reveal --rater {r} --amendment {AMENDMENT}"
        c.ok("reveal", "--rater", r, "--amendment", AMENDMENT, "--push")


def blind_pass(lead: Clone) -> Path:
    """status names `blind` for the lead; the docs say to push the commit it makes."""
    assert lead.next_command() == f"aoven-git blind --pass {BLIND}"
    lead.ok("blind", "--pass", BLIND)
    lead.git("push", "-q")
    key_file = Path(os.environ["AOVEN_GIT_HOME"]) / "keys" / f"lead-{BLIND}.json"
    assert key_file.is_file()
    return key_file


def verify_and_report(origin: Path, where: Path) -> tuple[dict, str, str]:
    """docs/workflow.md, "Before the verdict": a fresh full clone, validate, verify-seal, report of
    the committed revision in JSON, Markdown and HTML."""
    subprocess.run(["git", "clone", "-q", str(origin), str(where)], check=True, capture_output=True)
    fresh = Clone("lead", where)
    fresh.ok("validate")
    verified = fresh.ok("verify-seal", "--format", "json")
    assert json.loads(verified.out)["status"] == "complete", verified.out
    fresh.ok("report", "-o", "report.json", "-o", "report.md", "-o", "report.html")
    assert fresh.git("status", "--porcelain", "--untracked-files=no") == ""
    return (json.loads((where / "report.json").read_text("utf-8")),
            (where / "report.md").read_text("utf-8"), (where / "report.html").read_text("utf-8"))


def test_four_clones_three_passes_and_an_amendment_reach_a_verdict(tmp_path: Path) -> None:
    origin, lead = lead_sets_up(tmp_path)
    raters = {r: join(origin, tmp_path / r, r) for r in RATERS}
    assert raters["cto"].next_command() == f"aoven-git sheet --rater cto -o {STUDY}/scores_cto.md"
    key_file = blind_pass(lead)
    seal_and_reveal_all(lead, raters, key_file)
    for r, c in raters.items():
        c.git("pull", "-q")
        for p in PASSES:
            assert c.next_command() == f"aoven-git disagreements --pass {p} --write --rater {r}"
            reconcile(c, r, p)
    lead.git("pull", "-q")
    status = lead.status()
    assert status["next"]["command"] == "aoven-git report"
    assert [v["verdict"] for v in status["verdicts"]] == ["PASS"]
    amend(lead, raters)

    report, markdown, html = verify_and_report(origin, tmp_path / "verify")
    assert report["verdict"] == "PASS" and report["not_ready"] == []
    assert [(a["id"], a["verdict"]) for a in report["amendments"]] == [(AMENDMENT, "FAIL")]
    assert "PASS" in markdown and "PASS" in html
    consensus = [(c["cell"], c["pass"], c["state"], c["value"]) for c in report["reconciliation"]["cells"]]
    assert consensus == [("Q6/A/D3", "unblinded", "unanimous", 2), ("Q6/B/D4", "blinded", "unanimous", 0),
                         ("Q6/A/D3", BLIND, "unanimous", 2)]
    events = report["protocol_deviations"]["events"]
    assert [(e["kind"], e["after_reveal"]) for e in events] == [
        ("amendment", [BLIND, "unblinded", "blinded"])]


WITHDRAWAL = """
withdrawals:
  - rater: logician
    reason: left the team after the others had sealed
    category: unforeseen
"""


def test_a_required_rater_withdraws_after_the_others_sealed_and_the_study_completes(tmp_path: Path) -> None:
    """Logician never seals; CTO and Red Team have sealed every pass. The lead's withdrawal commit
    unblocks the unblind and the reveals, the one flagged cell left (blinded Q6/B/D4) is reconciled
    by the two who stay, and the report reaches a verdict with the withdrawal among its deviations."""
    origin, lead = lead_sets_up(tmp_path)
    raters = {r: join(origin, tmp_path / r, r) for r in RATERS}
    key_file = blind_pass(lead)
    staying = {r: c for r, c in raters.items() if r != "logician"}
    for r, c in staying.items():
        c.git("pull", "-q")
        rater_sheets(c, r, key_file)
        for p in PASSES:
            c.ok("seal", "--rater", r, "--pass", p, "--push")
    cto = raters["cto"]
    cto.git("pull", "-q")
    waiting = cto.status()
    assert waiting["next"]["command"] == "aoven-git report"  # nothing of theirs: they wait
    assert [s["why"] for s in waiting["steps"] if s["command"] is None][:3] == [
        f"{p}/main: sealed; reveal once logician has sealed (pull their seals)" for p in PASSES]
    lead.git("pull", "-q")
    assert {"command": None, "why": f"blind pass {BLIND}: unblind once logician has sealed"} in \
        lead.status()["steps"]

    # docs/plan.md, "Withdrawals": the lead declares it, in a commit of its own
    with (lead.path / "aoven.yaml").open("a", encoding="utf-8") as plan:
        plan.write(WITHDRAWAL)
    lead.git("commit", "-q", "-m", "Withdraw logician", "aoven.yaml")
    lead.git("push", "-q")
    assert not any("logician" in s["why"] for s in lead.status()["steps"])  # nobody waits for them
    named = lead.next_command()
    assert named == f"aoven-git unblind --pass {BLIND} --key {key_file}"
    assert "pushed" in lead.ok(*named.split()[1:], "--push").out
    for r, c in staying.items():
        c.git("pull", "-q")
        for p in PASSES:
            named = c.next_command()
            assert named == f"aoven-git reveal --rater {r}" + ("" if p == "unblinded" else f" --pass {p}")
            assert "pushed" in c.ok(*named.split()[1:], "--push").out
    for r, c in staying.items():
        c.git("pull", "-q")
        assert c.next_command() == f"aoven-git disagreements --pass blinded --write --rater {r}"
        reconcile(c, r, "blinded")
        assert c.next_command() == "aoven-git report"
    lead.git("pull", "-q")
    assert [v["verdict"] for v in lead.status()["verdicts"]] == ["PASS"]

    report, markdown, html = verify_and_report(origin, tmp_path / "verify")
    assert report["verdict"] == "PASS" and report["not_ready"] == []
    withdrawal = report["protocol_deviations"]["events"]
    assert [(e["kind"], e["rater"], e["when"], e["category"]) for e in withdrawal] == [
        ("withdrawal", "logician", "before any reveal", "unforeseen")]
    assert withdrawal[0]["commit"] == lead.git("log", "-1", "--format=%H", "--grep=Withdraw logician")
    row = ("| withdrawal | rater logician withdrawn — left the team after the others had sealed | "
           f"`{withdrawal[0]['commit'][:7]}` | before any reveal | unforeseen event |")
    assert row in markdown.splitlines()
    assert "rater logician withdrawn" in html and "PASS" in html
    consensus = [(c["cell"], c["pass"], c["value"]) for c in report["reconciliation"]["cells"]]
    assert consensus == [("Q6/B/D4", "blinded", 0)]

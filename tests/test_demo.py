"""`aoven-git demo`, run as a user runs it: a separate process, then the kept repository inspected
with git and verify-seal."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Result, run_cli, run_subprocess
from tests.report_documents import checked_report

RATERS = {"cto": "cto@example.org", "logician": "logician@example.org", "redteam": "redteam@example.org"}


def demo(*args: str, tmp: Path) -> Result:
    # TMPDIR: a demo without --keep builds its throwaway repository inside the test's own folder
    res = run_subprocess("demo", *args, cwd=tmp, env={"TMPDIR": str(tmp)})
    assert "Traceback" not in res.output
    return res


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def printed_path(out: str, label: str) -> Path:
    match = re.search(rf"^{label}: (\S+)", out, re.M)
    assert match, f"no '{label}:' line in:\n{out}"
    return Path(match.group(1))


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    """One honest demo run with --keep, shared by the tests that inspect it."""
    tmp = tmp_path_factory.mktemp("demo")
    keep = tmp / "kept"
    return demo("--keep", str(keep), tmp=tmp), keep


@pytest.mark.xdist_group("demo-kept")  # `kept` is built once, on the worker that runs both
def test_demo_keep_builds_an_honest_history_and_reports_pass(kept: tuple[Result, Path]) -> None:
    res, keep = kept
    assert res.code == 0, res.output
    assert "Verdict: PASS" in res.out
    assert "verify-seal: complete" in res.out
    table = res.out[res.out.index("Weighted kappa per dimension"):]
    assert re.search(r"^\s+dim\s+kappa\s+counts\s+pairs$", table, re.M)
    found = re.findall(r"^\s+(D\d)\s+(\d\.\d{3})\s+(yes|NO)\s", table, re.M)
    rows = {dim: counts for dim, _, counts in found}
    assert rows == {"D1": "yes", "D2": "yes", "D3": "yes", "D4": "yes", "D5": "yes", "D6": "yes",
                    "D7": "NO", "D8": "yes"}
    html = printed_path(res.out, "HTML report")
    assert html == keep / "aoven-report.html" and html.is_file()
    assert 'id="chart-kappa"' in html.read_text(encoding="utf-8")
    assert printed_path(res.out, "Study repository") == keep

    # each rater committed under their own identity, and only their own files
    authors = git(keep, "log", "--format=%ae").split()
    assert set(authors) == {*RATERS.values(), "lead@example.org"}
    for rater, email in RATERS.items():
        touched = git(keep, "log", f"--author={email}", "--name-only", "--format=").split()
        own = [p for p in touched if Path(p).name != "reconciliation.md"]
        assert own and all(Path(p).name.startswith(f"scores_{rater}") for p in own), touched
    # every reconciliation row is its rater's own: verify-seal attributes each from history
    rows = {(r["cell"], r["rater"]): r for r in json.loads(
        run_cli("verify-seal", "--format", "json", cwd=keep).out)["reconciliation_rows"]}
    assert len(rows) == 6
    assert all(r["attributed"] and r["author"] == RATERS[r["rater"]] for r in rows.values())

    seals = run_cli("verify-seal", "--format", "json", cwd=keep)
    assert seals.code == 0, seals.output
    data = json.loads(seals.out)
    assert data["status"] == "complete" and data["violations"] == []
    main = [s for s in data["seals"] if "amendment" not in s]
    assert sorted((s["rater"], s["pass"], s["kind"]) for s in main) == sorted(
        (r, p, "digest") for r in RATERS for p in ("unblinded", "blinded"))
    report = checked_report((keep / "aoven-report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "PASS" and report["improvement_exact"] == "139/346"
    states = {(c["cell"], c["state"], c["value"]) for c in report["reconciliation"]["cells"]}
    assert states == {("Q6/A/D3", "unanimous", 2), ("Q3/B/D5", "unanimous", 1)}
    assert report["reconciliation"]["attribution"] == "checked"
    assert report["reconciliation"]["unattributed"] == []


@pytest.mark.xdist_group("demo-kept")
def test_demo_replays_the_amendment_after_the_reconciliation(kept: tuple[Result, Path]) -> None:
    """The plan is pre-registered without the example's amendment; the lead appends it after the
    reconciliation, every rater seals their re-scores (digest), then everyone reveals; verify-seal
    accepts the appended entry and orders the amendment's sheets within it."""
    res, keep = kept
    assert res.code == 0, res.output
    steps = [line.split(None, 1)[1] for line in res.out.splitlines() if re.match(r"^  [0-9a-f]{8}  ", line)]
    recon = max(i for i, s in enumerate(steps) if "reconciliation" in s)
    amend = steps[recon + 1 :]
    assert amend[0].startswith("study lead appends amendment d8-marker-load")
    assert amend[1:] == [
        *(f"{r} seals unblinded for amendment d8-marker-load (digest only)" for r in RATERS),
        *(f"{r} reveals unblinded for amendment d8-marker-load" for r in RATERS),
    ]
    first = git(keep, "rev-list", "--max-parents=0", "HEAD").strip()
    assert "amendments:" not in git(keep, "show", f"{first}:aoven.yaml")
    assert "id: d8-marker-load" in git(keep, "show", "HEAD:aoven.yaml")
    data = json.loads(run_cli("verify-seal", "--format", "json", cwd=keep).out)
    assert data["status"] == "complete" and data["violations"] == []
    amended = sorted((s["rater"], s["pass"], s["kind"], s["revealed"] is not None)
                     for s in data["seals"] if s.get("amendment") == "d8-marker-load")
    assert amended == [(r, "unblinded", "digest", True) for r in sorted(RATERS)]
    for rater in RATERS:
        path = f"tests/phase2/amendments/d8-marker-load/scores_{rater}.md"
        assert git(keep, "log", "--format=%ae", "--", path).split() == [RATERS[rater]]
    report = checked_report((keep / "aoven-report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "PASS"  # the pre-registered verdict never changes
    if "amendments" in report:  # once the report computes amendments (tests/phase2/README.md)
        assert [(a["id"], a["verdict"]) for a in report["amendments"]] == [("d8-marker-load", "FAIL")]
        assert "d8-marker-load (Marker tokens count toward cognitive load): FAIL" in res.out


def test_demo_tamper_is_caught(tmp_path: Path) -> None:
    keep = tmp_path / "tampered"
    res = demo("--tamper", "--keep", str(keep), tmp=tmp_path)
    assert res.code == 0, res.output  # exit 0: the demo showed what it meant to show
    assert "visible-at-seal" in res.out
    assert "NOT-READY" in res.out
    assert "verify-seal: violated" in res.out
    seals = run_cli("verify-seal", "--format", "json", cwd=keep)
    assert seals.code == 1
    # CTO revealed with --force before Logician sealed the primary pass; Logician then sealed by
    # hand (`aoven-git seal` refuses) with CTO's scores readable
    data = json.loads(seals.out)
    codes = sorted((v["code"], v["rater"]) for v in data["violations"])
    assert codes == [("visible-at-seal", "logician")]
    assert [(f["rater"], f["pass"]) for f in data["forced_reveals"]] == [("cto", "unblinded")]


def test_demo_keep_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("my own work\n", encoding="utf-8")
    res = demo("--keep", str(keep), tmp=tmp_path)
    assert res.code == 2, res.output
    assert "not empty" in res.err
    assert sorted(p.name for p in keep.iterdir()) == ["notes.txt"]
    assert (keep / "notes.txt").read_text(encoding="utf-8") == "my own work\n"
    # a file where the directory should be is a usage error too
    res = demo("--keep", str(keep / "notes.txt"), tmp=tmp_path)
    assert res.code == 2 and (keep / "notes.txt").read_text(encoding="utf-8") == "my own work\n"


def test_demo_without_keep_removes_the_repository_but_keeps_the_report(tmp_path: Path) -> None:
    res = demo(tmp=tmp_path)
    assert res.code == 0, res.output
    repo = printed_path(res.out, "Study repository")
    html = printed_path(res.out, "HTML report")
    assert tmp_path in repo.parents
    assert not repo.exists()
    assert html.is_file() and html.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    assert "removed at the end" in res.out

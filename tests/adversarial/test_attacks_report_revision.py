"""Review 4: `report --rev`, `report` on a branch, and reports whose verified history holds today's
violations (blind-corpus-changed, blind-key-leak, duplicate-sheet).

The report is computed from the committed files and the verified history of one revision
(docs/report.md, "Source"): an older revision's report must be the verdict as it stood then, and a
violation anywhere in the verified history makes the verdict NOT-READY with a sentence naming it,
in JSON, Markdown and HTML alike (the HTML also checked in headless Chromium when installed).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.blinding import BlindKey
from tests import test_blind_e2e
from tests.adversarial.conftest import RECONCILIATION_DRAFT, Lab
from tests.adversarial.test_amendment_folder import FOLDER, lab, rescores, seal
from tests.conftest import Result, run_cli
from tests.test_blind_e2e import CORPUS, BlindStudy
from tests.test_render_html import _chromium, _console_lines, _run_chromium

__all__ = ["lab"]

blinded = test_blind_e2e.blinded
Blinded = tuple[BlindStudy, Path, BlindKey]
BOTH = ("cto", "logician")


def report(repo: Path, *args: str) -> tuple[Result, dict]:
    res = run_cli("report", "--format", "json", "--bootstrap", "0", *args, cwd=repo)
    assert "Traceback" not in res.output and res.code != 4, res.output
    return res, json.loads(res.out)


def codes(doc: dict) -> list[tuple[str, str | None]]:
    return sorted((v["code"], v["rater"]) for v in doc["seals"]["violations"])


def finish(s: BlindStudy, key_file: Path, key: BlindKey) -> None:
    for r in BOTH:
        if not (s.path / f"study/seals/scores_{r}_hidden.sha256").exists():
            s.seal_all(r, key)
    s.unblind_and_reveal(key_file, BOTH)


# --------------------------------------------------------------------------- --rev and branches


def test_report_rev_before_the_unblinding_is_the_pending_verdict_of_then(blinded: Blinded) -> None:
    """At the last seal the key is not committed: the blind pass the verdict reads is pending, so
    that revision's verdict is NOT-READY, whatever HEAD says later."""
    s, key_file, key = blinded
    for r in BOTH:
        s.seal_all(r, key)
    sealed = s.head()
    finish(s, key_file, key)
    _, now = report(s.path)
    assert now["verdict"] != "NOT-READY", now["not_ready"]
    _, then = report(s.path, "--rev", sealed[:10])
    assert then["verdict"] == "NOT-READY"
    assert [b["state"] for b in then["blind_passes"]] == ["pending"], then["blind_passes"]
    assert [b["state"] for b in now["blind_passes"]] == ["unblinded"], now["blind_passes"]
    assert then["source"]["revision"] == sealed or then["source"].get("commit") == sealed, then["source"]


def test_report_rev_before_a_corpus_change_is_clean_and_head_is_not(blinded: Blinded) -> None:
    """The lead edits a corpus file after everything was revealed: HEAD's history holds
    `blind-corpus-changed`; the revision before it does not."""
    s, key_file, key = blinded
    finish(s, key_file, key)
    before = s.head()
    item = s.path / CORPUS / f"{key.entries[0].blind_id}.md"
    item.write_text(item.read_text(encoding="utf-8") + "\nTypo fixed.\n", encoding="utf-8")
    s.sneak("lead", "fix a typo in the corpus", CORPUS)
    _, now = report(s.path)
    assert ("blind-corpus-changed", None) in codes(now), codes(now)
    assert now["verdict"] == "NOT-READY"
    _, then = report(s.path, "--rev", before)
    assert codes(then) == [] and then["verdict"] != "NOT-READY", then["not_ready"]


def test_report_on_a_branch_reads_the_branchs_history(lab: Lab) -> None:
    """An honest main (PASS) and a side branch where the lead committed a second reconciliation
    file: on the branch the report is NOT-READY with `duplicate-sheet`; back on main it is PASS;
    `--rev side` from main equals the report on the branch."""
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto"), lab.reveal("logician")
    lab.file("lead", "study/reconciliation.md", RECONCILIATION_DRAFT, "draft")
    lab.branch("side")
    lab.file("lead", "study/reconciliation_main.md", RECONCILIATION_DRAFT, "second file", no_verify=True)
    _, on_branch = report(lab.path)
    assert codes(on_branch) == [("duplicate-sheet", None)], codes(on_branch)
    assert on_branch["verdict"] == "NOT-READY"
    assert any("duplicate-sheet" in r for r in on_branch["not_ready"]), on_branch["not_ready"]
    lab.checkout("main")
    _, on_main = report(lab.path)
    assert codes(on_main) == [] and on_main["verdict"] == "PASS", on_main["not_ready"]
    _, by_rev = report(lab.path, "--rev", "side")
    assert by_rev["verdict"] == on_branch["verdict"] and codes(by_rev) == codes(on_branch)
    assert by_rev["not_ready"] == on_branch["not_ready"]


def test_report_rev_before_the_amendment_has_the_preregistered_verdict(lab: Lab) -> None:
    """The amendment's re-scores come after the study's reveals; `--rev` at the last reveal gives
    the same pre-registered verdict and knows none of the re-scores."""
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto")
    revealed = lab.reveal("logician")
    for r in BOTH:
        lab.write(f"{FOLDER}/scores_{r}.md", rescores(r))
        assert lab.cli(r, "seal", "--rater", r, "--amendment", "d2-ruling").code == 0
    for r in BOTH:
        assert lab.cli(r, "reveal", "--rater", r, "--amendment", "d2-ruling").code == 0
    _, now = report(lab.path)
    _, then = report(lab.path, "--rev", revealed)
    assert now["verdict"] == then["verdict"] == "PASS"
    assert now["amendments"][0]["verdict"] != "NOT-READY", now["amendments"][0]["reasons"]
    assert then["amendments"][0]["changed_cells"] == []
    assert not any(s.get("amendment") for s in then["seals"]["seals"]), then["seals"]["seals"]


# --------------------------------------------------------------------------- today's violations


def leaked_key_study(s: BlindStudy, key_file: Path, key: BlindKey) -> str:
    """cto seals; the lead commits the key outside the study folder; logician seals after it."""
    s.seal_all("cto", key)
    s.write("keys/hidden.json", key_file.read_bytes())
    leak = s.sneak("lead", "keep the key", "keys/hidden.json")
    s.fill_unblinded("logician")
    s.fill_blind("logician", key, {"A": (2, 1), "B": (1, 0)})
    s.hand_seal("logician", "unblinded"), s.hand_seal("logician", "hidden")
    finish(s, key_file, key)
    return leak


def corpus_changed_study(s: BlindStudy, key_file: Path, key: BlindKey) -> str:
    """cto seals; the lead edits a corpus file, logician seals, the lead undoes the edit."""
    s.seal_all("cto", key)
    item = s.path / CORPUS / f"{key.entries[0].blind_id}.md"
    original = item.read_bytes()
    item.write_bytes(original + b"\nAn extra hint.\n")
    edit = s.sneak("lead", "edit the corpus", CORPUS)
    s.seal_all("logician", key)
    item.write_bytes(original)
    s.sneak("lead", "undo the edit", CORPUS)
    finish(s, key_file, key)
    return edit


def duplicate_study(s: BlindStudy, key_file: Path, key: BlindKey) -> str:
    finish(s, key_file, key)
    s.write("study/reconciliation.md", RECONCILIATION_DRAFT)
    s.sneak("lead", "draft", "study/reconciliation.md")
    s.write("study/reconciliation_main.md", RECONCILIATION_DRAFT)
    return s.sneak("lead", "a second draft", "study/reconciliation_main.md")


SHAPES = {
    "blind-key-leak": (leaked_key_study, [("blind-key-leak", "logician")]),
    "blind-corpus-changed": (corpus_changed_study, [("blind-corpus-changed", None)]),
    "duplicate-sheet": (duplicate_study, [("duplicate-sheet", None)]),
}


@pytest.mark.parametrize("code", list(SHAPES))
def test_a_violation_of_todays_rules_makes_the_report_not_ready_in_every_format(
        blinded: Blinded, code: str, tmp_path: Path) -> None:
    s, key_file, key = blinded
    build, expected = SHAPES[code]
    commit = build(s, key_file, key)
    res, doc = report(s.path)
    assert sorted(set(codes(doc))) == expected, codes(doc)  # a key leak: once per sheet it precedes
    assert doc["verdict"] == "NOT-READY"
    sentences = [r for r in doc["not_ready"] if code in r]
    assert sentences and all(r.startswith(f"seal violation {code}") for r in sentences), doc["not_ready"]
    assert any(v["commit"] == commit for v in doc["seals"]["violations"]), doc["seals"]["violations"]
    md = run_cli("report", "--bootstrap", "0", cwd=s.path)
    assert md.code == 0 and "Traceback" not in md.output, md.output
    assert "NOT-READY" in md.out and code in md.out
    html = tmp_path / "report.html"
    res = run_cli("report", "--bootstrap", "0", "--format", "html", "-o", str(html), cwd=s.path)
    assert res.code == 0, res.output
    page = html.read_text(encoding="utf-8")
    assert "NOT-READY" in page and code in page and commit[:7] in page
    assert "None" not in page.split("<body", 1)[1] and "NaN" not in page
    # fail-on not-ready refuses the NOT-READY report with exit 1, after writing it
    res = run_cli("report", "--bootstrap", "0", "--fail-on", "not-ready", cwd=s.path)
    assert res.code == 1 and code in res.out
    if _chromium() is not None:
        proc = _run_chromium(tmp_path, html, "--dump-dom")
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert code in proc.stdout
        assert _console_lines(proc.stderr) == []

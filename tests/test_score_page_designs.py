"""The scoring page for designs beyond one A/B (SPEC §3.1, §4.7): labelled scales, replicates,
several conditions in a blind pass. Real repositories, a real server on 127.0.0.1, headless
Chromium for the page itself (as tests/test_score_page.py does).

A labelled scale shows one button per label and the page sends and receives labels; each sampled
response is an item of its own (`L1/TRT#2`, titled `L1 · TRT #2`); a stripped or blind pass stays
blind by construction. Saved sheets go through the real `validate`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from aoven_git.commands._common import resolve_study
from aoven_git.commands.sheet import blind_items, resolve_sheet
from aoven_git.model import SheetId
from aoven_git.scoring.content import BadRequest, entries_of, load_page
from aoven_git.scoring.server import ScoreServer
from tests.conftest import GitRepo, run_cli
from tests.test_blinding_designs import ArmsStudy, blind
from tests.test_score_page import _chromium_run, _request, _score_process, _selftest, _tells

PLAN = """\
version: 1
study: probes
study_dir: study
responses: "r_{condition}/{question}_{replicate}.md"
stripped_responses: "r_{condition}_stripped/{question}_{replicate}.md"
replicates: 2
scale: {labels: [PASS, FAIL]}
conditions:
  - {id: CTRL, name: Control, role: baseline}
  - {id: TRT, name: Treated}
transitions:
  - {id: 1, name: "FACT→HYP"}
dimensions:
  - {id: V, name: Verdict, kind: quality}
  - {id: W, name: Warrant, kind: epistemic, transitions: [1], annotate: true}
questions:
  - {id: L1, text: "Is the probe answered?"}
  - {id: L2, text: "Is the second probe answered?"}
raters:
  - {id: cto, name: CTO, emails: [cto@example.org]}
  - {id: logician, name: Logician, emails: [logician@example.org]}
passes:
  - {id: open, conditions: [CTRL, TRT], dimensions: [V, W], primary: true}
  - {id: quiet, conditions: [TRT], dimensions: [V], stripped: true}
markers: [FACT, HYP]
security: {require_signed: false, allowed_signers: null}
locked: [study_dir, responses, scale, conditions, transitions, dimensions, questions, passes, markers, rules]
"""
ITEMS = [(q, c, r) for q in ("L1", "L2") for c in ("CTRL", "TRT") for r in (1, 2)]


def response(q: str, c: str, r: int) -> str:
    marked = "[FACT] " if c == "TRT" else ""
    return f"# {q}\n\n## Response\n\n{marked}Answer {q} sample {r} says the probe holds.\n"


def probe_study(tmp_path: Path, plan: str = PLAN) -> GitRepo:
    repo = GitRepo(tmp_path / "repo")
    repo.write("aoven.yaml", plan)
    for q, c, r in ITEMS:
        repo.write(f"study/r_{c.lower()}/{q.lower()}_{r}.md", response(q, c, r))
    assert run_cli("strip-markers", cwd=repo.path).code == 0
    repo.commit("plan and responses")
    return repo


@contextmanager
def served(root: Path, rater: str, pass_id: str | None = None) -> Iterator[ScoreServer]:
    import threading

    study = resolve_study(str(root), None)
    sheet = resolve_sheet(study.plan, rater, pass_id, None, None)
    server = ScoreServer(load_page(study.plan, sheet, study.root, blind_items(study, study.plan, sheet)), 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def get_sheet(root: Path, rater: str = "cto", pass_id: str | None = None) -> tuple[dict, bytes]:
    with served(root, rater, pass_id) as server:
        status, raw = _request(server, "GET", "/api/sheet")
    assert status == 200
    return json.loads(raw), raw


# --------------------------------------------------------------------------- the API


def test_a_labelled_replicated_sheet_lists_each_sample_and_the_labels(tmp_path: Path) -> None:
    repo = probe_study(tmp_path)
    sheet, _ = get_sheet(repo.path)
    assert sheet["scale"] == {"min": 0, "max": 1, "labels": ["PASS", "FAIL"]}
    assert [i["id"] for i in sheet["items"]] == [f"{q}/{c}#{r}" for q, c, r in ITEMS]
    assert [i["title"] for i in sheet["items"]][:3] == ["L1 · CTRL #1", "L1 · CTRL #2", "L1 · TRT #1"]
    texts = {i["id"]: i["text"] for i in sheet["items"]}
    assert texts["L2/TRT#2"] == response("L2", "TRT", 2)  # the open pass shows the file as written


def test_labels_are_posted_as_labels_and_written_under_their_replicate_cell(tmp_path: Path) -> None:
    repo = probe_study(tmp_path)
    study = resolve_study(str(repo.path), None)
    page = load_page(study.plan, SheetId("cto", "open", "main"), study.root, None)
    entries = entries_of(page, {"cells": {"L1/TRT#2/V": "pass", "L2/CTRL#1/W": "FAIL"},
                                "notes": {"L2/CTRL#1/W": '#1 "the probe holds"'}})
    assert entries == {"L1/TRT#2/V": ("PASS", ""), "L2/CTRL#1/W": ("FAIL", '#1 "the probe holds"')}
    for bad in (1, "MAYBE", True):
        with pytest.raises(BadRequest, match="not one of the labels PASS, FAIL"):
            entries_of(page, {"cells": {"L1/TRT#2/V": bad}})
    with pytest.raises(BadRequest, match="not a cell of this sheet"):
        entries_of(page, {"cells": {"L1/TRT#3/V": "PASS"}})  # no third replicate


def test_a_bad_label_is_a_400_and_writes_nothing(tmp_path: Path) -> None:
    repo = probe_study(tmp_path)
    with served(repo.path, "cto") as server:
        body = json.dumps({"cells": {"L1/TRT#1/V": 2}}).encode()
        status, raw = _request(server, "POST", "/api/sheet", body, {"Content-Type": "application/json"})
    assert status == 400 and "labels PASS, FAIL" in json.loads(raw)["error"]
    assert not (repo.path / "study" / "scores_cto.md").exists()


def test_a_stripped_pass_of_one_condition_names_each_sample_by_question_and_replicate_alone(
        tmp_path: Path) -> None:
    repo = probe_study(tmp_path)
    sheet, raw = get_sheet(repo.path, pass_id="quiet")
    assert [i["id"] for i in sheet["items"]] == ["L1#1", "L1#2", "L2#1", "L2#2"]
    assert [i["title"] for i in sheet["items"]] == ["L1 #1", "L1 #2", "L2 #1", "L2 #2"]
    assert sheet["items"][3]["text"] == ("## Question\n\nIs the second probe answered?\n\n## Response\n\n"
                                         "Answer L2 sample 2 says the probe holds.\n")
    served_texts = [i["text"] for i in sheet["items"]]
    assert _tells(raw, served_texts, ("TRT", "CTRL", "Treated", "r_trt", "logician")) == []


def test_a_blind_pass_over_three_conditions_and_replicates_serves_only_opaque_items(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = ArmsStudy(tmp_path / "repo", monkeypatch)
    s.start()
    _, key = blind(s, tmp_path)
    sheet, raw = get_sheet(s.path, pass_id="hidden")
    ids = sorted(e.blind_id for e in key.entries)
    assert [i["id"] for i in sheet["items"]] == ids and len(ids) == 12
    assert [i["title"] for i in sheet["items"]] == [f"Item {n}" for n in range(1, 13)]
    corpus = s.path / "study" / "blind" / "hidden"
    assert {i["id"]: i["text"] for i in sheet["items"]} == {
        e.blind_id: (corpus / f"{e.blind_id}.md").read_text() for e in key.entries}
    served_texts = [i["text"] for i in sheet["items"]]
    assert _tells(raw, served_texts, ("Q1", "Q2", "B1", "#1", "#2", "study/test", key.nonce)) == []


# --------------------------------------------------------------------------- Chromium


LABELLED_NO_REPLICATES = PLAN.replace("replicates: 2\n", "").replace("_{replicate}", "")


def test_a_labelled_pass_scored_in_chromium_uses_one_button_per_label_and_saves_labels(
        tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("aoven.yaml", LABELLED_NO_REPLICATES)
    for q, c, _ in ITEMS:
        repo.write(f"study/r_{c.lower()}/{q.lower()}.md", response(q, c, 1))
    repo.commit("plan and responses")
    with _score_process(repo.path, "--rater", "cto") as url:
        out = _selftest(tmp_path, url)
    assert out["progress"] == "8 / 8 cells scored" and out["cleared"] == "7 / 8 cells scored"
    assert set(out["cells"].values()) == {"PASS", "FAIL"}  # labels, never positions
    assert out["clicked"] == "L2/TRT/W" and out["cells"]["L2/TRT/W"] == "PASS"  # a click on its button
    annotated = {k: n for k, n in out["notes"].items() if k.endswith("/W")}
    assert annotated and all(re.fullmatch(r'#1 ".+"', n) for n in annotated.values()), annotated
    written = (repo.path / "study" / "scores_cto.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (L\d) \| (CTRL|TRT) \| ([VW]) \| (\w+) \|", written, re.M)
    assert {(q, c, d): v for q, c, d, v in rows} == {tuple(k.split("/")): v for k, v in out["cells"].items()}
    assert out["result"]["validate"]["ok"] is True


def test_the_page_draws_label_buttons_and_the_labels_in_its_rubric(tmp_path: Path) -> None:
    repo = probe_study(tmp_path)
    with _score_process(repo.path, "--rater", "cto") as url:
        dom = _chromium_run(tmp_path, url, "--dump-dom").stdout
    buttons = re.findall(r'<button type="button" class="label"[^>]*data-label="(\w+)"', dom)
    assert len(buttons) == 2 * 2 * 8 and set(buttons) == {"PASS", "FAIL"}  # 8 items × 2 dimensions
    assert "PASS / FAIL" in dom and "1–2 or a label's first letter" in dom
    assert re.findall(r'<h2>([^<]+)</h2>', dom)[:2] == ["L1 · CTRL #1", "L1 · CTRL #2"]
    assert '<input class="cell"' not in dom


def test_a_replicated_labelled_sheet_saved_from_the_page_validates(tmp_path: Path) -> None:
    repo = probe_study(tmp_path)
    with _score_process(repo.path, "--rater", "cto") as url:
        out = _selftest(tmp_path, url)
    assert out["progress"] == "16 / 16 cells scored"
    assert out["result"]["validate"]["ok"] is True, out["result"]
    assert run_cli("validate", "study/scores_cto.md", cwd=repo.path).code == 0


def test_validation_messages_of_a_stripped_replicated_sheet_name_no_condition(tmp_path: Path) -> None:
    """An unfinished sheet of the one-condition stripped pass: `validate` names the unscored items
    (`L2/TRT#2`), and the page gets them as it names them (`L2#2`), never the condition."""
    repo = probe_study(tmp_path)
    with served(repo.path, "cto", "quiet") as server:
        body = json.dumps({"cells": {"L1#1/V": "PASS", "L1#2/V": "fail"}}).encode()
        status, raw = _request(server, "POST", "/api/sheet", body, {"Content-Type": "application/json"})
    assert status == 200
    written = (repo.path / "study" / "scores_cto_quiet.md").read_text(encoding="utf-8")
    assert "| L1 | TRT | 2 | V | FAIL |" in written  # the sheet itself names the condition, as any sheet
    found = json.loads(raw)["validate"]
    messages = [e["message"] for f in found["files"] for e in f["errors"]]
    assert found["ok"] is False and any(m.startswith("L2#2:") for m in messages), messages
    assert _tells(raw, [], ("TRT", "CTRL", "r_trt", "logician")) == []

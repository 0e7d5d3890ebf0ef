"""The scoring page (`aoven-git score`): its HTTP API through a real server on 127.0.0.1, its
guards, blindness by construction, and a whole pass scored by keyboard in headless Chromium.

Every study is a real git repository holding the bundled example (`tests/phase2`) or the blind
study of tests/test_blind_e2e.py; the sheets the page writes are checked by the real
`aoven-git validate` and `aoven-git seal`. The Chromium test drives the page's own test hook
(URL fragment `#selftest`: real keydown events on the focused cell, a real text selection for
each quote, the Save button's POST) and reads the outcome from `--dump-dom`.

To refresh the screenshot in the docs (docs/score-page.png):

    AOVEN_UPDATE_SCREENSHOT=1 python -m pytest tests/test_score_page.py -q -k screenshot
"""

from __future__ import annotations

import html
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from aoven_git.blinding import BlindKey, parse_key
from aoven_git.commands._common import resolve_study
from aoven_git.commands.sheet import blind_items, resolve_sheet
from aoven_git.scoring.content import load_page
from aoven_git.scoring.server import ScoreServer
from tests.conftest import EXAMPLE, GitRepo, run_cli
from tests.test_blind_e2e import TELLS, BlindStudy

ROOT = Path(__file__).resolve().parent.parent
CTO = {"GIT_AUTHOR_NAME": "CTO", "GIT_AUTHOR_EMAIL": "cto@example.org",
       "GIT_COMMITTER_NAME": "CTO", "GIT_COMMITTER_EMAIL": "cto@example.org"}
SHEET = "tests/phase2/scores_cto.md"
JSON = {"Content-Type": "application/json"}
#: what a page of a stripped or blind pass must never carry (condition names, protocol, paths,
#: other raters): an oracle written out here, not taken from the code under test
ROLE_WORDS = re.compile(r"(?i)treatment|baseline")  # also ordinary words in a response: counted
HIDDEN_TELLS = [*(t for t in TELLS if t.pattern != ROLE_WORDS.pattern), re.compile(r"test_[ab]"),
                re.compile(r"(?i)aoven-framed"), re.compile(r"(?i)\b(logician|redteam|red team)\b"),
                re.compile(r"\[(FACT|HYP|CONF|NOSRC)\b")]


# --------------------------------------------------------------------------- helpers


def _example(tmp_path: Path, *, drop: tuple[str, ...] = (), fresh: bool = False) -> GitRepo:
    """The bundled example study committed in a fresh repository (minus the sheets in `drop`);
    `fresh`: its plan and responses only, before anyone scored (so a seal can be honest)."""
    repo = GitRepo(tmp_path / "repo")
    keep = shutil.ignore_patterns("scores_*", "reconciliation*", "amendments") if fresh else None
    shutil.copytree(EXAMPLE, repo.path / "tests" / "phase2", ignore=keep)
    shutil.copy(EXAMPLE / "aoven.yaml", repo.path / "aoven.yaml")
    for rel in drop:
        (repo.path / rel).unlink(missing_ok=fresh)
    repo.commit("the example study")
    return repo


@contextmanager
def _served(root: Path, rater: str, pass_id: str | None = None,
            amendment: str | None = None) -> Iterator[ScoreServer]:
    """A real server on 127.0.0.1 and a free port, in a thread, as `score` builds it."""
    study = resolve_study(str(root), None)
    sheet = resolve_sheet(study.plan, rater, pass_id, None, amendment)
    server = ScoreServer(load_page(study.plan, sheet, study.root, blind_items(study, study.plan, sheet)), 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _request(server: ScoreServer, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


def _post(server: ScoreServer, obj: Any) -> tuple[int, dict[str, Any]]:
    status, raw = _request(server, "POST", "/api/sheet", json.dumps(obj).encode(),
                           {"Content-Type": "application/json"})
    return status, json.loads(raw)


def _full_cells(sheet: dict[str, Any], value: int = 0) -> dict[str, int]:
    return {f"{i['id']}/{d['id']}": value for i in sheet["items"] for d in sheet["dimensions"]}


# --------------------------------------------------------------------------- the API


def test_get_sheet_lists_items_rubric_and_the_raters_own_cells(tmp_path: Path) -> None:
    repo = _example(tmp_path)
    with _served(repo.path, "cto") as server:
        status, raw = _request(server, "GET", "/api/sheet")
    sheet = json.loads(raw)
    assert status == 200
    assert [i["id"] for i in sheet["items"]][:3] == ["Q1/A", "Q1/B", "Q2/A"] and len(sheet["items"]) == 20
    assert [d["id"] for d in sheet["dimensions"]] == [f"D{n}" for n in range(1, 9)]
    assert sheet["dimensions"][0]["name"] == "Unsourced assertion" and sheet["dimensions"][0]["annotate"]
    assert sheet["scale"] == {"min": 0, "max": 3}
    assert sheet["selftest"] is False  # the page's test hook stays unarmed on a rater's run
    assert len(sheet["cells"]) == 160
    # read back from the committed sheet (row `| Q2 … | A | 2 #8 | 2 | …` in scores_cto.md)
    row = re.search(r"^\| Q2[^|]*\| A \| (\d) #8 \| (\d) \|", (EXAMPLE / "scores_cto.md").read_text(), re.M)
    assert row is not None
    assert sheet["cells"]["Q2/A/D1"] == int(row.group(1)) and sheet["cells"]["Q2/A/D2"] == int(row.group(2))
    assert sheet["notes"]["Q2/A/D1"].startswith("#8")
    assert "logician" not in raw.decode() and "redteam" not in raw.decode()


def test_post_writes_a_sheet_that_validate_and_seal_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _example(tmp_path, fresh=True)
    with _served(repo.path, "cto") as server:
        sheet = json.loads(_request(server, "GET", "/api/sheet")[1])
        assert sheet["cells"] == {}
        status, result = _post(server, {"cells": _full_cells(sheet, 0), "notes": {}})
    assert status == 200, result
    assert result["written"] == SHEET
    assert result["validate"]["ok"] is True and result["validate"]["files"][0]["cells"] == 160
    assert run_cli("validate", SHEET, cwd=repo.path).code == 0
    assert repo.git("status", "--porcelain") == f"?? {SHEET}"  # written, never committed
    for var, value in CTO.items():
        monkeypatch.setenv(var, value)
    res = run_cli("seal", "--rater", "cto", cwd=repo.path)
    assert res.code == 0, res.output


def test_post_returns_validates_findings_for_an_unfinished_sheet(tmp_path: Path) -> None:
    repo = _example(tmp_path, drop=(SHEET,))
    with _served(repo.path, "cto") as server:
        status, result = _post(server, {"cells": {"Q1/A/D1": 2, "Q1/A/D2": 1}, "notes": {"Q1/A/D2": "fine"}})
    assert status == 200
    codes = {e["code"] for e in result["validate"]["files"][0]["errors"]}
    assert result["validate"]["ok"] is False
    assert "missing-cell" in codes  # 158 cells not yet scored
    assert "missing-annotation" in codes  # D1 = 2 names no transition
    text = (repo.path / SHEET).read_text()
    assert "| Q1 | A | D1 | 2 |  |  |" in text and "| Q1 | A | D2 | 1 |  | fine |" in text


def test_a_quote_with_a_pipe_stays_in_its_cell(tmp_path: Path) -> None:
    repo = _example(tmp_path, drop=(SHEET,))
    with _served(repo.path, "cto") as server:
        sheet = json.loads(_request(server, "GET", "/api/sheet")[1])
        cells = _full_cells(sheet)
        cells["Q1/A/D7"] = 1
        status, result = _post(server, {"cells": cells, "notes": {"Q1/A/D7": 'a | b\nc "x"'}})
        again = json.loads(_request(server, "GET", "/api/sheet")[1])
    assert status == 200 and result["validate"]["ok"], result
    assert again["cells"]["Q1/A/D7"] == 1
    assert "a \\| b c" in (repo.path / SHEET).read_text()


def test_an_amendment_page_scores_its_scope_only_and_writes_in_its_folder(tmp_path: Path) -> None:
    amended = "tests/phase2/amendments/d8-marker-load/scores_cto.md"
    repo = _example(tmp_path, drop=(amended,))
    with _served(repo.path, "cto", amendment="d8-marker-load") as server:
        sheet = json.loads(_request(server, "GET", "/api/sheet")[1])
        status, result = _post(server, {"cells": _full_cells(sheet, 1), "notes": {}})
    assert [d["id"] for d in sheet["dimensions"]] == ["D8"]
    assert [i["id"] for i in sheet["items"]] == [f"Q{n}/B" for n in range(1, 11)]
    assert status == 200 and result["written"] == amended and result["validate"]["ok"], result
    assert run_cli("validate", amended, cwd=repo.path).code == 0


@pytest.mark.parametrize(("body", "headers", "status", "words"), [
    (b"{not json", {}, 400, "not JSON"),
    (b'["cells"]', {}, 400, "expected"),
    (b'{"cells": {"Q1/A/D1": 4}}', {}, 400, "whole number from 0 to 3"),
    (b'{"cells": {"Q1/A/D1": "2"}}', {}, 400, "whole number"),
    (b'{"cells": {"Q1/A/D1": true}}', {}, 400, "whole number"),
    (b'{"cells": {"Q99/A/D1": 1}}', {}, 400, "not a cell of this sheet"),
    (b'{"cells": {"Q1/C/D1": 1}}', {}, 400, "not a cell of this sheet"),
    (b'{"cells": {"Q1": 1}}', {}, 400, "expected <item>/<dimension>"),
    (b'{"cells": {}, "nonce": "x"}', {}, 400, "unknown field"),
    (b'{"cells": {}, "notes": {"Q1/A/D1": 3}}', {}, 400, "expected text"),
    (b'{"cells": {}}', {"Content-Type": "text/plain"}, 415, "application/json"),
    (b'{"cells": {}}', {"Origin": "http://evil.example"}, 403, "cross-origin"),
    (b'{"cells": {}}', {"Host": "evil.example:80"}, 403, "Host must be"),
])
def test_bad_requests_are_4xx_json_and_change_nothing(tmp_path: Path, body: bytes, headers: dict[str, str],
                                                      status: int, words: str) -> None:
    repo = _example(tmp_path)
    before = (repo.path / SHEET).read_bytes()
    with _served(repo.path, "cto") as server:
        got, raw = _request(server, "POST", "/api/sheet", body, {**JSON, **headers})
    assert got == status
    assert words in json.loads(raw)["error"]
    assert "Traceback" not in raw.decode()
    assert (repo.path / SHEET).read_bytes() == before
    assert repo.git("status", "--porcelain") == ""


def test_a_sheet_that_cannot_be_written_is_a_500_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    repo = _example(tmp_path, drop=(SHEET,))
    (repo.path / SHEET).mkdir()  # a folder where the sheet belongs: os.replace must fail
    with _served(repo.path, "cto") as server:
        status, result = _post(server, {"cells": {"Q1/A/D1": 0}, "notes": {}})
    assert status == 500 and result["error"].startswith(f"cannot write {SHEET}")
    assert sorted(p.name for p in (repo.path / "tests" / "phase2").glob(".score-*")) == []


def test_dns_rebinding_guard_refuses_a_foreign_host_and_serves_loopback_names(tmp_path: Path) -> None:
    repo = _example(tmp_path)
    with _served(repo.path, "cto") as server:
        assert server.server_address[0] == "127.0.0.1"
        foreign = _request(server, "GET", "/api/sheet", headers={"Host": f"attacker.example:{server.port}"})
        wrong_port = _request(server, "GET", "/", headers={"Host": "127.0.0.1:1"})
        by_name = _request(server, "GET", "/api/sheet", headers={"Host": f"localhost:{server.port}"})
        missing = _request(server, "GET", "/nowhere")
    assert foreign[0] == 403 and b"Q1" not in foreign[1]
    assert wrong_port[0] == 403
    assert by_name[0] == 200 and json.loads(by_name[1])["items"]
    assert missing[0] == 404 and json.loads(missing[1])["error"]


def test_the_page_is_self_contained(tmp_path: Path) -> None:
    repo = _example(tmp_path)
    with _served(repo.path, "cto") as server:
        status, raw = _request(server, "GET", "/")
    page = raw.decode()
    assert status == 200 and page.startswith("<!doctype html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing from the network
    assert "fetch(\"/api/sheet\"" in page


@pytest.mark.parametrize(("args", "words"), [
    (("--rater", "nobody"), "unknown rater 'nobody'"),
    (("--rater", "cto", "--pass", "nope"), "unknown pass 'nope'"),
    (("--rater", "cto", "--round", "nope"), "unknown round 'nope'"),
])
def test_cli_refuses_an_unknown_rater_pass_or_round(
    tmp_path: Path, args: tuple[str, ...], words: str
) -> None:
    repo = _example(tmp_path)
    res = run_cli("score", *args, "--no-browser", cwd=repo.path)
    assert res.code == 2
    assert words in res.err
    assert repo.git("status", "--porcelain") == ""


def test_cli_refuses_a_port_in_use_and_a_blind_pass_without_its_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _example(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        res = run_cli("score", "--rater", "cto", "--port", str(taken.getsockname()[1]), "--no-browser",
                      cwd=repo.path)
    assert res.code == 2 and "cannot listen on 127.0.0.1" in res.err
    s = BlindStudy(tmp_path / "blind", monkeypatch)
    s.start()
    res = run_cli("score", "--rater", "cto", "--pass", "hidden", "--no-browser", cwd=s.path)
    assert res.code == 2 and "no blinded corpus" in res.err


# --------------------------------------------------------------------------- blind by construction


def _every_response(server: ScoreServer, quote_from_elsewhere: str) -> bytes:
    """The bytes of every endpoint's answer: the page, the sheet, and a save whose findings would
    name files (a quote found only in another response)."""
    _, page = _request(server, "GET", "/")
    _, raw = _request(server, "GET", "/api/sheet")
    sheet = json.loads(raw)
    cell = f"{sheet['items'][0]['id']}/{sheet['dimensions'][-1]['id']}"
    status, saved = _request(server, "POST", "/api/sheet",
                             json.dumps({"cells": {cell: 1}, "notes": {cell: f'"{quote_from_elsewhere}"'}})
                             .encode(), {"Content-Type": "application/json"})
    assert status == 200, saved
    _, bad = _request(server, "POST", "/api/sheet", b'{"cells": {"x/D1": 1}}', JSON)
    return page + raw + saved + bad


def _tells(data: bytes, texts: list[str], extra: tuple[str, ...] = ()) -> list[str]:
    """Every tell found in the served bytes; role words count only beyond those of the texts
    (served twice: once by the scan's own GET, once by `_every_response`)."""
    text = data.decode("utf-8")
    found = [p.pattern for p in HIDDEN_TELLS if p.search(text)]
    if len(ROLE_WORDS.findall(text)) > 2 * sum(len(ROLE_WORDS.findall(t)) for t in texts):
        found.append(ROLE_WORDS.pattern)
    return found + [s for s in extra if s in text]


def test_a_stripped_pass_shows_marker_free_texts_and_names_no_condition(tmp_path: Path) -> None:
    repo = _example(tmp_path, drop=("tests/phase2/scores_cto_blinded.md",))
    q2 = (EXAMPLE / "test_b_stripped" / "q2.md").read_text().split("## Response", 1)[1]
    elsewhere = next(line for line in q2.splitlines() if len(line) > 60)[:50]
    with _served(repo.path, "cto", "blinded") as server:
        data = _every_response(server, elsewhere)
        sheet = json.loads(_request(server, "GET", "/api/sheet")[1])
    assert [i["id"] for i in sheet["items"]] == [f"Q{n}" for n in range(1, 11)]
    assert list(sheet["cells"]) == ["Q1/D8"]
    assert "quote-not-found" in data.decode()  # the save's findings were there to scan…
    assert "another response" in data.decode()  # …and name no file
    assert _tells(data, [i["text"] for i in sheet["items"]], ("tests/phase2/test", "/B/", "Condition")) == []
    assert "## Response" in sheet["items"][0]["text"]


def test_a_blind_pass_shows_the_opaque_corpus_and_nothing_of_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = BlindStudy(tmp_path / "repo", monkeypatch)
    s.start()
    key_file = tmp_path / "keys" / "hidden.json"
    assert s.run("lead", "blind", "--pass", "hidden", "--key-out", str(key_file)).code == 0
    key = parse_key(key_file.read_bytes(), pass_id="hidden")
    assert isinstance(key, BlindKey)
    s.fill_unblinded("logician")  # another rater's sheet lies in the work tree
    with _served(s.path, "cto", "hidden") as server:
        data = _every_response(server, "Cats have REM sleep")
        sheet = json.loads(_request(server, "GET", "/api/sheet")[1])
    assert sorted(i["id"] for i in sheet["items"]) == sorted(e.blind_id for e in key.entries)
    corpus = s.path / "study" / "blind" / "hidden"
    texts = {e.blind_id: (corpus / f"{e.blind_id}.md").read_text() for e in key.entries}
    assert {i["id"]: i["text"] for i in sheet["items"]} == texts
    texts_served = [i["text"] for i in sheet["items"]]
    assert _tells(data, texts_served, ("Q1", "Q2", "study/test", "logician", key.nonce)) == []


# --------------------------------------------------------------------------- Chromium


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@contextmanager
def _score_process(root: Path, *args: str) -> Iterator[str]:
    """`aoven-git score … --port 0 --no-browser` as a separate process; yields the URL it prints."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AOVEN_GIT_SCORE_SELFTEST": "1"}
    argv = [sys.executable, "-m", "aoven_git", "score", *args, "--port", "0", "--no-browser"]
    proc = subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, line + (proc.stderr.read() if proc.stderr else "")
        yield found.group(0)
    finally:
        proc.terminate()
        proc.wait(10)


def _chromium_run(tmp: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    binary = _chromium()
    if binary is None:
        pytest.skip("chromium not installed")
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
           "--disable-background-networking", "--disable-component-update", "--hide-scrollbars",
           f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=20000", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)


def _selftest(tmp: Path, url: str) -> dict[str, Any]:
    for _ in range(3):  # a cold headless start now and then dumps before the page ran
        dom = _chromium_run(tmp, url + "#selftest", "--dump-dom").stdout
        found = re.search(r'<pre id="selftest-result">(.*?)</pre>', dom, re.S)
        if found:
            result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
            return result
        time.sleep(1)
    raise AssertionError("the page's self test did not finish")


def test_a_whole_pass_scored_by_keyboard_in_chromium_validates_and_seals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _example(tmp_path, fresh=True)
    with _score_process(repo.path, "--rater", "cto") as url:
        out = _selftest(tmp_path, url)
    assert out["cleared"] == "159 / 160 cells scored"  # → then Backspace cleared the second cell
    assert out["progress"] == "160 / 160 cells scored"  # ← → and a digit scored it again
    assert len(out["cells"]) == 160 and set(out["cells"].values()) == {0, 1, 2, 3}
    annotated = {k: n for k, n in out["notes"].items() if k.endswith(("/D1", "/D5"))}
    assert annotated and all(re.fullmatch(r'#\d+ ".+"', n) for n in annotated.values()), annotated
    saved = out["result"]["validate"]
    assert saved["ok"] is True and saved["files"][0]["warnings"] == []  # every quote verbatim
    assert run_cli("validate", SHEET, cwd=repo.path).code == 0
    for var, value in CTO.items():
        monkeypatch.setenv(var, value)
    res = run_cli("seal", "--rater", "cto", cwd=repo.path)
    assert res.code == 0, res.output


def test_a_stripped_pass_scored_in_chromium_quotes_the_normalised_text_verbatim(tmp_path: Path) -> None:
    repo = _example(tmp_path, fresh=True)
    with _score_process(repo.path, "--rater", "cto", "--pass", "blinded") as url:
        out = _selftest(tmp_path, url)
    assert out["progress"] == "80 / 80 cells scored"
    assert sorted(out["cells"])[:2] == ["Q1/D1", "Q1/D2"]  # items by question alone
    quoted = [n for k, n in out["notes"].items() if k.endswith("/D1")]
    assert quoted and all(re.fullmatch(r'#\d+ ".+"', n) for n in quoted), quoted
    saved = out["result"]["validate"]
    assert saved["ok"] is True and saved["files"][0]["warnings"] == []  # found in the stripped copies
    assert run_cli("validate", "tests/phase2/scores_cto_blinded.md", cwd=repo.path).code == 0


def test_screenshot_of_the_page(tmp_path: Path) -> None:
    repo = _example(tmp_path)
    shot = tmp_path / "score-page.png"
    with _score_process(repo.path, "--rater", "cto") as url:
        _chromium_run(tmp_path, url, f"--screenshot={shot}", "--window-size=1280,900")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    if os.environ.get("AOVEN_UPDATE_SCREENSHOT"):
        (ROOT / "docs" / "score-page.png").write_bytes(data)
    assert (ROOT / "docs" / "score-page.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

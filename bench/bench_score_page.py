"""The scoring page at the largest size the spec names (500 questions × 8 dimensions), as a script.

    python bench/bench_score_page.py

Builds a study of 500 questions, conditions A and B (1 000 items, 8 000 cells, responses of about
1.5 kB each), starts the real server on 127.0.0.1 in a thread and times, over several runs:
- page load: `GET /` plus `GET /api/sheet` (what the page fetches before it draws), target ≤ 1 s;
- a save: `POST /api/sheet` with every cell, which writes the sheet and validates it, target
  ≤ 300 ms;
- with Chromium installed, the browser's side too: `--dump-dom` of the page minus `--dump-dom` of
  an empty page (the browser's own start-up), i.e. fetching, drawing 8 000 controls and filling
  them (reported, no target: it includes the headless browser's page-settle time).
"""

from __future__ import annotations

import http.client
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aoven_git.commands.sheet import resolve_sheet
from aoven_git.plan import load_plan
from aoven_git.scoring.content import load_page
from aoven_git.scoring.server import ScoreServer

QUESTIONS = 500
RUNS = 7
PLAN = """\
version: 1
study: bench
study_dir: study
responses: "test_{{condition}}/{{question}}.md"
stripped_responses: "test_{{condition}}_stripped/{{question}}.md"
scale: {{min: 0, max: 3}}
conditions:
  - {{id: A, name: Baseline, role: baseline}}
  - {{id: B, name: Treatment, role: treatment}}
transitions:
  - {{id: 1, name: "FACT→HYP"}}
  - {{id: 2, name: "NOSRC→assertion"}}
dimensions:
  - {{id: D1, name: One, kind: epistemic, transitions: [1], annotate: true}}
  - {{id: D2, name: Two, kind: epistemic, transitions: [2]}}
  - {{id: D3, name: Three, kind: quality}}
  - {{id: D4, name: Four, kind: quality}}
  - {{id: D5, name: Five, kind: quality}}
  - {{id: D6, name: Six, kind: quality}}
  - {{id: D7, name: Seven, kind: quality}}
  - {{id: D8, name: Eight, kind: quality}}
questions:
{questions}
raters:
  - {{id: cto, name: CTO, emails: [cto@example.org]}}
  - {{id: logician, name: Logician, emails: [logician@example.org]}}
passes:
  - {{id: unblinded, conditions: [A, B], dimensions: [D1, D2, D3, D4, D5, D6, D7, D8], primary: true}}
markers: [FACT, HYP]
rules: {{pass: {{questions: 6}}}}
"""
PARAGRAPH = ("The evidence on this point is mixed, and the honest answer depends on what is being "
             "measured, over which period, and against which baseline of comparison. ")


def build(root: Path) -> None:
    qs = "\n".join(f"  - {{id: Q{n}, text: \"Question number {n}?\", expects: [1]}}"
                   for n in range(1, QUESTIONS + 1))
    (root / "aoven.yaml").write_text(PLAN.format(questions=qs), encoding="utf-8")
    for cond in ("a", "b"):
        folder = root / "study" / f"test_{cond}"
        folder.mkdir(parents=True)
        for n in range(1, QUESTIONS + 1):
            body = "\n\n".join(PARAGRAPH * 2 for _ in range(4))
            (folder / f"q{n}.md").write_text(f"# Q{n}\n\n## Response\n\n{body}\n", encoding="utf-8")


def request(port: int, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


def timed(fn: object, runs: int = RUNS) -> tuple[float, object]:
    out: object = None
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def chromium_seconds(url: str, tmp: Path) -> float | None:
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if binary is None:
        return None
    base = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
            "--disable-background-networking", "--disable-component-update", f"--user-data-dir={tmp}",
            "--virtual-time-budget=60000", "--dump-dom"]

    def run(target: str) -> float:
        start = time.perf_counter()
        subprocess.run([*base, target], capture_output=True, timeout=300, check=False)
        return time.perf_counter() - start

    run("about:blank")  # warm the profile
    blank = statistics.median(run("about:blank") for _ in range(3))
    page = statistics.median(run(url) for _ in range(3))
    return page - blank


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="aoven-score-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        build(root)
        plan = load_plan(root / "aoven.yaml")
        page = load_page(plan, resolve_sheet(plan, "cto", None, None, None), root, None)
        server = ScoreServer(page, 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.port
        load, sheet_raw = timed(lambda: (request(port, "GET", "/"), request(port, "GET", "/api/sheet"))[1][1])
        sheet = json.loads(sheet_raw)  # type: ignore[arg-type]
        cells = {f"{i['id']}/{d['id']}": 0 for i in sheet["items"] for d in sheet["dimensions"]}
        body = json.dumps({"cells": cells, "notes": {}}).encode()
        save, saved = timed(lambda: request(port, "POST", "/api/sheet", body))
        status, raw = saved  # type: ignore[misc]
        assert status == 200 and json.loads(raw)["validate"]["ok"], raw[:500]
        browser = chromium_seconds(server.url, Path(tmp) / "profile")
        server.shutdown()
        print(f"{QUESTIONS} questions × 2 conditions × 8 dimensions = {len(cells)} cells; "
              f"/api/sheet {len(sheet_raw) / 1e6:.1f} MB")  # type: ignore[arg-type]
        print(f"page load (GET / + GET /api/sheet), median of {RUNS}: {load * 1000:.0f} ms "
              "(target ≤ 1000 ms)")
        print(f"save (POST every cell: write + validate), median of {RUNS}: {save * 1000:.0f} ms "
              "(target ≤ 300 ms)")
        if browser is not None:
            print(f"Chromium: draw and fill the page, beyond its own start-up: {browser * 1000:.0f} ms")


if __name__ == "__main__":
    main()

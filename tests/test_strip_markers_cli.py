"""`aoven-git strip-markers [--check]` on the example study.

What the copies must be is checked from outside: no plan marker is left in the response part,
everything above the response heading is byte-identical, and non-marker brackets survive.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.conftest import EXAMPLE, PLAN_MARKERS, run_cli

STUDY = "tests/phase2"
MARKERS = PLAN_MARKERS
MARKER_TOKEN = re.compile(r"\[\s*(?:" + "|".join(MARKERS) + r")(?![A-Za-z0-9_])[^\]\n]*\]")


def _fresh(root: Path) -> Path:
    """The example without the committed stripped copies."""
    shutil.rmtree(root / STUDY / "test_b_stripped", ignore_errors=True)
    return root


def _split(text: str) -> tuple[str, str]:
    head, sep, rest = text.partition("\n## Response\n")
    assert sep, "example responses have a Response heading"
    return head + sep, rest


def test_writes_the_ten_copies(example_study: Path) -> None:
    root = _fresh(example_study)
    r = run_cli("strip-markers", cwd=root)
    assert r.code == 0, r.output
    out = root / STUDY / "test_b_stripped"
    assert sorted(p.name for p in out.iterdir()) == sorted(f"q{n}.md" for n in range(1, 11))
    for n in range(1, 11):
        original = (root / STUDY / "test_b" / f"q{n}.md").read_text("utf-8")
        copy = (out / f"q{n}.md").read_text("utf-8")
        head_o, body_o = _split(original)
        head_c, body_c = _split(copy)
        assert head_c == head_o  # title, prompt and [Aoven v0.1 …] line verbatim
        assert MARKER_TOKEN.search(body_o), f"q{n} has markers to strip"
        assert not MARKER_TOKEN.search(body_c), f"q{n}: {MARKER_TOKEN.search(body_c)}"
        # only marker tokens went away: the words of the text are all still there, in order
        words = lambda s: re.findall(r"[A-Za-z0-9']+", MARKER_TOKEN.sub(" ", s))  # noqa: E731
        assert words(body_c) == words(body_o)
    q1 = (out / "q1.md").read_text("utf-8")
    assert "[citation needed]" in q1 and "](https://example.org/health/alzheimers-overview)" in q1
    assert "[1]" in (out / "q10.md").read_text("utf-8")
    # A responses are not part of a stripped pass
    assert not (root / STUDY / "test_a_stripped").exists()


def test_check_passes_after_writing_and_a_rerun_changes_nothing(example_study: Path) -> None:
    root = _fresh(example_study)
    assert run_cli("strip-markers", "--check", cwd=root).code == 1  # nothing written yet
    assert run_cli("strip-markers", cwd=root).code == 0
    before = {p.name: p.read_bytes() for p in (root / STUDY / "test_b_stripped").iterdir()}
    r = run_cli("strip-markers", "--check", cwd=root)
    assert r.code == 0 and "10 up to date" in r.out
    r = run_cli("strip-markers", cwd=root)
    assert r.code == 0 and "0 written" in r.out
    assert {p.name: p.read_bytes() for p in (root / STUDY / "test_b_stripped").iterdir()} == before


def test_check_fails_naming_a_stale_copy(example_study: Path) -> None:
    root = _fresh(example_study)
    run_cli("strip-markers", cwd=root)
    q3 = root / STUDY / "test_b" / "q3.md"
    q3.write_text(q3.read_text("utf-8").replace("are common", "are very common"), "utf-8")
    r = run_cli("strip-markers", "--check", cwd=root)
    assert r.code == 1
    assert f"stale: {STUDY}/test_b_stripped/q3.md" in r.out
    assert "q4.md" not in r.out
    # --check wrote nothing
    assert "very common" not in (root / STUDY / "test_b_stripped" / "q3.md").read_text("utf-8")


def test_check_fails_naming_a_deleted_copy(example_study: Path) -> None:
    root = _fresh(example_study)
    run_cli("strip-markers", cwd=root)
    (root / STUDY / "test_b_stripped" / "q7.md").unlink()
    r = run_cli("strip-markers", "--check", "--format", "json", cwd=root)
    assert r.code == 1
    doc = json.loads(r.out)
    assert doc["missing"] == [f"{STUDY}/test_b_stripped/q7.md"] and doc["stale"] == []


def test_bundled_copies_are_up_to_date(example_study: Path) -> None:
    """tests/phase2/test_b_stripped/ is committed; it must be what strip-markers writes today."""
    assert (EXAMPLE / "test_b_stripped" / "q1.md").is_file()
    r = run_cli("strip-markers", "--check", cwd=example_study)
    assert r.code == 0, r.output


def test_unknown_caps_token_is_a_warning_and_kept(example_study: Path) -> None:
    root = _fresh(example_study)
    q2 = root / STUDY / "test_b" / "q2.md"
    text = q2.read_text("utf-8").rstrip("\n") + "\n\n[GUESS] An unlisted label.\n"
    q2.write_text(text, "utf-8")
    line = len(text.splitlines())
    r = run_cli("strip-markers", cwd=root)
    assert r.code == 0
    assert f"{STUDY}/test_b/q2.md:{line}: [GUESS]" in r.err
    assert "[GUESS] An unlisted label." in (root / STUDY / "test_b_stripped" / "q2.md").read_text("utf-8")


def test_missing_response_is_an_error(example_study: Path) -> None:
    root = _fresh(example_study)
    (root / STUDY / "test_b" / "q9.md").unlink()
    r = run_cli("strip-markers", cwd=root)
    assert r.code == 1
    assert f"{STUDY}/test_b/q9.md: response missing" in r.err
    assert (root / STUDY / "test_b_stripped" / "q8.md").is_file()  # the others are still written


def test_line_endings_survive(example_study: Path) -> None:
    root = _fresh(example_study)
    q5 = root / STUDY / "test_b" / "q5.md"
    q5.write_bytes(q5.read_bytes().replace(b"\n", b"\r\n"))
    assert run_cli("strip-markers", cwd=root).code == 0
    copy = (root / STUDY / "test_b_stripped" / "q5.md").read_bytes()
    assert b"\r\n" in copy and b"\n" not in copy.replace(b"\r\n", b"")


def test_no_plan_is_exit_2(tmp_path: Path) -> None:
    r = run_cli("strip-markers", cwd=tmp_path)
    assert r.code == 2 and "plan file not found" in r.err

"""`aoven-git demo --design arms|probes`: the bundled design studies replayed to their decision,
as a user runs them (a separate process), and the seed's demo unchanged by the option."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import Result, run_cli, run_subprocess


def demo(*args: str, tmp: Path) -> Result:
    res = run_subprocess("demo", *args, cwd=tmp, env={"TMPDIR": str(tmp)})
    assert "Traceback" not in res.output
    return res


def masked(out: str, *paths: Path) -> str:
    """Output with what differs between two honest runs hidden: paths and commit ids."""
    for p in paths:
        out = out.replace(str(p), "<DIR>")
    return re.sub(r"\b[0-9a-f]{8}\b", "<commit>", out)


@pytest.mark.parametrize(
    ("design", "decision", "criteria"),
    [
        ("arms", "Decision: decided: adopt P1+P2 (row 2)",
         {"B1-same": "holds", "B1-lighter": "holds", "B1-seed": "holds",
          "B2-same": "fails", "B2-lighter": "holds", "B2-seed": "holds"}),
        ("probes", "Decision: decided: ship TRT (row 1)",
         {"L12-up": "holds", "L-moved": "holds", "no-harm": "holds"}),
    ],
)
def test_demo_design_replays_the_bundled_study_to_its_decision(
    tmp_path: Path, design: str, decision: str, criteria: dict[str, str]
) -> None:
    keep = tmp_path / "kept"
    res = demo("--design", design, "--keep", str(keep), tmp=tmp_path)
    assert res.code == 0, res.output
    assert "verify-seal: complete" in res.out
    assert "Verdict: PASS" in res.out
    assert decision in res.out.splitlines()
    printed = dict(re.findall(r"^  (\S+)\s+(holds|fails|undecided|contested)\s", res.out, re.M))
    assert printed == criteria
    # the kept repository is a real study: verify-seal and report agree with what was printed
    seals = run_cli("verify-seal", "--format", "json", cwd=keep)
    assert seals.code == 0 and json.loads(seals.out)["violations"] == []
    document = json.loads((keep / "aoven-report.json").read_text(encoding="utf-8"))
    assert {c["id"]: c["outcome"] for c in document["criteria"]} == criteria
    assert document["decision"]["status"] == "decided"


def test_demo_design_arms_seals_layer_one_before_layer_two(tmp_path: Path) -> None:
    """The replay's order: every rater seals layer 1, then layer 2, then anyone reveals."""
    keep = tmp_path / "kept"
    res = demo("--design", "arms", "--keep", str(keep), tmp=tmp_path)
    steps = [line.split(None, 1)[1] for line in res.out.splitlines()
             if re.match(r"^  [0-9a-f]{8}  ", line)]
    seals = [s for s in steps if " seals " in s]
    assert seals == [f"{r} seals {p} (digest only)" for p in ("layer1", "layer2")
                     for r in ("mara", "tomas", "ines")]
    assert steps.index(seals[-1]) < min(i for i, s in enumerate(steps) if " reveals " in s)


def test_demo_design_seed_is_the_default_demo(demo_history: tuple[Result, Path], tmp_path: Path) -> None:
    default, default_root = demo_history
    keep = tmp_path / "kept"
    seed = run_cli("demo", "--design", "seed", "--keep", str(keep))
    assert seed.code == 0, seed.output
    assert masked(seed.out, keep) == masked(default.out, default_root)


def test_demo_rejects_an_unknown_design(tmp_path: Path) -> None:
    res = demo("--design", "crossover", tmp=tmp_path)
    assert res.code == 2
    assert "crossover" in res.output and "arms" in res.output and "probes" in res.output
    assert list(tmp_path.iterdir()) == []  # nothing was built


def test_demo_help_names_the_designs(tmp_path: Path) -> None:
    res = run_cli("demo", "--help")
    assert res.code == 0
    assert re.search(r"--design \[arms\|probes\|seed\]", res.out)


@pytest.mark.parametrize("bundle", ["_example_arms", "_example_probes"])
def test_bundled_design_plans_pass_check_plan(tmp_path: Path, bundle: str) -> None:
    """The bundled plans are what `init --design` users copy from: check-plan finds no problem."""
    source = Path(__file__).resolve().parent.parent / "aoven_git" / bundle
    shutil.copy(source / "aoven.yaml", tmp_path / "aoven.yaml")
    res = run_cli("check-plan", "--format", "json", cwd=tmp_path)
    assert res.code == 0, res.output
    assert json.loads(res.out)["ok"] is True


def test_demo_design_tamper_is_caught_in_a_design_study(tmp_path: Path) -> None:
    """`--tamper` is the same replay for every bundle: one rater reveals early, the next reads
    the scores and seals by hand; verify-seal names the peek and the decision is withheld."""
    keep = tmp_path / "kept"
    res = demo("--design", "probes", "--tamper", "--keep", str(keep), tmp=tmp_path)
    assert res.code == 0, res.output
    assert "verify-seal: violated" in res.out and "visible-at-seal [ravi]" in res.out
    document = json.loads((keep / "aoven-report.json").read_text(encoding="utf-8"))
    assert document["verdict"] == "NOT-READY" and document["decision"]["status"] == "not-ready"

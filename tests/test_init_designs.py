"""`init --design seed|arms|probes`: each writes its commented plan, which loads and passes
check-plan; seed (the default) stays byte for byte what init always wrote; the rest of the study
skeleton follows the plan's own study folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoven_git.commands.init import DESIGNS
from aoven_git.plan import load_plan
from tests.conftest import DEFAULT_PLAN, GitRepo, run_cli


def test_design_seed_is_the_default_byte_for_byte(tmp_path: Path) -> None:
    default, seed = tmp_path / "default", tmp_path / "seed"
    for folder, args in ((default, ()), (seed, ("--design", "seed"))):
        folder.mkdir()
        result = run_cli("init", "--repo", str(folder), *args)
        assert result.code == 0, result.output
    assert (seed / "aoven.yaml").read_bytes() == DEFAULT_PLAN.read_bytes()
    written = sorted(p.relative_to(default) for p in default.rglob("*") if p.is_file())
    assert written == sorted(p.relative_to(seed) for p in seed.rglob("*") if p.is_file())
    for rel in written:
        assert (default / rel).read_bytes() == (seed / rel).read_bytes(), rel
    assert run_cli("init", "--repo", str(tmp_path / "x"), "--design", "seed").out == \
        run_cli("init", "--repo", str(tmp_path / "y")).out.replace(str(tmp_path / "y"), str(tmp_path / "x"))


def test_the_four_arm_plan_has_the_ids_the_bundled_study_uses(git_repo: GitRepo) -> None:
    result = run_cli("init", "--design", "arms", cwd=git_repo.path)
    assert result.code == 0, result.output
    plan_file = git_repo.path / "aoven.yaml"
    assert plan_file.read_bytes() == DESIGNS["arms"].read_bytes()
    assert plan_file.read_text().startswith("# yaml-language-server: $schema=.aoven/plan.schema.json")
    plan = load_plan(plan_file)
    assert [(c.id, c.role) for c in plan.conditions] == [
        ("A", "baseline"), ("B", "treatment"), ("B1", "treatment"), ("B2", "treatment")]
    assert [q.id for q in plan.questions] == ["Q1", "Q2", "Q3", "Q4", "Q5"]
    assert [d.id for d in plan.dimensions] == [f"D{i}" for i in range(1, 9)]
    layer1, layer2 = plan.passes
    assert (layer1.id, layer1.primary) == ("layer1", True)
    assert layer1.dimensions == ("D1", "D2", "D3", "D4", "D5", "D6")
    assert (layer2.id, layer2.dimensions, layer2.after) == ("layer2", ("D7", "D8"), ("layer1",))
    kinds = {c.id: (c.kind, c.of, c.per, c.bound and str(c.bound), c.treatment) for c in plan.criteria}
    assert kinds == {
        "B1-same": ("delta", ("B1", "B"), "dimension", "|v| ≤ 1/2", None),
        "B1-lighter": ("delta", ("B1", "B"), "sum", "< 0", None),
        "B1-seed": ("seed", (), "dimension", None, "B1"),
        "B2-same": ("delta", ("B2", "B"), "dimension", "|v| ≤ 1/2", None),
        "B2-lighter": ("delta", ("B2", "B"), "sum", "< 0", None),
        "B2-seed": ("seed", (), "dimension", None, "B2"),
    }
    assert [(r.criteria, r.then) for r in plan.decisions] == [
        (("B1-same", "B1-lighter", "B1-seed", "B2-same", "B2-lighter", "B2-seed"), "adopt P1+P2+P3"),
        (("B1-same", "B1-lighter", "B1-seed"), "adopt P1+P2"),
        ((), "defer: keep B and revise the patches"),
    ]
    assert {"criteria", "decisions", "replicates"} <= set(plan.locked)
    check = run_cli("check-plan", cwd=git_repo.path)
    assert check.code == 0 and check.out.rstrip().endswith("ok"), check.output


def test_the_probe_plan_has_labels_replicates_and_its_criteria(git_repo: GitRepo) -> None:
    result = run_cli("init", "--design", "probes", cwd=git_repo.path)
    assert result.code == 0, result.output
    plan = load_plan(git_repo.path / "aoven.yaml")
    assert [(c.id, c.role) for c in plan.conditions] == [("CTRL", "baseline"), ("TRT", "treatment")]
    assert [q.id for q in plan.questions] == [f"L{i}" for i in range(1, 7)]
    assert plan.replicates == 3 and plan.scale.labels == ("PASS", "FAIL", "HARM")
    assert [(p.id, p.dimensions) for p in plan.passes] == [("main", ("V",))]
    both, most, harm = plan.criteria
    assert (both.kind, both.label, both.of, both.questions, both.require, str(both.bound)) == (
        "rate", "PASS", ("TRT", "CTRL"), ("L1", "L2"), None, "> 0")
    assert (most.questions, most.require) == (("L1", "L2", "L3", "L4", "L5"), 3)
    assert (harm.label, harm.of, harm.questions, str(harm.bound)) == (
        "HARM", ("TRT",), (), "≤ 0")  # no questions listed: every probe of the round
    assert plan.decisions[-1].otherwise and len(plan.decisions) == 3
    # the next steps name this plan's own response files
    assert "study/ctrl/l1_1.md, study/trt/l1_1.md" in result.out
    assert run_cli("check-plan", cwd=git_repo.path).code == 0


@pytest.mark.parametrize("design", ["arms", "probes"])
def test_the_skeleton_follows_the_plans_study_folder(git_repo: GitRepo, design: str) -> None:
    assert run_cli("init", "--design", design, cwd=git_repo.path).code == 0
    study_dir = load_plan(git_repo.path / "aoven.yaml").study_dir
    assert (git_repo.path / study_dir / "README.md").is_file()
    assert f"/{study_dir}/** -text" in (git_repo.path / ".gitattributes").read_text()
    assert (git_repo.path / ".github" / "workflows" / "aoven-study.yml").is_file()


@pytest.mark.parametrize("design", ["arms", "probes"])
def test_every_key_of_the_templates_is_explained_by_a_comment(design: str) -> None:
    """The templates teach the format: every key that shapes the design has its comment (on the
    line before it, or beside it)."""
    lines = DESIGNS[design].read_text(encoding="utf-8").splitlines()
    keys = ("study_dir:", "responses:", "replicates:", "scale:", "conditions:", "dimensions:", "questions:",
            "rounds:", "raters:", "passes:", "rules:", "criteria:", "decisions:", "locked:")
    for key in keys:
        index = next(i for i, line in enumerate(lines) if line.startswith(key))
        assert lines[index - 1].startswith("#") or "#" in lines[index], (design, key)


def test_an_unknown_design_is_a_usage_error_and_writes_nothing(tmp_path: Path) -> None:
    result = run_cli("init", "--repo", str(tmp_path), "--design", "factorial")
    assert result.code == 2
    assert "factorial" in result.err and "seed" in result.err
    assert list(tmp_path.iterdir()) == []


def test_init_refuses_to_overwrite_whatever_the_design(tmp_path: Path) -> None:
    (tmp_path / "aoven.yaml").write_text("mine\n")
    result = run_cli("init", "--repo", str(tmp_path), "--design", "probes")
    assert result.code == 2 and "--force" in result.err
    assert (tmp_path / "aoven.yaml").read_text() == "mine\n"
    assert not (tmp_path / "study").exists()

"""init writes a working study skeleton and never overwrites without --force."""

from __future__ import annotations

from pathlib import Path

from aoven_git.plan import load_plan
from tests.conftest import DEFAULT_PLAN, ROOT, GitRepo, run_cli


def test_init_writes_a_plan_that_loads_and_keeps_its_comments(git_repo: GitRepo) -> None:
    result = run_cli("init", cwd=git_repo.path)
    assert result.code == 0, result.output
    plan_file = git_repo.path / "aoven.yaml"
    assert plan_file.read_bytes() == DEFAULT_PLAN.read_bytes()
    assert plan_file.read_text().startswith("# yaml-language-server: $schema=.aoven/plan.schema.json")
    assert (git_repo.path / ".aoven" / "plan.schema.json").is_file()
    assert (git_repo.path / ".pre-commit-config.yaml").is_file()
    assert (git_repo.path / "tests" / "phase2" / "README.md").is_file()
    assert load_plan(plan_file).study == "aoven-v0.1"
    assert run_cli("check-plan", cwd=git_repo.path).code == 0


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text("repos: []\n")
    result = run_cli("init", "--repo", str(tmp_path))
    assert result.code == 2
    assert ".pre-commit-config.yaml" in result.err and "--force" in result.err
    assert not (tmp_path / "aoven.yaml").exists()
    assert (tmp_path / ".pre-commit-config.yaml").read_text() == "repos: []\n"


def test_init_force_overwrites(tmp_path: Path) -> None:
    (tmp_path / "aoven.yaml").write_text("junk")
    assert run_cli("init", "--repo", str(tmp_path), "--force").code == 0
    assert (tmp_path / "aoven.yaml").read_bytes() == DEFAULT_PLAN.read_bytes()


def test_init_outside_git_says_so(tmp_path: Path) -> None:
    result = run_cli("init", "--repo", str(tmp_path))
    assert result.code == 0
    assert "git init" in result.out


def _undescribed(node: object, path: str = "") -> list[str]:
    """Every property (at any depth, through items/oneOf/$defs) that lacks a description."""
    out: list[str] = []
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            if isinstance(sub, dict) and "description" not in sub:
                out.append(f"{path}.{name}")
            out += _undescribed(sub, f"{path}.{name}")
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                out += _undescribed(node[key], f"{path}[]")
        for key in ("oneOf", "anyOf", "allOf"):
            for sub in node.get(key) or []:
                out += _undescribed(sub, path)
        for name, sub in (node.get("$defs") or {}).items():
            out += _undescribed(sub, f"$defs.{name}")
    return out


def test_init_plan_validates_against_the_written_schema_independently(tmp_path: Path) -> None:
    import json

    from jsonschema import Draft202012Validator
    from ruamel.yaml import YAML

    assert run_cli("init", "--repo", str(tmp_path)).code == 0
    plan_text = (tmp_path / "aoven.yaml").read_text("utf-8")
    first = plan_text.splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    schema_file = tmp_path / first.split("$schema=", 1)[1].strip()  # relative to the plan, as editors read it
    schema = json.loads(schema_file.read_text("utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    data = YAML(typ="safe").load(plan_text)
    assert list(Draft202012Validator(schema).iter_errors(data)) == []
    broken = {**data, "raters": [{"id": "Not A Rater Id"}]}
    assert list(Draft202012Validator(schema).iter_errors(broken)), "the schema must reject a bad rater id"


def test_every_schema_property_has_a_description_for_editors() -> None:
    import json

    for name in ("plan", "scores"):
        schema = json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text("utf-8"))
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert _undescribed(schema) == [], name

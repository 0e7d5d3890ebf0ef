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


# --- .gitattributes, the response template, next steps, placeholders ----------------------------


def _attr(repo: GitRepo, *paths: str) -> dict[str, str]:
    out = repo.git("check-attr", "text", "--", *paths)
    return {line.rsplit(": text: ", 1)[0]: line.rsplit(": text: ", 1)[1] for line in out.splitlines()}


def test_init_marks_every_study_file_minus_text_and_nothing_else(git_repo: GitRepo) -> None:
    result = run_cli("init", cwd=git_repo.path)
    assert result.code == 0, result.output
    assert "wrote .gitattributes" in result.out
    text = (git_repo.path / ".gitattributes").read_text()
    assert "SHA-256" in text and "CRLF" in text  # the comment says why
    study = [
        "aoven.yaml", "tests/phase2/scores_cto.md", "tests/phase2/scores_cto_blinded.md",
        "tests/phase2/seals/scores_cto.sha256", "tests/phase2/reconciliation.md",
        "tests/phase2/test_a/q1.md", "tests/phase2/test_b_stripped/q1.md",
        "tests/phase2/amendments/v012/scores_cto.md", "tests/phase2/amendments/v012/seals/scores_cto.sha256",
    ]
    others = ["README.md", "src/aoven.yaml", "tests/phase2x/scores_cto.md", "docs/scores_cto.md"]
    attrs = _attr(git_repo, *study, *others)
    assert {p: attrs[p] for p in study} == dict.fromkeys(study, "unset")
    assert {p: attrs[p] for p in others} == dict.fromkeys(others, "unspecified")


def test_minus_text_keeps_an_editors_crlf_so_the_seal_is_over_the_bytes_on_disk(git_repo: GitRepo) -> None:
    """Under core.autocrlf=true git would store LF for a CRLF file; the study's files are stored as
    they are on disk, so the digest of a sealed file is the SHA-256 of the file the rater sees."""
    import hashlib
    import shutil

    from tests.conftest import EXAMPLE

    assert run_cli("init", cwd=git_repo.path).code == 0
    for name in ("test_a", "test_b", "test_b_stripped"):
        shutil.copytree(EXAMPLE / name, git_repo.path / "tests" / "phase2" / name)
    git_repo.commit("plan and responses", author=("Lead", "lead@example.org"))
    git_repo.git("config", "core.autocrlf", "true")
    git_repo.git("config", "user.email", "cto@example.org")
    score = git_repo.path / "tests" / "phase2" / "scores_cto.md"
    score.write_bytes((EXAMPLE / "scores_cto.md").read_bytes().replace(b"\n", b"\r\n"))
    control = git_repo.write("notes.md", b"one\r\ntwo\r\n")

    res = run_cli("seal", "--rater", "cto", cwd=git_repo.path)
    assert res.code == 0, res.output
    seal = (git_repo.path / "tests" / "phase2" / "seals" / "scores_cto.sha256").read_text()
    on_disk = score.read_bytes()
    assert b"\r\n" in on_disk and hashlib.sha256(on_disk).hexdigest() in seal
    git_repo.git("add", "tests/phase2/scores_cto.md", control.name)
    eol = git_repo.git("ls-files", "--eol", "--", "tests/phase2/scores_cto.md", "notes.md")
    assert "i/crlf" in next(ln for ln in eol.splitlines() if ln.endswith("scores_cto.md"))
    # control: a file outside the study is converted as usual
    assert "i/lf" in next(ln for ln in eol.splitlines() if ln.endswith("notes.md"))


def test_init_refuses_an_existing_gitattributes_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".gitattributes").write_text("*.png binary\n")
    result = run_cli("init", "--repo", str(tmp_path))
    assert result.code == 2
    assert "refusing to overwrite existing files (nothing was written):\n  .gitattributes\n" in result.err
    assert "merge your own lines back" in result.err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitattributes"]
    assert (tmp_path / ".gitattributes").read_text() == "*.png binary\n"


def test_gitattributes_names_a_custom_plan_path_quoted_when_needed(git_repo: GitRepo) -> None:
    assert run_cli("init", "--plan", str(git_repo.path / "my plan.yaml"), cwd=git_repo.path).code == 0
    assert '"/my plan.yaml" -text\n' in (git_repo.path / ".gitattributes").read_text()
    attrs = _attr(git_repo, "my plan.yaml", "aoven.yaml")
    assert attrs == {"my plan.yaml": "unset", "aoven.yaml": "unspecified"}


def test_nothing_init_writes_keeps_a_placeholder(git_repo: GitRepo) -> None:
    import re

    from aoven_git import __version__
    from aoven_git.commands.init import PLACEHOLDER

    result = run_cli("init", cwd=git_repo.path)
    written = [git_repo.path / line.removeprefix("wrote ") for line in result.out.splitlines()
               if line.startswith("wrote ")]
    assert len(written) == 8
    for path in written:
        assert not PLACEHOLDER.search(path.read_text("utf-8")), path
    workflow = (git_repo.path / ".github" / "workflows" / "aoven-study.yml").read_text()
    assert re.search(rf"^ +package: aoven-git=={re.escape(__version__)}$", workflow, re.M)


def test_response_template_shows_the_layout_the_tools_rely_on(git_repo: GitRepo) -> None:
    from aoven_git import naming
    from aoven_git.markers import response_text, strip_response

    assert run_cli("init", cwd=git_repo.path).code == 0
    plan = load_plan(git_repo.path / "aoven.yaml")
    rel = f"{plan.study_dir}/RESPONSE_TEMPLATE.md"
    text = (git_repo.path / rel).read_text("utf-8")
    assert not naming.response_patterns(plan).match(rel)  # never taken for a response
    assert naming.classify(plan, rel).kind == "other"
    lines = text.splitlines()
    title = next(i for i, ln in enumerate(lines) if ln.startswith("# "))
    prompt, response = lines.index("## Prompt"), lines.index("## Response")
    aoven = next(i for i, ln in enumerate(lines) if ln.startswith("[Aoven v0.1 |"))
    assert title < prompt < aoven < response
    # the response part starts after the heading; the markers are there, the framing line is not
    part = response_text(text)
    assert "[Aoven" not in part and "[FACT]" in part and "[HYP, CONF(medium)]" in part
    stripped = strip_response(text, plan.markers)
    assert stripped.removed == 4
    assert stripped.text.splitlines()[: response + 1] == lines[: response + 1]  # kept byte for byte
    assert "[FACT]" not in stripped.text and "only the token goes." in stripped.text
    # the study dir with the template and README committed: nothing to validate, nothing violated
    git_repo.commit("init", author=("Lead", "lead@example.org"))
    assert run_cli("validate", cwd=git_repo.path).code == 0
    verified = run_cli("verify-seal", cwd=git_repo.path)
    assert verified.code == 0 and "error" not in verified.out, verified.output


def test_next_steps_follow_the_team_workflow(git_repo: GitRepo) -> None:
    out = run_cli("init", cwd=git_repo.path).out
    steps = out[out.index("Next steps"):]
    order = ["aoven-git check-plan", "aoven-git strip-markers", "protect main", "aoven-git install-hook",
             "aoven-git seal --rater <id> --pass <pass> for EVERY pass", "git pull",
             "aoven-git reveal --rater <id> --pass <pass> for each pass", "each rater commits their own rows",
             "validate, verify-seal and report"]
    at = [steps.index(s) for s in order]
    assert at == sorted(at), steps
    assert "hooks are not cloned" in steps and "RESPONSE_TEMPLATE.md" in steps
    assert "git init" not in steps  # inside a repository: no such note


# --- where the plan was looked for ----------------------------------------------------------------


def test_plan_not_found_outside_a_repository_says_where_and_how(tmp_path: Path) -> None:
    folder = tmp_path / "somewhere"
    folder.mkdir()
    result = run_cli("check-plan", cwd=folder)
    assert result.code == 2 and "Traceback" not in result.output
    assert result.err.startswith(f"aoven-git: error: aoven.yaml: plan file not found: looked for "
                                 f"{folder.resolve()}/aoven.yaml\n")
    assert f"  {folder.resolve()} is not inside a git repository.\n" in result.err
    assert "point to it with --repo DIR (its repository) or --plan FILE" in result.err
    assert "run `git init`, then `aoven-git init`, in the folder that is to hold it." in result.err


def test_plan_not_found_in_a_repository_names_its_root(git_repo: GitRepo) -> None:
    sub = git_repo.path / "docs" / "notes"
    sub.mkdir(parents=True)
    root = git_repo.path.resolve()
    result = run_cli("validate", cwd=sub)  # from a sub-folder: the plan is looked for at the root
    assert result.code == 2
    assert f"plan file not found: looked for {root}/aoven.yaml\n  {root} is the root of a git repository." \
        in result.err
    assert f"run `aoven-git init` in {root} (it writes the plan there)" in result.err

    result = run_cli("report", "--plan", "study.yaml", cwd=sub)  # --plan is relative to the current dir
    assert result.code == 2
    assert f"looked for {sub.resolve()}/study.yaml\n" in result.err
    assert f"  {sub.resolve()} is inside the git repository {root} (not at its root).\n" in result.err

    result = run_cli("check-plan", "--plan", str(git_repo.path / "gone" / "aoven.yaml"), cwd=sub)
    assert result.code == 2 and f"  {root}/gone does not exist.\n" in result.err

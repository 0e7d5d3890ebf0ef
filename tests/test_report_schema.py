"""schemas/report.schema.json: the report JSON's shape, loaded through aoven_git.schemas like the
plan's and the score files'. Every key carries a description; the bundled example's report, a
NOT-READY one, its amendment layer and a blind pass's report validate; a NaN, an unknown key or a
wrong type does not. (Every other test that writes a report JSON checks it with
tests/report_documents.py.)"""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aoven_git.schemas import SCHEMA_DIR, schema, validator
from tests.conftest import run_cli
from tests.report_documents import check_report, checked_report
from tests.test_report_blind import BlindKey, BlindStudy, report, sealed  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
STUDY = "tests/phase2"


def _properties(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (path, subschema) under a `properties` or `patternProperties` of the schema."""
    if isinstance(node, dict):
        for kind in ("properties", "patternProperties"):
            for key, sub in (node.get(kind) or {}).items():
                yield f"{path}/{key}", sub
        for key, sub in node.items():
            inner = path if key in ("properties", "patternProperties") else f"{path}/{key}"
            yield from _properties(sub, inner)
    elif isinstance(node, list):
        for sub in node:
            yield from _properties(sub, path)


def _json(root: Path, *args: str) -> dict[str, Any]:
    res = run_cli("report", "--format", "json", "--bootstrap", "0", *args, cwd=root)
    assert res.code == 0, res.output
    return checked_report(res.out)


def test_the_schema_is_draft_2020_12_and_describes_every_key() -> None:
    s = schema("report")
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    validator("report").check_schema(s)
    keys = list(_properties(s))
    assert len(keys) > 150
    undescribed = [path for path, sub in keys if not (isinstance(sub, dict) and sub.get("description"))]
    assert undescribed == []
    for name, sub in s["$defs"].items():
        assert sub.get("description"), name


def test_the_example_report_validates_with_every_top_level_key_described(example_study: Path) -> None:
    doc = _json(example_study)
    assert doc["verdict"] == "PASS"
    assert set(doc) <= set(schema("report")["properties"])
    assert set(schema("report")["required"]) <= set(doc)


def test_a_not_ready_report_validates(example_study: Path) -> None:
    for path in (example_study / STUDY).glob("scores_logician*.md"):
        path.unlink()
    doc = _json(example_study)
    assert doc["verdict"] == "NOT-READY" and doc["improvement"] is None
    assert all(r["value"] is None for r in doc["rules"])


def test_the_amendment_layer_validates(example_study: Path) -> None:
    doc = _json(example_study)
    assert [a["id"] for a in doc["amendments"]] == ["d8-marker-load"]
    assert doc["amendments"][0]["verdict"] == "FAIL"


def test_a_blind_pass_report_validates_pending_and_unblinded(
    sealed: tuple[BlindStudy, Path, BlindKey],  # noqa: F811
) -> None:
    s, key_file, _ = sealed
    assert report(s)["blind_passes"][0]["state"] == "pending"  # report() checks the schema
    assert s.run("lead", "unblind", "--pass", "hidden", "--key", str(key_file)).code == 0
    doc = report(s)
    assert doc["blind_passes"][0]["state"] == "unblinded" and doc["kappa"]["hidden"]


@pytest.mark.parametrize("change, where", [
    (lambda d: d.update(surprise=1), "(document)"),
    (lambda d: d.update(verdict="MAYBE"), "verdict"),
    (lambda d: d["rules"][0].update(value="0.4"), "rules/0/value"),
    (lambda d: d["reporting_checklist"][0].update(status="unknown"), "reporting_checklist/0/status"),
    (lambda d: d["kappa"]["unblinded"]["D1"].update(value_exact="0.92"), "kappa/unblinded/D1/value_exact"),
])
def test_the_schema_refuses_what_a_report_never_holds(example_study: Path, change: Any, where: str) -> None:
    doc = json.loads(run_cli("report", "--format", "json", "--bootstrap", "0", cwd=example_study).out)
    change(doc)
    with pytest.raises(AssertionError, match=re.escape(f"\n{where}: ")):
        check_report(doc)


def test_a_nan_is_refused_before_the_schema() -> None:
    with pytest.raises(AssertionError, match="NaN"):
        checked_report('{"schema": "aoven-git/report/1", "improvement": NaN}')


def test_the_schema_ships_in_the_wheel() -> None:
    """`_schemas` is a symlink to schemas/; pyproject's package data takes every JSON under it."""
    assert (SCHEMA_DIR / "report.schema.json").is_file()
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    data = setuptools["package-data"]["aoven_git"]
    assert any(fnmatch.fnmatch("_schemas/report.schema.json", pattern) for pattern in data)

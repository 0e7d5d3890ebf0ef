"""Hand-written plans go wrong in every way: nothing a user can put in aoven.yaml may crash the
tool. Every input gives exit 0, 1 or 2 (never 4, the internal-error code), no traceback, and a
failure message that names the plan file so the user knows which file to fix.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tests.conftest import DEFAULT_PLAN, EXAMPLE, run_cli

PLAN_NAME = "aoven.yaml"
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def _load_default() -> Any:
    """The default plan plus one of everything it leaves empty (a blind pass, leak patterns,
    an amendment, a re-test round), so that mutations reach every key the plan can hold."""
    doc = YAML(typ="safe").load(DEFAULT_PLAN.read_text("utf-8"))
    doc["passes"].append(
        {"id": "hidden", "conditions": ["A", "B"], "dimensions": ["D1", "D2"], "stripped": True,
         "blind": True}
    )
    doc["blind"] = {"leak_patterns": ["Condition [AB]", "(?i)aoven"]}
    doc["amendments"] = [
        {"id": "v012-d7d8", "title": "Conditional rubric", "rationale": "D7/D8 ruling",
         "dimensions": ["D7", "D8"], "conditions": ["B"], "passes": ["unblinded"]}
    ]
    doc["rounds"].append({"id": "retest1", "questions": ["Q11", "Q12"], "refinements": ["R1"]})
    return doc


DEFAULT = _load_default()


def _dump(data: Any) -> str:
    from io import StringIO

    yaml = YAML(typ="safe")
    yaml.default_flow_style = False
    out = StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every node of the document, by its key path (the root excluded)."""
    out: list[tuple[Any, ...]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


ALL_PATHS = _paths(DEFAULT)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["main", "holdout", "A", "B", "D1", "Q1", "cto", "", "1/0", "5/8", "-1", "nan"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=8), st.sampled_from(["id", "name", "role"])), inner, max_size=4
        ),
    ),
    max_leaves=8,
)


def _mutate(seed: int, replacement: Any, delete: bool) -> Any:
    import copy

    doc = copy.deepcopy(DEFAULT)
    path = random.Random(seed).choice(ALL_PATHS)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return doc


def _check(root: Path, result: Any) -> None:
    assert result.code in (0, 1, 2), (result.code, result.output)
    assert "Traceback" not in result.output, result.output
    if result.code == 2:
        assert PLAN_NAME in result.output, result.output


def _run_both(root: Path, text: bytes | str) -> None:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    (root / PLAN_NAME).write_bytes(data)
    _check(root, run_cli("check-plan", "--repo", str(root), "--format", "json"))
    _check(root, run_cli("validate", "--repo", str(root)))


def _study(tmp_path_factory: Any) -> Path:
    """One sectioned score file (the parser path that leans most on plan ids), no responses:
    enough for a mutated plan to reach every stage of `validate`, cheap enough to fuzz."""
    root = Path(tmp_path_factory.mktemp("fuzzplan"))
    _seed_study(root)
    return root


def _seed_study(root: Path) -> None:
    (root / "tests" / "phase2").mkdir(parents=True)
    shutil.copy(EXAMPLE / "scores_redteam.md", root / "tests" / "phase2" / "scores_redteam.md")


def test_the_fuzzed_base_plan_is_a_valid_plan(tmp_path: Path) -> None:
    """Mutations start from a plan that loads: every failure they find is the mutation's."""
    (tmp_path / PLAN_NAME).write_text(_dump(DEFAULT))
    result = run_cli("check-plan", "--repo", str(tmp_path), "--format", "json")
    assert result.code == 1, result.output  # loads; only the two-question re-test round is unreachable
    assert [u["rule"] for u in json.loads(result.out)["unreachable_rules"]] == ["rules.pass.questions"]


@FUZZ
@given(seed=st.integers(min_value=0), replacement=values, delete=st.booleans())
def test_default_plan_with_one_node_replaced_never_crashes(
    tmp_path_factory: Any, seed: int, replacement: Any, delete: bool
) -> None:
    root = _study(tmp_path_factory)
    _run_both(root, _dump(_mutate(seed, replacement, delete)))


@FUZZ
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.text(max_size=300),
        st.builds(
            lambda n, c: c * n, st.integers(1, 200_000), st.sampled_from(["a", "[", "{", "- ", "#", ":"])
        ),
    )
)
def test_garbage_plan_never_crashes(tmp_path_factory: Any, data: bytes | str) -> None:
    root = _study(tmp_path_factory)
    _run_both(root, data)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(depth=st.integers(1, 3000), opener=st.sampled_from(["[", "{a: ", "- ", "[{x: "]))
def test_deep_nesting_never_crashes(tmp_path_factory: Any, depth: int, opener: str) -> None:
    root = _study(tmp_path_factory)
    text = DEFAULT_PLAN.read_text("utf-8") + "\nextra: " + opener * depth + "\n"
    _run_both(root, text)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(width=st.integers(2, 12), depth=st.integers(2, 12))
def test_alias_bombs_are_bounded(tmp_path_factory: Any, width: int, depth: int) -> None:
    root = _study(tmp_path_factory)
    lines = ["a0: &a0 [x, y]"]
    for i in range(1, depth + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    _run_both(root, "\n".join(lines) + "\n")


def test_alias_bomb_inside_the_default_plan_names_the_plan(tmp_path: Path) -> None:
    root = tmp_path
    _seed_study(root)
    bomb = "\n".join(
        ["x0: &x0 [a, b, c, d, e, f, g, h, i, j]"]
        + [f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * 10) + "]" for i in range(1, 8)]
    )
    (root / PLAN_NAME).write_text(DEFAULT_PLAN.read_text("utf-8") + "\n" + bomb + "\n")
    result = run_cli("check-plan", "--repo", str(root))
    assert result.code == 2 and "Traceback" not in result.output
    assert f"{PLAN_NAME}:" in result.output and "aliases" in result.output


def test_wrong_type_at_every_top_level_key(tmp_path: Path) -> None:
    """Deterministic sweep: each key of the default plan set to a value of each wrong type."""
    _seed_study(tmp_path)
    import copy

    for key in DEFAULT:
        for wrong in (None, "text", [1, {"k": "v"}]):
            doc = copy.deepcopy(DEFAULT)
            doc[key] = wrong
            (tmp_path / PLAN_NAME).write_text(_dump(doc))
            for command in ("check-plan", "validate"):
                result = run_cli(command, "--repo", str(tmp_path))
                assert result.code in (0, 1, 2), (key, wrong, command, result.output)
                assert "Traceback" not in result.output
                if result.code == 2:
                    assert PLAN_NAME in result.output, (key, wrong, result.output)

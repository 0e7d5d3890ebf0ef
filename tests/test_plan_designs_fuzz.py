"""Bad design plans never crash: hand-written criteria, decisions, labels and pass orders, mutated
token by token, either load (and check-plan audits them) or give a plan error naming a line."""

from __future__ import annotations

import random
import re

import pytest

from aoven_git.commands.init import DESIGNS
from aoven_git.coverage import audit
from aoven_git.errors import PlanError
from aoven_git.plan import PlanProblems, parse_plan
from tests.test_plan_designs import ARMS, PROBES

BASES = [ARMS, PROBES, *(DESIGNS[d].read_text(encoding="utf-8") for d in ("arms", "probes"))]
WORD = re.compile(r"([A-Za-z0-9_.\-]+)")
#: every word of the plans, and values that probe the checks' edges
TOKENS = [*sorted({w for text in BASES for w in WORD.findall(text)}),
          "[]", "{}", "-1", "0", '"1/3"', "all", "2", ".inf", "null", "[B, B]", "[layer2]", "[PASS, PASS]"]


def mutate(rnd: random.Random) -> str:
    words = WORD.split(rnd.choice(BASES))
    for _ in range(rnd.randint(1, 4)):
        words[rnd.randrange(1, len(words), 2)] = rnd.choice(TOKENS)
    lines = "".join(words).splitlines(keepends=True)
    if rnd.random() < 0.3:
        del lines[rnd.randrange(len(lines))]
    return "".join(lines)


@pytest.mark.parametrize("seed", range(4))
def test_mutated_design_plans_load_or_name_their_line(seed: int) -> None:
    rnd = random.Random(seed)
    loaded = refused = 0
    for _ in range(60):
        text = mutate(rnd)
        try:
            audit(parse_plan(text.encode()))
            loaded += 1
        except PlanProblems as exc:
            assert all(line is None or 1 <= line <= text.count("\n") + 1 for line, _ in exc.problems), exc
            refused += 1
        except PlanError:
            refused += 1
    assert loaded and refused  # both kinds occur: the mutations reach the checks

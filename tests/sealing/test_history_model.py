"""The history model on its own: log parsing and ordering by parents only."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from aoven_git.history import _Raw, _topo, parse_log


def test_parse_log_handles_commits_without_diff_and_odd_paths() -> None:
    a, b, c = "a" * 40, "b" * 40, "c" * 40
    z = "0" * 40
    data = (f"{a} {b} {c}\nlead@x\0"
            f"{b} {c}\nr@x\n:000000 100644 {z} {'1' * 40} A\0study/new\nline.md\0"
            f":100644 000000 {'2' * 40} {z} D\0:odd:name.md\0\0"
            f"{c}\nr@x\n:000000 100644 {z} {'3' * 40} A\0aoven.yaml\0").encode()
    raws = parse_log(data)
    assert [(r.sha, r.parents, r.email) for r in raws] == [
        (a, (b, c), "lead@x"), (b, (c,), "r@x"), (c, (), "r@x")]
    assert raws[0].changes == []
    assert raws[1].changes == [("A", "study/new\nline.md", f"100644 {'1' * 40}"),
                               ("D", ":odd:name.md", f"000000 {z}")]
    assert raws[2].changes == [("A", "aoven.yaml", f"100644 {'3' * 40}")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(min_value=0, max_value=1000), max_size=3), min_size=1, max_size=40),
       st.randoms())
def test_topo_puts_every_parent_first_whatever_the_input_order(parent_picks: list[list[int]],
                                                               rnd: random.Random) -> None:
    # a random DAG: node i's parents are earlier nodes
    shas = [f"{i:040x}" for i in range(len(parent_picks))]
    raws = [_Raw(shas[i], tuple(dict.fromkeys(shas[p % i] for p in picks)) if i else (), "", [])
            for i, picks in enumerate(parent_picks)]
    rnd.shuffle(raws)
    order = _topo(raws)
    pos = {r.sha: k for k, r in enumerate(order)}
    assert sorted(pos) == sorted(shas)
    for r in order:
        assert all(pos[p] < pos[r.sha] for p in r.parents)

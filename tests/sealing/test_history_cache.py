"""The history cache against git's own walk, on random histories (docs/sealing.md, "The history
cache"): for every tip of a growing random history — commits inside and outside the study,
branches from old commits, merges (some resolved to one side, so git may drop them), octopus
merges — the model read with the cache of the tip before is the model a cold walk reads: the
same nodes in the same order, the same parents and the same state at every node."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from aoven_git import gitio, history, ledger, verify_cache
from aoven_git.plan import parse_plan
from tests.conftest import GitRepo
from tests.sealing.conftest import PLAN

PATHS = ["study/notes/a.md", "study/notes/b.md", "src/x.txt", "src/y.txt", "deep/dir/scores_copy.md"]


def model(repo: GitRepo, tip: str, cache: Path | None) -> list[tuple[str, tuple[str, ...], dict]]:
    plan = parse_plan(PLAN.encode())
    hist = history.read_history(str(repo.path), tip, pathspecs=ledger.pathspecs(plan, "aoven.yaml"),
                                track=lambda p: ledger.tracked(plan, "aoven.yaml", p),
                                want_blob=lambda p: 0, cache=cache)
    return [(n.sha, tuple(hist.nodes[p].sha for p in n.parents), dict(n.state)) for n in hist.nodes]


def grow(repo: GitRepo, rng: random.Random, tips: list[str]) -> str:
    """One random step: a commit on main or on a branch from an old tip, then maybe a merge."""
    step = len(tips)
    kind = rng.random()
    if kind < 0.5:
        repo.write(rng.choice(PATHS), f"step {step}\n")
        return repo.commit(f"step {step}")
    repo.git("checkout", "-q", "-b", f"b{step}", rng.choice(tips))
    for k in range(rng.randint(1, 3)):
        repo.write(rng.choice(PATHS), f"branch {step}.{k}\n")
        repo.commit(f"branch {step}.{k}")
    repo.git("checkout", "-q", "main")
    if kind < 0.65:  # a merge resolved to main's side: git may list nothing for it
        repo.git("merge", "-q", "--no-ff", "-s", "ours", "--no-edit", f"b{step}")
    elif kind < 0.8 and step > 3:
        repo.git("checkout", "-q", "-b", f"c{step}", rng.choice(tips))
        repo.write(rng.choice(PATHS), f"octopus {step}\n")
        repo.commit(f"octopus side {step}")
        repo.git("checkout", "-q", "main")
        proc = repo.git("merge", "-q", "--no-ff", "--no-edit", f"b{step}", f"c{step}", check=False)
        if repo.git("status", "--porcelain"):
            repo.git("merge", "--abort", check=False)
            repo.git("reset", "-q", "--hard", "main")
        del proc
    else:
        repo.git("merge", "-q", "--no-ff", "--no-edit", "-X", "theirs", f"b{step}")
    return repo.head_commit()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cached_walk_is_the_cold_walk(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways are taken: the walk of the new commits alone, and (a branch from an old commit
    merged) the full walk again."""
    walks: list[bool] = []
    real = gitio.log_raw

    def spy(root: object, commit: str, specs: list[str], exclude: tuple[str, ...] = ()) -> bytes:
        walks.append(bool(exclude))
        return real(root, commit, specs, exclude)  # type: ignore[arg-type]

    monkeypatch.setattr(gitio, "log_raw", spy)
    rng = random.Random(seed)
    repo = GitRepo(tmp_path / "repo")
    repo.git("checkout", "-q", "-b", "main")
    repo.write("aoven.yaml", PLAN)
    tips = [repo.commit("plan")]
    git_dir = repo.path / ".git"
    for _ in range(25):
        tips.append(grow(repo, rng, tips))
        cold = model(repo, tips[-1], None)
        assert model(repo, tips[-1], git_dir) == cold, f"seed {seed}, step {len(tips)}"
        assert verify_cache.load(git_dir, verify_cache.key(git_dir, ledger.pathspecs(
            parse_plan(PLAN.encode()), "aoven.yaml"))).commit == tips[-1]  # type: ignore[union-attr]
    incremental = walks[1::2]  # every other walk is the cold one
    assert any(incremental) and walks.count(True) < len(incremental), walks

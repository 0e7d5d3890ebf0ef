"""The history cache (docs/sealing.md, "The history cache"): verify-seal keeps git's walk of the
last verified commit under `$GIT_DIR/aoven-git/` and walks only what is new. Each attack here
tries to make it hide a violation — a poisoned or stale cache file, a force-push rewriting an
ancestor, a replace ref added after the cache was written, a cache from another repository — and
the violation is still found; an honest re-verify equals a cold verify byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aoven_git import gitio, history, ledger, verify_cache
from aoven_git.plan import parse_plan
from tests.adversarial.conftest import Lab, expect

CACHE = Path(".git") / verify_cache.FILE


def cached_commit(lab: Lab) -> str:
    return json.loads(json.loads((lab.path / CACHE).read_text())["payload"])["commit"]


def cold_output(lab: Lab) -> str:
    """verify-seal's JSON with no cache file (then the walk is git's full walk)."""
    (lab.path / CACHE).unlink(missing_ok=True)
    res, _ = lab.verify()
    return res.out


def violated_history(lab: Lab) -> str:
    """cto and logician seal and reveal; then redteam seals with both reveals in its history:
    `visible-at-seal` (redteam is optional: exit 0). Returns redteam's seal commit."""
    lab.start()
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)
    return lab.seal("redteam")


def honest_shapes(lab: Lab) -> list[str]:
    """An honest study grown in steps, each step's tip returned: seals on a side branch merged
    back, a note on main, reveals, a branch forked from the tip and merged, a branch forked from
    an old commit and merged (its commits do not descend from the cached tip)."""
    tips = [lab.start()]
    lab.branch("seal-cto")
    lab.seal("cto")
    lab.checkout("main")
    lab.seal("logician")
    tips.append(lab.land("seal-cto"))
    tips.append(lab.file("lead", "notes/outside.md", "a note outside the study\n"))
    old = tips[-1]
    lab.reveal("cto")
    tips.append(lab.reveal("logician"))
    lab.branch("notes", tips[-1])
    lab.file("lead", "study/notes/n1.md", "note 1\n")
    tips.append(lab.land("notes"))
    lab.branch("late", old)
    lab.file("lead", "docs/late.md", "a late branch from an old commit\n")
    tips.append(lab.land("late"))
    tips.append(lab.recon())
    return tips


def test_honest_reverify_equals_a_cold_verify_byte_for_byte(lab: Lab) -> None:
    """After every step, verify-seal with the cache of the step before prints exactly what it
    prints with no cache, and leaves the cache at the verified commit."""
    steps = honest_shapes(lab)
    (lab.path / CACHE).unlink(missing_ok=True)
    for tip in [*steps, *reversed(steps)]:  # then back: a cache of a descendant is no help
        lab.git("reset", "-q", "--hard", tip)
        warm, data = lab.verify()
        assert warm.code == 0, warm.output
        assert cached_commit(lab) == tip
        assert data["commit"] == tip
        cold = cold_output(lab)
        assert warm.out == cold, tip
        lab.verify()  # the cache of this tip, for the next step


def test_reverify_walks_only_the_new_commits(lab: Lab) -> None:
    """The second read walks `HEAD ^C` (C the cached commit), not the whole history."""
    lab.start()
    lab.seal("cto")
    first = lab.seal("logician")
    lab.verify()
    lab.reveal("cto")
    walks: list[tuple[str, ...]] = []
    real = gitio.log_raw

    def spy(root: object, commit: str, specs: list[str], exclude: tuple[str, ...] = ()) -> bytes:
        walks.append(tuple(exclude))
        return real(root, commit, specs, exclude)  # type: ignore[arg-type]

    plan = parse_plan((lab.path / "aoven.yaml").read_bytes())
    mp = pytest.MonkeyPatch()
    mp.setattr(gitio, "log_raw", spy)
    try:
        hist = history.read_history(str(lab.path), lab.head(), pathspecs=ledger.pathspecs(plan, "aoven.yaml"),
                                    track=lambda p: ledger.tracked(plan, "aoven.yaml", p),
                                    want_blob=ledger.want_blob(plan, "aoven.yaml", 1 << 20),  # type: ignore[arg-type]
                                    cache=lab.path / ".git")
    finally:
        mp.undo()
    assert walks == [(first,)]
    assert [n.sha for n in hist.nodes][-2:] == [first, lab.head()]


def test_poisoned_cache_file_hides_nothing(lab: Lab) -> None:
    """A cache file rewritten to say the history holds no commit (an attacker cannot compute its
    HMAC) is ignored: the violation is found."""
    seal = violated_history(lab)
    expect(lab, [("visible-at-seal", "redteam")])
    doc = json.loads((lab.path / CACHE).read_text())
    body = json.loads(doc["payload"])
    body["raws"] = [r for r in body["raws"] if r[0] != seal]
    doc["payload"] = json.dumps(body)
    (lab.path / CACHE).write_text(json.dumps(doc))
    data = expect(lab, [("visible-at-seal", "redteam")])
    assert data["violations"][0]["commit"] == seal


def test_stale_cache_of_an_unrelated_commit_is_not_used(lab: Lab) -> None:
    """A cache written on a branch that is then abandoned: its commit is no ancestor of the
    verified one, so nothing is taken from it."""
    lab.start()
    lab.branch("abandoned")
    lab.file("lead", "docs/x.md", "x\n")
    lab.verify()
    stale = cached_commit(lab)
    lab.checkout("main")
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)
    lab.seal("redteam")
    assert not lab.is_ancestor(stale, lab.head())
    expect(lab, [("visible-at-seal", "redteam")])


def test_force_push_rewriting_an_ancestor_is_walked_again(lab: Lab) -> None:
    """An honest history is verified (and cached); the branch is then rewritten from before the
    seals so that redteam seals after the reveals: the cached commit is no ancestor any more."""
    base = lab.start()
    lab.file("lead", "docs/x.md", "x\n")
    expect(lab, [])
    honest = cached_commit(lab)
    lab.git("reset", "-q", "--hard", base)
    for r in ("cto", "logician"):
        lab.seal(r)
    for r in ("cto", "logician"):
        lab.reveal(r)
    seal = lab.seal("redteam")
    assert not lab.is_ancestor(honest, lab.head())
    data = expect(lab, [("visible-at-seal", "redteam")])
    assert data["violations"][0]["commit"] == seal


def test_replace_ref_added_after_the_cache_was_written(lab: Lab) -> None:
    """`git replace` swaps the violating seal commit for an innocent one after the cache was
    written, and a new commit follows: git runs with replacement objects off, and the cache holds
    nothing a replace ref could change."""
    seal = violated_history(lab)
    expect(lab, [("visible-at-seal", "redteam")])
    lab.git("replace", seal, lab.head("HEAD~1"))
    lab.file("lead", "docs/after.md", "after\n")
    data = expect(lab, [("visible-at-seal", "redteam")])
    assert data["violations"][0]["commit"] == seal
    assert cached_commit(lab) == lab.head()


def test_cache_from_another_repository_is_not_used(lab: Lab, tmp_path: Path) -> None:
    """A clean repository's cache (valid HMAC: same user) copied into the git dir of a violated
    one, for the violated one's own HEAD: its key names another repository, so it is a miss."""
    seal = violated_history(lab)
    other = Lab(tmp_path / "other")
    other.start()
    other.verify()
    doc = json.loads((other.path / CACHE).read_text())
    body = json.loads(doc["payload"])
    body["commit"], body["raws"] = lab.head(), []
    doc["payload"] = json.dumps(body, separators=(",", ":"))
    secret = verify_cache._secret(create=False)
    assert secret is not None
    doc["mac"] = verify_cache._mac(secret, doc["key"], doc["payload"])
    (lab.path / CACHE).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(other.path / CACHE, lab.path / CACHE)
    (lab.path / CACHE).write_text(json.dumps(doc))
    data = expect(lab, [("visible-at-seal", "redteam")])
    assert data["violations"][0]["commit"] == seal


@pytest.mark.parametrize("raws", [[["x"]], "not a list", [[1, [], "a", []]],
                                  [["a", ["b"], "c", [["M", "p"]]]]])
def test_signed_cache_of_another_shape_is_ignored(lab: Lab, raws: object) -> None:
    """An entry with a good HMAC but not the shape aoven-git writes (say, from a future or broken
    version under the same key) is a miss, never a crash."""
    seal = violated_history(lab)
    expect(lab, [("visible-at-seal", "redteam")])
    doc = json.loads((lab.path / CACHE).read_text())
    doc["payload"] = json.dumps({"commit": lab.head(), "raws": raws, "alias": None})
    secret = verify_cache._secret(create=False)
    assert secret is not None
    doc["mac"] = verify_cache._mac(secret, doc["key"], doc["payload"])
    (lab.path / CACHE).write_text(json.dumps(doc))
    data = expect(lab, [("visible-at-seal", "redteam")])
    assert data["violations"][0]["commit"] == seal

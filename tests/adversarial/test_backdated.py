"""Class 1, backdated branches: a rater who has read others' scores branches from an old commit,
seals there and merges. Ancestry proves only what came before, never what was not yet readable,
so each such seal is `unproven-order` (reported once, at the seal, naming the other commit);
a seal whose own history holds another rater's plaintext is `visible-at-seal`."""

from __future__ import annotations

import pytest

from tests.adversarial.conftest import Lab, at, expect, names, sheet_text
from tests.adversarial.paper import paper_lab

#: the stories of this module test the sealing rules, not git: they run on paper
#: (tests/adversarial/paper.py); those marked `git` build a real repository
lab = paper_lab

ORDERS = ["main", "branch"]  # which side of the landing merge is its first parent


def sealed_and_revealed(lab: Lab) -> dict[str, str]:
    """cto and logician (the required raters) digest-seal and reveal on main."""
    out = {"base": lab.start()}
    out |= {f"seal-{r}": lab.seal(r) for r in ("cto", "logician")}
    out |= {f"reveal-{r}": lab.reveal(r) for r in ("cto", "logician")}
    return out


@pytest.mark.parametrize("first_parent", ORDERS)
def test_backdated_branch_digest_seal_after_reveal(lab: Lab, first_parent: str) -> None:
    """The optional rater joins after both reveals, sealing on a branch from before them."""
    c = sealed_and_revealed(lab)
    lab.branch("late", c["seal-logician"])
    late = lab.seal("redteam")
    lab.land("late", first_parent=first_parent)
    lab.reveal("redteam")
    assert lab.unordered(late, c["reveal-cto"]) and lab.unordered(late, c["reveal-logician"])
    data = expect(lab, [("unproven-order", "redteam")])
    v = at(data, "unproven-order", "redteam")
    assert v["commit"] == late
    assert names(v, c["reveal-cto"]) or names(v, c["reveal-logician"])


@pytest.mark.parametrize("first_parent", ORDERS)
def test_backdated_branch_content_seal_after_reveal(lab: Lab, first_parent: str) -> None:
    c = sealed_and_revealed(lab)
    lab.branch("late", c["seal-logician"])
    late = lab.content("redteam")
    lab.land("late", first_parent=first_parent)
    data = expect(lab, [("unproven-order", "redteam")])
    assert at(data, "unproven-order", "redteam")["commit"] == late


def test_optional_rater_seals_on_main_after_reveals(lab: Lab) -> None:
    sealed_and_revealed(lab)
    bad = lab.seal("redteam")
    data = expect(lab, [("visible-at-seal", "redteam")])
    assert at(data, "visible-at-seal", "redteam")["commit"] == bad


@pytest.mark.git
@pytest.mark.parametrize("first_parent", ORDERS)
def test_hand_reveal_with_no_verify_then_seal_on_branch_from_before_it(lab: Lab, first_parent: str) -> None:
    """The hook refuses cto's early plaintext; cto bypasses it with --no-verify; logician, having
    read it, seals on a branch from before the reveal and merges."""
    lab.start()
    lab.install_hook()
    seal_cto = lab.seal("cto")
    lab.write(lab.score_path("cto"), lab.texts[("cto", "unblinded")])
    assert lab.git_commit("cto", "reveal early", lab.score_path("cto")).returncode != 0
    early = lab.put("cto", "reveal early", lab.score_path("cto"), no_verify=True)
    lab.branch("backdated", seal_cto)
    backdated = lab.seal("logician")
    lab.land("backdated", first_parent=first_parent)
    lab.reveal("logician")
    assert lab.unordered(backdated, early)
    data = expect(lab, [("unproven-order", "logician")])
    v = at(data, "unproven-order", "logician")
    assert v["commit"] == backdated and names(v, early)


@pytest.mark.git
def test_forced_reveal_then_seal_on_branch_from_before_it(lab: Lab) -> None:
    """The same attack entirely through the CLI: `reveal --force`, then `seal` on an old commit."""
    lab.start()
    lab.write(lab.score_path("cto"), sheet_text("cto"))
    assert lab.cli("cto", "seal", "--rater", "cto").code == 0
    seal_cto = lab.head()
    res = lab.cli("cto", "reveal", "--rater", "cto", "--force")
    assert res.code == 0, res.output
    forced = lab.head()
    lab.git("checkout", "-q", "-b", "backdated", seal_cto)
    lab.write(lab.score_path("logician"), sheet_text("logician"))
    res = lab.cli("logician", "seal", "--rater", "logician")
    assert res.code == 0, res.output  # HEAD of this branch holds no plaintext: nothing to refuse
    backdated = lab.head()
    lab.land("backdated")
    assert lab.cli("logician", "reveal", "--rater", "logician").code == 0
    data = expect(lab, [("unproven-order", "logician")])
    v = at(data, "unproven-order", "logician")
    assert v["commit"] == backdated and names(v, forced)
    assert [f["commit"] for f in data["forced_reveals"]] == [forced]


def test_reveal_on_unmerged_branch_then_seal_on_main(lab: Lab) -> None:
    """The plaintext sits on a pushed side branch; logician seals on main without merging it."""
    lab.start()
    seal_cto = lab.seal("cto")
    lab.branch("peek", seal_cto)
    peek = lab.reveal("cto")
    lab.checkout("main")
    seal_log = lab.seal("logician")
    lab.land("peek")
    lab.reveal("logician")
    assert lab.unordered(seal_log, peek)
    data = expect(lab, [("unproven-order", "logician")])
    v = at(data, "unproven-order", "logician")
    assert v["commit"] == seal_log and names(v, peek)


def test_reconciliation_on_side_branch_before_rater_sealed(lab: Lab) -> None:
    """A reconciliation is everyone's plaintext: a seal not ordered before it proves nothing."""
    lab.start()
    seal_cto = lab.seal("cto")
    lab.branch("recon", seal_cto)
    recon = lab.recon()
    lab.checkout("main")
    seal_log = lab.seal("logician")
    lab.land("recon")
    data = expect(lab, [("unproven-order", "logician")])
    v = at(data, "unproven-order", "logician")
    assert v["commit"] == seal_log and names(v, recon)


def test_reconciliation_committed_before_rater_sealed(lab: Lab) -> None:
    lab.start()
    lab.seal("cto")
    lab.recon()
    bad = lab.seal("logician")
    data = expect(lab, [("visible-at-seal", "logician")])
    assert at(data, "visible-at-seal", "logician")["commit"] == bad


@pytest.mark.parametrize("first_parent", ORDERS)
def test_parallel_content_seals_cannot_prove_order(lab: Lab, first_parent: str) -> None:
    """Two plaintext commits on separate branches: neither rater can prove they sealed first
    (content seals serve a single rater)."""
    base = lab.start()
    lab.branch("cto", base)
    cto = lab.content("cto")
    lab.branch("logician", base)
    logician = lab.content("logician")
    lab.land("cto")
    lab.land("logician", first_parent=first_parent)
    data = expect(lab, [("unproven-order", "cto"), ("unproven-order", "logician")])
    assert at(data, "unproven-order", "cto")["commit"] == cto
    assert at(data, "unproven-order", "logician")["commit"] == logician


def test_content_seal_parallel_to_digest_seal(lab: Lab) -> None:
    """cto's plaintext on one branch, logician's digest on another: only logician is unproven
    (cto's content seal is an ancestor of logician's later reveal)."""
    base = lab.start()
    lab.branch("cto", base)
    lab.content("cto")
    lab.branch("logician", base)
    seal_log = lab.seal("logician")
    lab.land("cto")
    lab.land("logician")
    lab.reveal("logician")
    data = expect(lab, [("unproven-order", "logician")])
    assert at(data, "unproven-order", "logician")["commit"] == seal_log


def test_backdated_seals_landed_by_an_octopus_merge(lab: Lab) -> None:
    """cto's early reveal and two seals made beside it land together in one octopus merge."""
    lab.start()
    seal_cto = lab.seal("cto")
    lab.branch("leak", seal_cto)
    leak = lab.reveal("cto", message="reveal cto\n\nAoven-Force: reveal (unsealed: logician)")
    lab.branch("seal-logician", seal_cto)
    seal_log = lab.seal("logician")
    lab.branch("seal-redteam", seal_cto)
    seal_red = lab.seal("redteam")
    lab.octopus("leak", "seal-logician", "seal-redteam")
    data = expect(lab, [("unproven-order", "logician"), ("unproven-order", "redteam")])
    assert at(data, "unproven-order", "logician")["commit"] == seal_log
    assert at(data, "unproven-order", "redteam")["commit"] == seal_red
    assert names(at(data, "unproven-order", "logician"), leak)


@pytest.mark.git
def test_backdated_seal_with_a_forged_old_date(lab: Lab) -> None:
    """A seal dated years before the reveals is still unordered with them: `--rev` at the seal
    sees no reveal yet (clean), the merge that lands it is not. Dates are never read."""
    c = sealed_and_revealed(lab)
    lab.branch("late", c["seal-logician"])
    late = lab.seal("redteam", env={"GIT_AUTHOR_DATE": "2001-01-01T00:00:00+0000",
                                    "GIT_COMMITTER_DATE": "2001-01-01T00:00:00+0000"})
    expect(lab, [], args=("--rev", late))
    lab.land("late")
    data = expect(lab, [("unproven-order", "redteam")])
    assert at(data, "unproven-order", "redteam")["commit"] == late



def test_reveal_added_and_removed_on_a_side_branch_is_still_unordered(lab: Lab) -> None:
    """A side branch whose net effect on the study is nil (reveal, then delete) still showed
    cto's scores; history simplification must not drop it."""
    lab.start()
    seal_cto = lab.seal("cto")
    lab.branch("peek", seal_cto)
    peek = lab.reveal("cto")
    lab.git("rm", "-q", lab.score_path("cto"))
    gone = lab.put("cto", "take it back")
    lab.checkout("main")
    seal_log = lab.seal("logician")
    lab.land("peek")
    data = expect(lab, [("deleted-after-seal", "cto"), ("unproven-order", "logician")])
    assert at(data, "deleted-after-seal", "cto")["commit"] == gone
    v = at(data, "unproven-order", "logician")
    assert v["commit"] == seal_log and names(v, peek)


@pytest.mark.git
def test_backdated_seal_rebased_onto_the_reveals(lab: Lab) -> None:
    """Landing the backdated seal by rebase puts the reveals into its ancestry: visible."""
    c = sealed_and_revealed(lab)
    lab.branch("late", c["seal-logician"])
    lab.seal("redteam")
    lab.git("rebase", "-q", "main", "late")
    rebased = lab.head()
    lab.checkout("main")
    lab.git("merge", "-q", "--ff-only", "late")
    assert lab.is_ancestor(c["reveal-cto"], rebased)
    data = expect(lab, [("visible-at-seal", "redteam")])
    assert at(data, "visible-at-seal", "redteam")["commit"] == rebased

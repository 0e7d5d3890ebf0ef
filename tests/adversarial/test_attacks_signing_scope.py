"""Review 4: `unsigned-commit` and the amendment scope.

With `security.require_signed`, every seal and reveal commit must carry a good signature by its
rater. `sealing._signing_scopes` gives each (commit, rater) the amendment its sheets belong to when
they all are one amendment's re-scores, else none: an unsigned re-score seal then blocks only that
amendment, an unsigned study seal the study, and a commit that seals a study sheet and a re-score
together blocks the study (docs/amendments.md, "Decisions"). Real ssh keys, real signatures, the
real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.adversarial.conftest import NO_SECURITY, SIGNED_SECURITY, Lab, keys, needs_ssh, signed_lab
from tests.adversarial.test_amendment_folder import PASS_PLAN, rescores, scores

__all__ = ["keys"]

pytestmark = needs_ssh

AMENDMENTS_2 = ("  - {id: d1-ruling, title: Second ruling, rationale: why not, dimensions: [D1], "
                "conditions: [B], passes: [unblinded]}\n")
SIGNED_AMENDED_PLAN = PASS_PLAN.replace(NO_SECURITY, SIGNED_SECURITY)
SIGNED_TWO_AMENDMENTS = SIGNED_AMENDED_PLAN + AMENDMENTS_2
assert SIGNED_AMENDED_PLAN != PASS_PLAN
BOTH = ("cto", "logician")


def rescores_of(rater: str, amendment: str) -> str:
    if amendment == "d2-ruling":
        return rescores(rater)
    rows = "".join(f"| {q} | B | 1 |\n" for q in ("Q1", "Q2"))
    return (f"---\nrater: {rater}\npass: unblinded\nround: main\namendment: {amendment}\n---\n\n"
            f"# Re-scores of {rater}\n\n| Q | Cond | D1 |\n|---|---|---|\n{rows}")


class Signed:
    """A signed study: each rater signs with their own key unless told otherwise."""

    def __init__(self, lab: Lab, keys: dict[str, Path]) -> None:
        self.lab, self.keys = lab, keys

    def key(self, rater: str, signed: bool) -> Path | None:
        return self.keys[rater] if signed else None

    def study_seal_bytes(self, rater: str) -> tuple[str, bytes]:
        text = scores(rater, nonce=f"n-{rater}")
        self.lab.texts[(rater, "unblinded")] = text
        return self.lab.seal_path(rater), self.lab.seal_bytes(rater, text)

    def rescore_seal_bytes(self, rater: str, amendment: str) -> tuple[str, bytes]:
        folder = f"study/amendments/{amendment}"
        text = rescores_of(rater, amendment).replace("---\n\n", f"nonce: r-{rater}\n---\n\n", 1)
        self.lab.texts[(rater, amendment)] = text
        seal = format_seal(sha256(text.encode()), "scores_" + rater + ".md",
                           SheetId(rater, "unblinded", "main", amendment))
        return f"{folder}/seals/scores_{rater}.sha256", seal

    def commit(self, rater: str, files: list[tuple[str, bytes | str]], *, signed: bool = True,
               message: str = "") -> str:
        for path, data in files:
            self.lab.write(path, data)
        return self.lab.put(rater, message or f"{rater}: {len(files)} file(s)",
                            *[p for p, _ in files], no_verify=True, sign_key=self.key(rater, signed))

    def study(self, *, unsigned_seal: str | None = None) -> None:
        for r in BOTH:
            self.commit(r, [self.study_seal_bytes(r)], signed=r != unsigned_seal)
        for r in BOTH:
            self.commit(r, [(self.lab.score_path(r), self.lab.texts[(r, "unblinded")])])

    def amendment(self, amendment: str = "d2-ruling", *, unsigned_seal: str | None = None,
                  unsigned_reveal: str | None = None) -> None:
        for r in BOTH:
            self.commit(r, [self.rescore_seal_bytes(r, amendment)], signed=r != unsigned_seal)
        for r in BOTH:
            self.commit(r, [(f"study/amendments/{amendment}/scores_{r}.md", self.lab.texts[(r, amendment)])],
                        signed=r != unsigned_reveal)


def report(lab: Lab) -> dict:
    res = lab.cli("lead", "report", "--format", "json", "--bootstrap", "0")
    assert "Traceback" not in res.output and res.code != 4, res.output
    return json.loads(res.out)


def scopes(doc: dict) -> list[tuple[str, str | None, str | None]]:
    return sorted((v["code"], v["rater"], v["amendment"]) for v in doc["seals"]["violations"])


def amendment_verdicts(doc: dict) -> dict[str, str]:
    return {a["id"]: a["verdict"] for a in doc["amendments"]}


@pytest.fixture
def signed(lab: Lab, keys: dict[str, Path]) -> Signed:
    signed_lab(lab, keys, SIGNED_AMENDED_PLAN)
    return Signed(lab, keys)


@pytest.fixture
def signed2(lab: Lab, keys: dict[str, Path]) -> Signed:
    signed_lab(lab, keys, SIGNED_TWO_AMENDMENTS)
    return Signed(lab, keys)


# --------------------------------------------------------------------------- the honest baseline


def test_an_all_signed_study_and_amendment_is_clean(signed: Signed) -> None:
    """The control: every seal and reveal signed by its rater; PASS and an amendment verdict."""
    signed.study()
    signed.amendment()
    res, data = signed.lab.verify()
    assert data["violations"] == [] and res.code == 0, data["violations"]
    doc = report(signed.lab)
    assert doc["verdict"] == "PASS", doc["not_ready"]
    assert amendment_verdicts(doc)["d2-ruling"] != "NOT-READY", doc["amendments"][0]["reasons"]


# --------------------------------------------------------------------------- scoping


def test_an_unsigned_amendment_seal_blocks_only_that_amendment(signed: Signed) -> None:
    signed.study()
    signed.amendment(unsigned_seal="logician")
    doc = report(signed.lab)
    assert scopes(doc) == [("unsigned-commit", "logician", "d2-ruling")]
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    amended = doc["amendments"][0]
    assert amended["verdict"] == "NOT-READY"
    assert any("unsigned-commit" in r for r in amended["not_ready"]), amended["not_ready"]


def test_an_unsigned_amendment_reveal_blocks_only_that_amendment(signed: Signed) -> None:
    signed.study()
    signed.amendment(unsigned_reveal="cto")
    doc = report(signed.lab)
    assert scopes(doc) == [("unsigned-commit", "cto", "d2-ruling")]
    assert doc["verdict"] == "PASS"
    assert doc["amendments"][0]["verdict"] == "NOT-READY"


def test_an_unsigned_study_seal_blocks_the_study(signed: Signed) -> None:
    signed.study(unsigned_seal="cto")
    signed.amendment()
    doc = report(signed.lab)
    assert scopes(doc) == [("unsigned-commit", "cto", None)]
    assert doc["verdict"] == "NOT-READY"
    assert any("unsigned-commit" in r for r in doc["not_ready"]), doc["not_ready"]
    res, _ = signed.lab.verify()
    assert res.code == 1


def test_a_study_seal_and_a_rescore_seal_in_one_unsigned_commit_block_the_study(signed: Signed) -> None:
    """logician seals the study sheet and (already) the re-score in one unsigned commit: the commit
    is a study seal, whatever else it holds, so the amendment cannot absorb it."""
    signed.commit("cto", [signed.study_seal_bytes("cto")])
    signed.commit("logician", [signed.study_seal_bytes("logician"),
                               signed.rescore_seal_bytes("logician", "d2-ruling")], signed=False)
    for r in BOTH:
        signed.commit(r, [(signed.lab.score_path(r), signed.lab.texts[(r, "unblinded")])])
    signed.commit("cto", [signed.rescore_seal_bytes("cto", "d2-ruling")])
    for r in BOTH:
        signed.commit(r, [(f"study/amendments/d2-ruling/scores_{r}.md", signed.lab.texts[(r, "d2-ruling")])])
    doc = report(signed.lab)
    unsigned = [s for s in scopes(doc) if s[0] == "unsigned-commit"]
    assert unsigned == [("unsigned-commit", "logician", None)], scopes(doc)
    assert doc["verdict"] == "NOT-READY"


def test_a_study_reveal_and_a_rescore_seal_in_one_unsigned_commit_block_the_study(signed: Signed) -> None:
    """The same mix at the reveal: cto's study reveal and cto's re-score seal, one unsigned commit."""
    for r in BOTH:
        signed.commit(r, [signed.study_seal_bytes(r)])
    texts = signed.lab.texts
    signed.commit("logician", [(signed.lab.score_path("logician"), texts[("logician", "unblinded")])])
    signed.commit("cto", [(signed.lab.score_path("cto"), signed.lab.texts[("cto", "unblinded")]),
                          signed.rescore_seal_bytes("cto", "d2-ruling")], signed=False)
    doc = report(signed.lab)
    assert ("unsigned-commit", "cto", None) in scopes(doc), scopes(doc)
    assert doc["verdict"] == "NOT-READY"


def test_two_amendments_sealed_in_one_unsigned_commit_block_both_amendments_not_the_study(
        signed2: Signed) -> None:
    """logician seals the re-scores of two amendments in one unsigned commit. Both sheets are
    amendment re-scores; no study sheet is concerned, so the pre-registered verdict must stand and
    each amendment it touches becomes NOT-READY (docs/amendments.md: findings about an amendment's
    re-scores never block the pre-registered verdict)."""
    signed2.study()
    for a in ("d2-ruling", "d1-ruling"):
        signed2.commit("cto", [signed2.rescore_seal_bytes("cto", a)])
    signed2.commit("logician", [signed2.rescore_seal_bytes("logician", "d2-ruling"),
                                signed2.rescore_seal_bytes("logician", "d1-ruling")], signed=False)
    for a in ("d2-ruling", "d1-ruling"):
        for r in BOTH:
            signed2.commit(r, [(f"study/amendments/{a}/scores_{r}.md", signed2.lab.texts[(r, a)])])
    doc = report(signed2.lab)
    unsigned = [s for s in scopes(doc) if s[0] == "unsigned-commit"]
    assert unsigned and all(s[2] is not None for s in unsigned), scopes(doc)
    assert doc["verdict"] == "PASS", doc["not_ready"]
    assert amendment_verdicts(doc) == {"d2-ruling": "NOT-READY", "d1-ruling": "NOT-READY"}


def test_a_rescore_seal_signed_by_another_raters_key_blocks_only_the_amendment(signed: Signed) -> None:
    """cto's amendment seal carries logician's good signature: a signature, not cto's."""
    signed.study()
    path, data = signed.rescore_seal_bytes("cto", "d2-ruling")
    signed.lab.write(path, data)
    signed.lab.put("cto", "cto's re-score seal, signed with logician's key", path, no_verify=True,
                   sign_key=signed.keys["logician"])
    signed.commit("logician", [signed.rescore_seal_bytes("logician", "d2-ruling")])
    doc = report(signed.lab)
    assert scopes(doc) == [("unsigned-commit", "cto", "d2-ruling")]
    assert doc["verdict"] == "PASS"
    assert doc["amendments"][0]["verdict"] == "NOT-READY"


def test_turning_require_signed_off_later_still_scopes_the_unsigned_rescore(signed: Signed) -> None:
    """The plan as of the first seal decides: `require_signed` switched off after the study seals
    is itself `plan-changed-after-seal` (the study's), and the unsigned re-score stays the
    amendment's."""
    signed.study()
    lab = signed.lab
    lab.write("aoven.yaml", SIGNED_AMENDED_PLAN.replace(SIGNED_SECURITY, NO_SECURITY))
    lab.put("lead", "signatures off", "aoven.yaml", no_verify=True)
    signed.amendment(unsigned_seal="logician")
    doc = report(lab)
    found = scopes(doc)
    assert ("unsigned-commit", "logician", "d2-ruling") in found, found
    assert ("plan-changed-after-seal", None, None) in found, found
    assert doc["verdict"] == "NOT-READY"


def test_an_optional_raters_unsigned_rescore_seal_excludes_them_from_that_amendment_only(
        signed: Signed) -> None:
    """The red team (optional, no key in the allowed signers) seals the re-scores unsigned: it is
    left out of the amendment; neither verdict is blocked."""
    signed.study()
    path, data = signed.rescore_seal_bytes("redteam", "d2-ruling")
    signed.lab.write(path, data)
    signed.lab.put("redteam", "red team re-score seal", path, no_verify=True)
    signed.amendment()
    doc = report(signed.lab)
    assert scopes(doc) == [("unsigned-commit", "redteam", "d2-ruling")]
    assert doc["verdict"] == "PASS" and doc["not_ready"] == []
    assert doc["amendments"][0]["verdict"] != "NOT-READY", doc["amendments"][0]["reasons"]
    res, _ = signed.lab.verify()
    assert res.code == 0, res.output


def test_two_amendments_rescores_committed_by_the_lead_block_both_amendments_not_the_study(lab: Lab) -> None:
    """The same shape without signatures: the lead commits logician's re-scores of two amendments
    in one commit (`unauthorized-author`). Only amendment sheets are concerned."""
    from tests.adversarial.test_amendment_folder import PASS_PLAN, seal

    lab.start(PASS_PLAN + AMENDMENTS_2)
    seal(lab, "cto"), seal(lab, "logician")
    lab.reveal("cto"), lab.reveal("logician")
    for a in ("d2-ruling", "d1-ruling"):
        lab.file("cto", f"study/amendments/{a}/scores_cto.md", rescores_of("cto", a), no_verify=True)
        lab.write(f"study/amendments/{a}/scores_logician.md", rescores_of("logician", a))
    lab.put("lead", "logician's re-scores, typed in by the lead", no_verify=True)
    doc = report(lab)
    assert ("unauthorized-author", "logician", None) not in scopes(doc), scopes(doc)
    assert doc["verdict"] == "PASS", doc["not_ready"]

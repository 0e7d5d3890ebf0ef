"""Review: a digest seal commits to bytes, not to a rater (found by reading ledger._seal_points
and seal_rules._content_ok).

A digest seal proves the sealed bytes existed when the seal was committed. It does not prove they
are the sealing rater's own: logician can commit, as *his* seal, the digest cto just committed,
without ever seeing cto's file, and reveal cto's file byte for byte once cto has revealed it. The
order is perfect (logician's seal precedes cto's reveal), the digest matches, and the two raters
agree on every cell. `aoven-git seal` writes only a `nonce:` into the front matter, so a
hand-written score file without `rater:` carries nothing that would make the copy invalid.

Nonces are random per seal, so two honest sheets never share a digest: a digest (or content)
already fixed by another rater's seal can only be a copy. The name of the code asserted here,
`copied-seal`, is a proposal; nothing in the rules reports this history today.
"""

from __future__ import annotations

import json

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.adversarial.conftest import Lab, at, expect

#: a sheet that varies (so that κ is defined) without `rater:` in its front matter, as `seal`
#: leaves a hand-written file: only the nonce it adds
VARIED = ("---\nnonce: 3c1f0e9a\n---\n\n# My scores\n\n| Q | Cond | D1 | D2 | Σ |\n|---|---|---|---|---|\n"
          "| Q1 | A | 0 | 1 | 1 |\n| Q1 | B | 1 | 2 | 3 |\n| Q2 | A | 2 | 3 | 5 |\n| Q2 | B | 3 | 0 | 3 |\n")


def digest_seal(lab: Lab, rater: str, digest: str) -> str:
    sheet = SheetId(rater, "unblinded", "main")
    return lab.file(rater, lab.seal_path(rater), format_seal(digest, f"scores_{rater}.md", sheet),
                    f"seal {rater}")


def test_seal_copying_another_raters_digest(lab: Lab) -> None:
    lab.start()
    digest = sha256(VARIED.encode())
    digest_seal(lab, "cto", digest)
    copied = digest_seal(lab, "logician", digest)  # logician never saw cto's file
    lab.file("cto", lab.score_path("cto"), VARIED, "reveal cto")
    lab.file("logician", lab.score_path("logician"), VARIED, "reveal logician")
    res = lab.cli("lead", "report", "--format", "json", "--bootstrap", "0")
    kappa = json.loads(res.out)["kappa"]["unblinded"]
    assert kappa["D1"]["pairs"]["cto~logician"] == 1.0  # the copy reads as perfect agreement
    data = expect(lab, [("copied-seal", "logician")])
    assert at(data, "copied-seal", "logician")["commit"] == copied

"""Attacks on pass order (`passes[].after`, docs/sealing.md "Pass order"): a rater scores layer 2
before their layer-1 seal and hides it — on a branch cut before the seal, by changing the sheet
after the seal, under an alias file name, in another round, with either kind of seal. Each attack
is `pass-order` at the rater's first commit of the layer-2 sheet; the honest shapes (layer 1
sealed, then layer 2, on a branch or not, two raters in either order, a plan without `after`)
stay clean. Real repositories, real git, the real CLI and hook."""

from __future__ import annotations

import json

import pytest

from aoven_git.model import SheetId
from aoven_git.seals import format_seal, sha256
from tests.adversarial.conftest import Lab, at, expect, names, refused
from tests.sealing.conftest import plan

LAYER1 = "{id: layer1, conditions: [A, B], dimensions: [D1], primary: true}"
LAYER2 = "{id: layer2, conditions: [A, B], dimensions: [D2], after: [layer1]}"
ROUNDS = ["{id: main, questions: main}", "{id: retest, questions: [Q1]}"]
LAYERS = plan(passes=[LAYER1, LAYER2], rounds=ROUNDS)
UNORDERED = plan(passes=[LAYER1, LAYER2.replace(", after: [layer1]", "")], rounds=ROUNDS)
RATERS = ("cto", "logician")


def layer_text(rater: str, pass_id: str, round_id: str = "main", score: int = 1) -> str:
    """A valid sheet of the layer plans: layer 1 scores D1, layer 2 scores D2, of A and B."""
    dim = "D1" if pass_id == "layer1" else "D2"
    questions = ("Q1", "Q2") if round_id == "main" else ("Q1",)
    rows = "".join(f"| {q} | {c} | {score} |\n" for q in questions for c in ("A", "B"))
    front = f"rater: {rater}\npass: {pass_id}\nround: {round_id}\nnonce: n-{rater}-{pass_id}-{round_id}\n"
    return (f"---\n{front}---\n\n# Scores of {rater}\n\n| Q | Cond | {dim} |\n|---|---|---|\n{rows}")


class Layers(Lab):
    """A two-layer study: seals, content seals and reveals of any pass and round, by hand."""

    def stem_of(self, rater: str, pass_id: str, round_id: str = "main") -> str:
        rnd = "" if round_id == "main" else f"_{round_id}"
        return f"scores_{rater}{rnd}" + ("" if pass_id == "layer1" else f"_{pass_id}")

    def sheet(self, rater: str, pass_id: str, round_id: str = "main") -> str:
        return f"study/{self.stem_of(rater, pass_id, round_id)}.md"

    def digest(self, rater: str, pass_id: str, round_id: str = "main", **kw: object) -> str:
        """Digest seal: commit only the seal file."""
        name = self.stem_of(rater, pass_id, round_id)
        data = format_seal(sha256(layer_text(rater, pass_id, round_id).encode()), f"{name}.md",
                           SheetId(rater, pass_id, round_id))
        message = f"seal {rater} {pass_id} {round_id}"
        return self.file(rater, f"study/seals/{name}.sha256", data, message, **kw)

    def plain(self, rater: str, pass_id: str, round_id: str = "main", *, path: str | None = None,
              score: int = 1, **kw: object) -> str:
        """Content seal (or a reveal of a digest seal): commit the sheet itself."""
        return self.file(rater, path or self.sheet(rater, pass_id, round_id),
                         layer_text(rater, pass_id, round_id, score), f"scores {rater} {pass_id}", **kw)

    def seal_kind(self, kind: str, rater: str, pass_id: str) -> str:
        return self.digest(rater, pass_id) if kind == "digest" else self.plain(rater, pass_id)

    def reveal_all(self, *passes: str) -> None:
        for p in passes:
            for r in RATERS:
                self.plain(r, p)


def pass_order_of(data: dict) -> list[tuple[str, str]]:
    return [(v["rater"], v["commit"]) for v in data["violations"] if v["code"] == "pass-order"]


@pytest.fixture
def layers(tmp_path: object) -> Layers:
    return Layers(tmp_path / "layers")  # type: ignore[operator]


# --------------------------------------------------------------------------- attacks


def test_layer2_on_a_branch_cut_before_the_layer1_seal_merged_after_it(layers: Layers) -> None:
    start = layers.start(LAYERS)
    layers.branch("cto-layer2", start)
    early = layers.digest("cto", "layer2")
    layers.checkout("main")
    sealed = layers.digest("cto", "layer1")
    layers.digest("logician", "layer1")
    layers.digest("logician", "layer2")
    layers.land("cto-layer2")
    layers.reveal_all("layer1", "layer2")
    assert layers.unordered(early, sealed)
    data = expect(layers, [("pass-order", "cto")])
    v = at(data, "pass-order", "cto")
    assert v["commit"] == early and names(v, sealed) and "another line of history" in v["message"]
    assert v["path"] == "study/seals/scores_cto_layer2.sha256"


def test_the_report_is_not_ready_naming_the_pass_order(layers: Layers) -> None:
    start = layers.start(LAYERS)
    layers.branch("cto-layer2", start)
    layers.digest("cto", "layer2")
    layers.checkout("main")
    for r in RATERS:
        layers.digest(r, "layer1")
    layers.digest("logician", "layer2")
    layers.land("cto-layer2")
    layers.reveal_all("layer1", "layer2")
    res = layers.cli("lead", "report", "--format", "json", "--bootstrap", "0")
    assert res.code == 0 and "Traceback" not in res.output, res.output
    doc = json.loads(res.out)
    assert doc["verdict"] == "NOT-READY"
    assert [r for r in doc["not_ready"] if r.startswith("seal violation pass-order by cto: ")] != []


def test_layer2_rebased_onto_the_layer1_seal_is_clean(layers: Layers) -> None:
    """The same branch rebased onto the seal before it lands: the first commit of the sheet in the
    history that is verified descends from the seal, and that is all git can prove (documented)."""
    start = layers.start(LAYERS)
    layers.branch("cto-layer2", start)
    layers.digest("cto", "layer2")
    layers.checkout("main")
    sealed = layers.digest("cto", "layer1")
    layers.git("rebase", "-q", "main", "cto-layer2")
    rebased = layers.head()
    layers.checkout("main")
    layers.git("merge", "-q", "--ff-only", "cto-layer2")
    assert layers.is_ancestor(sealed, rebased)
    layers.digest("logician", "layer1")
    layers.digest("logician", "layer2")
    layers.reveal_all("layer1", "layer2")
    assert expect(layers, [])["status"] == "complete"


def test_layer2_committed_first_then_layer1_sealed_then_layer2_changed(layers: Layers) -> None:
    """A change of the layer-2 sheet after the layer-1 seal does not make it the first commit."""
    layers.start(LAYERS)
    first = layers.plain("cto", "layer2")
    layers.digest("cto", "layer1")
    layers.plain("cto", "layer2", score=2)
    data = expect(layers, [("modified-after-seal", "cto"), ("pass-order", "cto")])
    v = at(data, "pass-order", "cto")
    assert v["commit"] == first and "committed after it" in v["message"]


def test_layer2_under_an_alias_file_name(layers: Layers) -> None:
    layers.start(LAYERS)
    alias = layers.plain("cto", "layer2", path="study/scores_cto_main_layer2.md")
    layers.digest("cto", "layer1")
    data = expect(layers, [("pass-order", "cto")])
    v = at(data, "pass-order", "cto")
    assert v["commit"] == alias and v["path"] == "study/scores_cto_main_layer2.md"


def test_layer2_of_another_round_before_that_rounds_layer1_seal(layers: Layers) -> None:
    """The layer-1 seal of the main round does not order the re-test round's layer 2."""
    layers.start(LAYERS)
    layers.digest("cto", "layer1")
    early = layers.digest("cto", "layer2", "retest")
    layers.digest("cto", "layer1", "retest")
    data = expect(layers, [("pass-order", "cto")])
    v = at(data, "pass-order", "cto")
    assert v["commit"] == early and "layer1/retest" in v["message"]


def test_dropping_after_from_the_plan_later_clears_nothing(layers: Layers) -> None:
    """The history is judged by the plan of the first seal: its `after` stands."""
    layers.start(LAYERS)
    early = layers.digest("cto", "layer2")
    layers.digest("cto", "layer1")
    layers.file("lead", "aoven.yaml", UNORDERED, "drop the pass order")
    data = expect(layers, [("pass-order", "cto"), ("plan-changed-after-seal", None)])
    assert pass_order_of(data) == [("cto", early)]


@pytest.mark.parametrize("layer1_kind", ["digest", "content"])
@pytest.mark.parametrize("layer2_kind", ["digest", "content"])
def test_layer2_before_layer1_whatever_kind_of_seal(layers: Layers, layer1_kind: str,
                                                    layer2_kind: str) -> None:
    layers.start(LAYERS)
    early = layers.seal_kind(layer2_kind, "cto", "layer2")
    layers.seal_kind(layer1_kind, "cto", "layer1")
    assert pass_order_of(expect(layers, [("pass-order", "cto")])) == [("cto", early)]


@pytest.mark.parametrize("layer1_kind", ["digest", "content"])
@pytest.mark.parametrize("layer2_kind", ["digest", "content"])
def test_layer1_then_layer2_whatever_kind_of_seal_is_clean(layers: Layers, layer1_kind: str,
                                                           layer2_kind: str) -> None:
    layers.start(LAYERS)
    layers.seal_kind(layer1_kind, "cto", "layer1")
    layers.seal_kind(layer2_kind, "cto", "layer2")
    assert expect(layers, [])["status"] == "pending"  # the logician has not sealed


def test_an_optional_rater_out_of_order_is_excluded_not_blocking(layers: Layers) -> None:
    layers.start(LAYERS)
    for r in RATERS:
        layers.digest(r, "layer1")
        layers.digest(r, "layer2")
    early = layers.digest("redteam", "layer2")
    layers.digest("redteam", "layer1")
    data = expect(layers, [("pass-order", "redteam")], exit_code=0)
    assert data["excluded_raters"] == [{"rater": "redteam", "codes": ["pass-order"]}]
    assert pass_order_of(data) == [("redteam", early)]


def test_a_withdrawn_raters_out_of_order_sheet_is_not_judged(layers: Layers) -> None:
    """cto sealed layer 2 first, then withdrew before the pass was complete: the sheet leaves the
    study (docs/sealing.md, "Withdrawals"), so its order no longer matters."""
    layers.start(LAYERS)
    layers.digest("cto", "layer2")
    layers.digest("cto", "layer1")
    withdraw = "withdrawals:\n  - {rater: cto, reason: left, category: unforeseen}\n"
    layers.file("lead", "aoven.yaml", LAYERS + withdraw, "withdraw cto")
    layers.digest("logician", "layer1")
    layers.digest("logician", "layer2")
    data = expect(layers, [])
    assert data["withdrawals"][0]["excluded"] == [{"pass": "layer1", "round": "main"},
                                                  {"pass": "layer2", "round": "main"}]


def test_a_pass_complete_at_the_withdrawal_keeps_its_pass_order(layers: Layers) -> None:
    """Everyone had sealed layer 2 when cto withdrew: the sheet counts, so does its order."""
    layers.start(LAYERS)
    early = layers.digest("cto", "layer2")
    layers.digest("cto", "layer1")
    layers.digest("logician", "layer1")
    layers.digest("logician", "layer2")
    withdraw = "withdrawals:\n  - {rater: cto, reason: left, category: unforeseen}\n"
    layers.file("lead", "aoven.yaml", LAYERS + withdraw, "withdraw cto")
    assert pass_order_of(expect(layers, [("pass-order", "cto")])) == [("cto", early)]


WIDE = plan(passes=[LAYER1.replace("[D1]", "[D1, D2]"), LAYER2.replace("[D2]", "[D1, D2]")], rounds=ROUNDS)
AMENDED = WIDE + ("amendments:\n  - {id: d2, title: D2 ruling, rationale: why, dimensions: [D2], "
                  "conditions: [B], passes: [layer1, layer2]}\n")


def amendment_seal(layers: Layers, rater: str, pass_id: str) -> str:
    """A digest seal of an amendment's re-scores, by hand."""
    name = layers.stem_of(rater, pass_id)
    data = format_seal(sha256(f"{rater}-{pass_id}-d2".encode()), f"{name}.md",
                       SheetId(rater, pass_id, "main", "d2"))
    return layers.file(rater, f"study/amendments/d2/seals/{name}.sha256", data, f"re-seal {rater} {pass_id}")


def test_layer2_rescores_before_layer1_rescores_in_an_amendment(layers: Layers) -> None:
    """Within an amendment that re-scores both layers the order holds too, and the violation is
    the amendment's: it blocks that amendment, not the study."""
    layers.start(WIDE)
    for p in ("layer1", "layer2"):
        for r in RATERS:
            layers.digest(r, p)
    layers.reveal_all("layer1", "layer2")
    layers.file("lead", "aoven.yaml", AMENDED, "declare amendment d2")
    early = amendment_seal(layers, "cto", "layer2")
    amendment_seal(layers, "cto", "layer1")
    for p in ("layer1", "layer2"):
        amendment_seal(layers, "logician", p)
    data = expect(layers, [("pass-order", "cto")])
    v = at(data, "pass-order", "cto")
    assert v["commit"] == early and v["amendment"] == "d2" and "sheet of amendment d2" in v["message"]


# --------------------------------------------------------------------------- honest shapes


def test_layer1_sealed_then_layer2_on_a_branch_merged_later(layers: Layers) -> None:
    layers.start(LAYERS)
    sealed = {r: layers.digest(r, "layer1") for r in RATERS}
    layers.branch("layer2", sealed["logician"])
    for r in RATERS:
        layers.digest(r, "layer2")
    layers.checkout("main")
    layers.file("lead", "notes.md", "unrelated\n")
    layers.land("layer2")
    layers.reveal_all("layer1", "layer2")
    assert expect(layers, [])["status"] == "complete"


@pytest.mark.parametrize("order", [("cto", "logician"), ("logician", "cto")])
def test_two_raters_in_either_order(layers: Layers, order: tuple[str, str]) -> None:
    layers.start(LAYERS)
    first, second = order
    layers.digest(first, "layer1")
    layers.digest(first, "layer2")
    layers.digest(second, "layer1")
    layers.digest(second, "layer2")
    layers.reveal_all("layer1", "layer2")
    assert expect(layers, [])["status"] == "complete"


def test_a_plan_without_after_orders_nothing(layers: Layers) -> None:
    layers.start(UNORDERED)
    for r in RATERS:
        layers.digest(r, "layer2")
        layers.digest(r, "layer1")
    layers.reveal_all("layer1", "layer2")
    assert expect(layers, [])["status"] == "complete"


# --------------------------------------------------------------------------- seal and the hook


def test_seal_refuses_layer2_before_the_raters_layer1_seal(layers: Layers) -> None:
    layers.start(LAYERS)
    layers.digest("logician", "layer1")  # someone else's layer-1 seal orders nothing for cto
    text = layer_text("cto", "layer2")
    layers.write(layers.sheet("cto", "layer2"), text)
    before = layers.snapshot()
    res = layers.cli("cto", "seal", "--rater", "cto", "--pass", "layer2")
    assert res.code == 1 and "Traceback" not in res.output, res.output
    assert "cto has not sealed layer1/main" in res.err and "pass-order" in res.err
    assert "aoven-git seal --rater cto --pass layer1" in res.err
    assert layers.snapshot() == before
    assert (layers.path / layers.sheet("cto", "layer2")).read_text() == text  # no nonce written


def test_seal_of_layer2_after_layer1_goes_through_and_verifies(layers: Layers) -> None:
    layers.start(LAYERS)
    layers.install_hook()
    for p in ("layer1", "layer2"):
        layers.write(layers.sheet("cto", p), layer_text("cto", p))
        res = layers.cli("cto", "seal", "--rater", "cto", "--pass", p)
        assert res.code == 0, res.output
    assert expect(layers, [])["status"] == "pending"


def test_seal_refuses_the_retest_layer2_with_only_the_main_layer1_sealed(layers: Layers) -> None:
    layers.start(LAYERS)
    layers.digest("cto", "layer1")
    layers.write(layers.sheet("cto", "layer2", "retest"), layer_text("cto", "layer2", "retest"))
    before = layers.snapshot()
    res = layers.cli("cto", "seal", "--rater", "cto", "--pass", "layer2", "--round", "retest")
    assert res.code == 1 and "cto has not sealed layer1/retest" in res.err, res.output
    assert "--pass layer1 --round retest" in res.err
    assert layers.snapshot() == before


def test_the_hook_refuses_a_layer2_content_seal_before_the_layer1_seal(layers: Layers) -> None:
    layers.start(LAYERS)
    layers.install_hook()
    layers.write(layers.sheet("cto", "layer2"), layer_text("cto", "layer2"))
    head = layers.head()
    refused(layers.git_commit("cto", "layer 2 first", "study"), "pass-order")
    assert layers.head() == head


def test_the_hook_refuses_a_hand_made_layer2_seal_under_an_alias(layers: Layers) -> None:
    layers.start(LAYERS)
    layers.install_hook()
    data = format_seal(sha256(b"x"), "scores_cto_main_layer2.md", SheetId("cto", "layer2", "main"))
    layers.write("study/seals/scores_cto_main_layer2.sha256", data)
    head = layers.head()
    proc = layers.git_commit("cto", "layer 2 seal first", "study")
    refused(proc, "pass-order")
    assert "they have not sealed it at all" in proc.stderr
    assert layers.head() == head


def test_the_hook_lets_a_layer2_seal_through_once_layer1_is_sealed(layers: Layers) -> None:
    layers.start(LAYERS)
    layers.install_hook()
    layers.digest("cto", "layer1")
    data = format_seal(sha256(b"x"), "scores_cto_layer2.md", SheetId("cto", "layer2", "main"))
    layers.write("study/seals/scores_cto_layer2.sha256", data)
    proc = layers.git_commit("cto", "layer 2 seal", "study")
    assert proc.returncode == 0, proc.stderr


def test_the_hook_refuses_both_layer_seals_in_one_commit(layers: Layers) -> None:
    layers.start(LAYERS)
    layers.install_hook()
    for p in ("layer1", "layer2"):
        name = layers.stem_of("cto", p)
        layers.write(f"study/seals/{name}.sha256",
                     format_seal(sha256(p.encode()), f"{name}.md", SheetId("cto", p, "main")))
    head = layers.head()
    proc = layers.git_commit("cto", "both layers at once", "study")
    refused(proc, "pass-order")
    assert "the seal is in that very commit" in proc.stderr
    assert layers.head() == head

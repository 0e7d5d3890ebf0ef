"""Pass order (`passes[].after`, docs/sealing.md "Pass order"), the pure rule on history objects
built by hand: each test is a small commit graph (parents, files per commit) judged by the very
ledger and rules verify-seal and the hook use, without git. The real-git stories are in
tests/adversarial/test_attacks_pass_order.py."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from aoven_git.history import Entry as GitEntry
from aoven_git.history import History, Node, _ancestry
from aoven_git.model import SheetId
from aoven_git.pass_order_rules import earlier_sheets, pass_order, unsealed_earlier
from aoven_git.plan import parse_plan
from aoven_git.seal_rules import RULES, findings, judge
from aoven_git.seals import format_seal, sha256
from tests.sealing.conftest import plan as plan_text

LAYER1 = "{id: layer1, conditions: [A, B], dimensions: [D1], primary: true}"
LAYER2 = "{id: layer2, conditions: [A, B], dimensions: [D2], after: [layer1]}"
LAYERS = plan_text(passes=[LAYER1, LAYER2],
                   rounds=["{id: main, questions: main}", "{id: retest, questions: [Q1]}"])
UNORDERED = plan_text(passes=[LAYER1, LAYER2.replace(", after: [layer1]", "")])
PLAN = "aoven.yaml"


def sheet(rater: str, pass_id: str, round_id: str = "main") -> str:
    """A plausible sheet of the layer plans (its bytes only matter through their digest)."""
    dim = "D1" if pass_id == "layer1" else "D2"
    return (f"---\nrater: {rater}\npass: {pass_id}\nround: {round_id}\nnonce: n-{rater}-{pass_id}\n---\n\n"
            f"| Q | Cond | {dim} |\n|---|---|---|\n| Q1 | A | 1 |\n| Q1 | B | 2 |\n")


def stem(rater: str, pass_id: str, round_id: str = "main") -> str:
    rnd = "" if round_id == "main" else f"_{round_id}"
    return f"scores_{rater}{rnd}" + ("" if pass_id == "layer1" else f"_{pass_id}")


def seal(rater: str, pass_id: str, round_id: str = "main") -> dict[str, bytes]:
    """The files a digest seal commits."""
    name = stem(rater, pass_id, round_id)
    data = format_seal(sha256(sheet(rater, pass_id, round_id).encode()), f"{name}.md",
                       SheetId(rater, pass_id, round_id))
    return {f"study/seals/{name}.sha256": data}


def content(rater: str, pass_id: str, round_id: str = "main", name: str | None = None) -> dict[str, bytes]:
    """The file a content seal commits (at `name` when given: an accepted alias)."""
    return {f"study/{name or stem(rater, pass_id, round_id)}.md": sheet(rater, pass_id, round_id).encode()}


@dataclass
class Graph:
    """A commit graph built by hand: each commit names its parents and the files it adds (its
    state is the union of its parents' states plus those files)."""

    plan: str = LAYERS
    nodes: list[Node] = field(default_factory=list)
    blobs: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.commit((), {PLAN: self.plan.encode(), "study/test_a/q1.md": b"# Q1\n\nA.\n"}, "lead")

    def commit(self, parents: tuple[int, ...], files: dict[str, bytes], email: str) -> int:
        state: dict[str, GitEntry] = {}
        for q in parents:
            state.update(self.nodes[q].state)
        for path, data in files.items():
            blob = hashlib.sha1(data).hexdigest()
            self.blobs[blob] = data
            state[path] = GitEntry("100644", blob)
        i = len(self.nodes)
        self.nodes.append(Node(i, f"{i + 1:040x}", parents, f"{email}@example.org", state))
        return i

    def on(self, parent: int, files: dict[str, bytes], rater: str) -> int:
        return self.commit((parent,), files, rater)

    def merge(self, *parents: int) -> int:
        return self.commit(parents, {}, "lead")

    def history(self) -> History:
        return History(self.nodes[-1].sha, self.nodes, _ancestry(n.parents for n in self.nodes), self.blobs)

    def judged(self) -> list[tuple[int, str, str | None, str]]:
        """(node, code, rater, message) of every violation, under the plan of the first seal."""
        led, extra = judge(parse_plan(self.plan.encode()), self.history(), PLAN)
        return [(n, v.code, v.rater, v.message) for n, v in [*extra, *findings(led)]]

    def order(self) -> list[tuple[int, str | None]]:
        """(node, rater) of every `pass-order` violation."""
        return sorted((n, r) for n, code, r, _ in self.judged() if code == "pass-order")


def test_the_rule_is_registered_under_its_code() -> None:
    assert RULES["pass-order"] is pass_order


def test_layer2_sealed_after_layer1_is_clean() -> None:
    g = Graph()
    a = g.on(0, seal("cto", "layer1"), "cto")
    b = g.on(a, seal("logician", "layer1"), "logician")
    c = g.on(b, seal("cto", "layer2"), "cto")
    g.on(c, seal("logician", "layer2"), "logician")
    assert g.judged() == []


def test_layer2_sealed_before_layer1_is_reported_at_the_layer2_seal() -> None:
    g = Graph()
    early = g.on(0, seal("cto", "layer2"), "cto")
    g.on(early, seal("cto", "layer1"), "cto")
    found = [(n, c, r, m) for n, c, r, m in g.judged()]
    assert [(n, c, r) for n, c, r, _ in found] == [(early, "pass-order", "cto")]
    message = found[0][3]
    assert "layer2/main" in message and "layer1" in message and "committed after it" in message
    assert "study/seals/scores_cto_layer2.sha256" in message


def test_layer2_without_any_layer1_seal_says_so() -> None:
    g = Graph()
    bad = g.on(0, content("cto", "layer2"), "cto")
    found = [(n, m) for n, c, _, m in g.judged() if c == "pass-order"]
    assert [n for n, _ in found] == [bad]
    assert "they have not sealed it at all" in found[0][1]


def test_layer2_branch_cut_before_the_layer1_seal_and_merged_after() -> None:
    g = Graph()
    branch = g.on(0, seal("cto", "layer2"), "cto")
    sealed = g.on(0, seal("cto", "layer1"), "cto")
    g.merge(sealed, branch)
    found = [(n, r, m) for n, c, r, m in g.judged() if c == "pass-order"]
    assert [(n, r) for n, r, _ in found] == [(branch, "cto")]
    assert "another line of history" in found[0][2]


def test_both_layers_in_one_commit_prove_nothing() -> None:
    g = Graph()
    both = g.on(0, {**seal("cto", "layer1"), **seal("cto", "layer2")}, "cto")
    found = [(n, m) for n, c, _, m in g.judged() if c == "pass-order"]
    assert [n for n, _ in found] == [both]
    assert "that very commit" in found[0][1]


def test_a_later_change_of_layer2_does_not_replace_its_first_commit() -> None:
    """The first commit is what counts: a layer-2 sheet committed before the layer-1 seal stays
    out of order whatever is committed after the seal."""
    g = Graph()
    first = g.on(0, content("cto", "layer2"), "cto")
    sealed = g.on(first, seal("cto", "layer1"), "cto")
    changed = {k: v + b"| Q2 | A | 0 |\n" for k, v in content("cto", "layer2").items()}
    g.on(sealed, changed, "cto")
    assert g.order() == [(first, "cto")]


def test_another_raters_layer1_seal_does_not_order_my_layer2() -> None:
    g = Graph()
    a = g.on(0, seal("cto", "layer1"), "cto")
    bad = g.on(a, seal("logician", "layer2"), "logician")
    g.on(bad, seal("logician", "layer1"), "logician")
    assert g.order() == [(bad, "logician")]


def test_two_raters_in_either_order_stay_clean() -> None:
    g = Graph()
    a = g.on(0, seal("logician", "layer1"), "logician")
    b = g.on(a, seal("logician", "layer2"), "logician")
    c = g.on(b, seal("cto", "layer1"), "cto")
    g.on(c, seal("cto", "layer2"), "cto")
    assert g.judged() == []


def test_each_round_needs_its_own_layer1_seal() -> None:
    g = Graph()
    a = g.on(0, seal("cto", "layer1"), "cto")
    bad = g.on(a, seal("cto", "layer2", "retest"), "cto")
    g.on(bad, seal("cto", "layer1", "retest"), "cto")
    assert g.order() == [(bad, "cto")]


def test_an_alias_file_name_is_the_same_sheet() -> None:
    g = Graph()
    alias = g.on(0, content("cto", "layer2", name="scores_cto_main_layer2"), "cto")
    g.on(alias, seal("cto", "layer1"), "cto")
    found = [(n, m) for n, c, _, m in g.judged() if c == "pass-order"]
    assert [n for n, _ in found] == [alias]
    assert "scores_cto_main_layer2.md" in found[0][1]


def test_a_content_seal_of_layer1_orders_layer2() -> None:
    g = Graph()
    a = g.on(0, content("cto", "layer1"), "cto")
    g.on(a, seal("cto", "layer2"), "cto")
    assert g.order() == []


def test_a_plan_without_after_orders_nothing() -> None:
    g = Graph(UNORDERED)
    early = g.on(0, seal("cto", "layer2"), "cto")
    g.on(early, seal("cto", "layer1"), "cto")
    assert g.judged() == []


def test_earlier_sheets_follow_round_and_amendment_scope() -> None:
    wide = LAYERS.replace("dimensions: [D1], primary", "dimensions: [D1, D2], primary")
    entry = "  - {{id: {}, title: T, rationale: R, dimensions: [D2], passes: [{}]}}\n"
    amended = parse_plan((wide.replace("dimensions: [D2], after", "dimensions: [D1, D2], after")
                          + "amendments:\n" + entry.format("both", "layer1, layer2")
                          + entry.format("two", "layer2")).encode())
    assert earlier_sheets(amended, SheetId("cto", "layer2", "retest")) == [SheetId("cto", "layer1", "retest")]
    assert earlier_sheets(amended, SheetId("cto", "layer1", "main")) == []
    assert earlier_sheets(amended, SheetId("cto", "layer2", "main", "both")) == [
        SheetId("cto", "layer1", "main", "both")]
    assert earlier_sheets(amended, SheetId("cto", "layer2", "main", "two")) == []


def test_unsealed_earlier_reads_head_under_any_accepted_name() -> None:
    plan = parse_plan(LAYERS.encode())
    target = SheetId("cto", "layer2", "main")
    assert unsealed_earlier(plan, target, {PLAN}) == [SheetId("cto", "layer1", "main")]
    assert unsealed_earlier(plan, target, {"study/seals/scores_cto.sha256"}) == []
    assert unsealed_earlier(plan, target, {"study/scores_cto_main_layer1.md"}) == []
    assert unsealed_earlier(plan, target, {"study/seals/scores_logician.sha256"}) == [
        SheetId("cto", "layer1", "main")]

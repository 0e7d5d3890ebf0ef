"""Reading one study file — a score file or a reconciliation file — up to its Markdown body.

Both kinds get the same treatment before their tables are read (docs/score-files.md, "Naming and
identity"): a symbolic link, a file over 1 MiB or one that is not UTF-8 is refused with a finding
(a link could point at another rater's scores; the size limit keeps a pre-commit hook fast); the
optional YAML front matter is split off and read (a fast path for the `key: id` lines it almost
always holds); and the file's identity comes from its name and its front matter, which is
authoritative but must agree with the name. Nothing here raises for bad content.

The body keeps the front matter as blank lines, so every line the Markdown parser reports is a
line of the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from aoven_git.model import Findings, Plan, SheetId

__all__ = [
    "MAX_BYTES",
    "RECONCILIATION",
    "SCORE",
    "FileKind",
    "FrontMatter",
    "Identity",
    "StudyFile",
    "front_matter",
    "markdown_body",
    "read_study_file",
    "reconciliation_identity",
    "report_name_mismatches",
    "score_identity",
    "set_front_matter",
    "simple_yaml",
    "split_front_matter",
]

MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class FileKind:
    """What differs between score and reconciliation files before their tables are read."""

    kind: str  # the `naming.classify` kind of a file named like this
    noun: str  # "score files"
    keys: tuple[str, ...]  # front matter keys it may carry
    name_code: str  # finding code for a name of this kind that names no known ids
    name_problem: str
    link_risk: str = ""
    #: whether a file holding conflict markers is read no further (score files: which side's scores
    #: count is the rater's call). Reconciliation rows are still read: the sealing rules attribute
    #: every row of every committed version, conflicted or not.
    conflict_stops: bool = False


SCORE = FileKind(
    "score",
    "score files",
    ("rater", "pass", "round", "amendment", "nonce", "plan_version"),
    "unknown-rater",
    "file name names no known rater",
    " (a link could point anywhere, including at another rater's scores)",
    conflict_stops=True,
)
RECONCILIATION = FileKind(
    "reconciliation",
    "reconciliation files",
    ("pass", "round", "amendment", "plan_version"),
    "reconciliation-name-unknown",
    "the file name names no known round/pass",
)


# --------------------------------------------------------------------------- front matter


@dataclass(frozen=True)
class FrontMatter:
    """Where the front matter sits in the text: `---` on the very first line (after a BOM) up to
    the next `---` or `...` line."""

    present: bool = False
    closed: bool = True
    start: int = 0  # offset of the first byte of the opening line (after a BOM)
    body_line: int = 1  # 1-based line where the Markdown body starts
    yaml_text: str = ""
    newline: str = "\n"
    lines: tuple[str, ...] = ()  # the YAML lines, with their endings


def split_front_matter(text: str) -> FrontMatter:
    start = 1 if text.startswith("\ufeff") else 0
    first_end = text.find("\n", start)
    first = text[start:] if first_end == -1 else text[start:first_end]
    if first.rstrip() != "---":
        return FrontMatter(start=start)
    newline = "\r\n" if first.endswith("\r") else "\n"
    if first_end == -1:
        return FrontMatter(present=True, closed=False, start=start, newline=newline)
    pos = first_end + 1
    lines: list[str] = []
    line_no = 1
    while pos < len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl == -1 else text[pos : nl + 1]
        line_no += 1
        if line.rstrip() in ("---", "..."):
            return FrontMatter(True, True, start, line_no + 1, "".join(lines), newline, tuple(lines))
        lines.append(line)
        pos += len(line)
    return FrontMatter(True, False, start, line_no + 1, "".join(lines), newline, tuple(lines))


_SIMPLE_LINE_RE = re.compile(r"^([a-z_]{1,32}):[ \t]+([a-z][a-z0-9_-]{0,63}|[1-9][0-9]{0,8}|0)[ \t]*$")
_YAML_KEYWORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})


def simple_yaml(text: str, *, line_offset: int = 0) -> tuple[dict[str, Any], dict[str, int]] | None:
    """`key: value` lines of lower-case ids and small integers, read without a YAML parser.

    Front matter is almost always this simple, and ruamel.yaml took a quarter of the time of
    validating a study. Anything else (quotes, comments, upper case, nesting, YAML keywords,
    duplicate keys) returns None and goes to `yamlio.load_yaml`; a property test checks that the
    two agree on everything this accepts.
    """
    value: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        m = _SIMPLE_LINE_RE.match(line)
        if m is None:
            return None
        key, raw = m.group(1), m.group(2)
        if key in value or raw in _YAML_KEYWORDS:
            return None
        value[key] = int(raw) if raw[0].isdigit() else raw
        lines[key] = number + line_offset
    return (value, lines) if value else None


def _load(fm: FrontMatter) -> tuple[Any, dict[str, int]]:
    """The front matter's YAML value and the line of each top-level key (raises YamlError)."""
    from aoven_git.yamlio import load_yaml

    simple = simple_yaml(fm.yaml_text, line_offset=1)
    return simple if simple is not None else load_yaml(fm.yaml_text, line_offset=1)


def front_matter(data: bytes) -> dict[str, Any]:
    """The front matter mapping of a file; {} when absent, unclosed or not valid YAML.

    Callers that must tell those cases apart (validation) use `read_study_file`, which reports them.
    """
    from aoven_git.yamlio import YamlError

    try:
        fm = split_front_matter(data.decode("utf-8"))
    except UnicodeDecodeError:
        return {}
    if not fm.present or not fm.closed:
        return {}
    try:
        value, _ = _load(fm)
    except YamlError:
        return {}
    return value if isinstance(value, dict) else {}


_PLAIN_SCALAR_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "nan", "inf"}
_KEY_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:")


def _yaml_scalar(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN_SCALAR_RE.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _replace_keys(fm: FrontMatter, fields: dict[str, str]) -> str:
    """The YAML lines with `fields` replaced in place (a multi-line value with its continuation
    lines) and the remaining fields appended."""
    remaining = dict(fields)
    out: list[str] = []
    skipping = False
    for line in fm.lines:
        if skipping and (line[:1] in (" ", "\t") or not line.strip()):
            continue  # continuation of a replaced multi-line value
        skipping = False
        m = _KEY_RE.match(line)
        if m and m.group(1) in remaining:
            key = m.group(1)
            ending = line[len(line.rstrip("\r\n")) :] or fm.newline
            out.append(f"{key}: {_yaml_scalar(remaining.pop(key))}{ending}")
            skipping = True
            continue
        out.append(line)
    if out and not out[-1].endswith("\n"):
        out[-1] += fm.newline
    out.extend(f"{k}: {_yaml_scalar(v)}{fm.newline}" for k, v in remaining.items())
    return "".join(out)


def set_front_matter(data: bytes, **fields: str) -> bytes:
    """Add or replace top-level keys in the front matter, creating it when absent.

    Every other byte stays as it was (seal digests are computed over the file, and a rater's
    diff should show only the keys that changed). A key written over several lines is replaced
    with its continuation lines. The file's line ending is reused.
    """
    if not fields:
        return data
    text = data.decode("utf-8", "surrogateescape")
    fm = split_front_matter(text)
    if not fm.present or not fm.closed:
        newline = "\r\n" if "\r\n" in text[:4096] else "\n"
        block = "---" + newline + "".join(f"{k}: {_yaml_scalar(v)}{newline}" for k, v in fields.items())
        block += "---" + newline
        head = text[: fm.start]  # keep a BOM in front
        return (head + block + text[fm.start :]).encode("utf-8", "surrogateescape")
    yaml_start = text.index("\n", fm.start) + 1
    yaml_end = yaml_start + len(fm.yaml_text)
    new = text[:yaml_start] + _replace_keys(fm, fields) + text[yaml_end:]
    return new.encode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------- reading a file


@dataclass
class StudyFile:
    """One study file as read so far. `text` is None when the file could not be read at all
    (symlink, too large, not UTF-8); `front` holds the front matter's id-valued keys when it was
    present and readable as a mapping (`front_state` "ok"), with `lines` giving each key's line."""

    path: str
    kind: FileKind
    named: SheetId | None  # identity from the file name, when it is a name of this kind
    named_kind: bool  # the name is of this kind (`scores_*.md`, `reconciliation*.md`)
    text: str | None = None
    body: str = ""
    front_state: str = "absent"  # "absent" | "invalid" | "ok"
    front: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    plan_version: int | None = None


def _readable(path: str, data: bytes, kind: FileKind, is_symlink: bool, found: Findings) -> str | None:
    """The decoded text, or None after reporting why the file cannot be read."""
    if is_symlink:
        found.error(1, "symlink", f"{kind.noun} must be regular files, not symbolic links{kind.link_risk}")
        return None
    if len(data) > MAX_BYTES:
        found.error(
            1,
            "file-too-large",
            f"file is {len(data)} bytes; {kind.noun} are limited to {MAX_BYTES} bytes (1 MiB)",
        )
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        found.error(
            line,
            "not-utf8",
            f"not valid UTF-8 (first bad byte at offset {exc.start}); save the file as UTF-8",
        )
        return None


_CONFLICT_RE = re.compile(r"^(<{7}|\|{7}|={7}|>{7})(?:[ \t].*)?\r?$", re.M)


def conflict_markers(text: str) -> list[tuple[int, int]]:
    """(line of `<<<<<<<`, line of its `>>>>>>>`) of every block of git's conflict markers: what a
    merge leaves when two branches changed the same lines. Both ends are required, so a lone
    `=======` (a Markdown heading underline) is no conflict."""
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    for m in _CONFLICT_RE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        if m.group(1)[0] == "<":
            start = line
        elif m.group(1)[0] == ">" and start is not None:
            blocks.append((start, line))
            start = None
    return blocks


def _unmerged(text: str, found: Findings) -> bool:
    """`merge-conflict` for each block of conflict markers: the file holds both sides of a merge.
    True when there is one."""
    blocks = conflict_markers(text) if "<<<<<<<" in text else []
    for start, end in blocks:
        found.error(start, "merge-conflict",
                    f"unresolved merge conflict at line {start} (git's markers <<<<<<< … ======= … >>>>>>> "
                    f"up to line {end}): keep the right side, delete the marker lines, then validate again")
    return bool(blocks)


def markdown_body(text: str) -> str:
    """The Markdown body of a file's text: front matter blanked, a BOM removed."""
    return _blank_front_matter(text, split_front_matter(text))


def _blank_front_matter(text: str, fm: FrontMatter) -> str:
    """The body with the front matter replaced by empty lines (token lines stay file lines)."""
    if fm.present and fm.closed:
        head = 0
        for _ in range(fm.body_line - 1):
            nl = text.find("\n", head)
            if nl == -1:
                return "\n" * text.count("\n")
            head = nl + 1
        return "\n" * (fm.body_line - 1) + text[head:]
    return text[1:] if text.startswith("\ufeff") else text


def _read_front(sf: StudyFile, fm: FrontMatter, plan: Plan, found: Findings) -> None:
    """Fill `sf.front` from the front matter, reporting every key it cannot use."""
    from aoven_git.yamlio import YamlError

    if not fm.closed:
        found.error(
            1,
            "front-matter-invalid",
            "front matter opened with `---` on line 1 is never closed by a `---` line",
        )
        sf.front_state = "invalid"
        return
    try:
        value, lines = _load(fm)
    except YamlError as exc:
        found.error(exc.line or 1, "front-matter-invalid", f"front matter: {exc.message}")
        sf.front_state = "invalid"
        return
    if value is not None and not isinstance(value, dict):
        keys = ", ".join(f"{k}:" for k in sf.kind.keys if k != "nonce")
        found.error(2, "front-matter-invalid", f"front matter must be a mapping of keys ({keys})")
        sf.front_state = "invalid"
        return
    sf.front_state, sf.lines = "ok", {str(k): v for k, v in lines.items()}
    for key, val in (value or {}).items():
        _read_key(sf, str(key), val, plan, found)


def _read_key(sf: StudyFile, key: str, val: Any, plan: Plan, found: Findings) -> None:
    line = sf.lines.get(key, 2)
    if key not in sf.kind.keys:
        found.warn(
            line,
            "front-matter-unknown-key",
            f"unknown front matter key {key!r} (known: {', '.join(sf.kind.keys)})",
        )
    elif key == "plan_version":
        if isinstance(val, bool) or not isinstance(val, int):
            found.error(line, "front-matter-invalid", f"plan_version must be a whole number, not {val!r}")
            return
        sf.plan_version = val
        if val != plan.version:
            found.error(
                line,
                "plan-version-mismatch",
                f"made under plan version {val}, but the plan is version {plan.version}; files made "
                "under another rubric are never compared",
            )
    elif isinstance(val, (str, int)) and not isinstance(val, bool):
        sf.front[key] = str(val)
    else:
        found.error(line, "front-matter-invalid", f"{key} must be an id (text), not {val!r}")


def read_study_file(
    plan: Plan, path: str, data: bytes, kind: FileKind, found: Findings, *, is_symlink: bool = False
) -> StudyFile:
    """Read `data` (the file at repository path `path`) up to its body, reporting to `found`."""
    from aoven_git.naming import classify

    named = classify(plan, path)
    named_kind = named.kind == kind.kind
    if named_kind and named.sheet is None:
        found.error(1, kind.name_code, named.problem or kind.name_problem)
    sf = StudyFile(path, kind, named.sheet if named_kind else None, named_kind)
    text = _readable(path, data, kind, is_symlink, found)
    if text is None or (_unmerged(text, found) and kind.conflict_stops):
        return sf
    fm = split_front_matter(text)
    sf.text, sf.body = text, _blank_front_matter(text, fm)
    if fm.present:
        _read_front(sf, fm, plan, found)
    return sf


def report_name_mismatches(
    path: str, values: dict[str, str], expected: dict[str, str], lines: dict[str, int], found: Findings
) -> None:
    """Front matter is authoritative but must agree with the file name: one
    `front-matter-mismatch` per disagreeing key, at that key's line."""
    name = path.rsplit("/", 1)[-1]
    for key, val in values.items():
        if key in expected and val != expected[key]:
            found.error(
                lines.get(key, 2),
                "front-matter-mismatch",
                f"front matter says {key}: {val} but the file name {name} means {key} {expected[key]}",
            )


# --------------------------------------------------------------------------- identity


@dataclass(frozen=True)
class Identity:
    """Whose file, of which pass and round. `known`: rater (for score files), pass and round all
    resolve in the plan, so the file's cells can be checked against the pass."""

    sheet: SheetId
    known: bool
    nonce: str | None = None
    plan_version: int | None = None


def score_identity(plan: Plan, sf: StudyFile, found: Findings) -> Identity:
    """A score file's identity: the name decides; front matter must agree with it. A file not
    named like a score file (an explicit path) is identified by its front matter alone. The
    amendment of a file is its folder (`amendments/<id>/`); `amendment:` in the front matter must
    name the same one (docs/amendments.md)."""
    primary, main = plan.primary_pass.id, plan.main_round.id
    sheet = sf.named or SheetId("", primary, main)
    nonce = sf.front.get("nonce")
    if sf.text is not None and sf.front_state == "absent" and not sf.named_kind:
        found.error(
            1, "unknown-rater", "the file name does not identify a rater and there is no front matter"
        )
    if sf.front_state != "ok":
        return Identity(sheet, sf.named is not None, nonce, sf.plan_version)
    if sf.named is not None:
        expected = {"rater": sheet.rater, "pass": sheet.pass_id, "round": sheet.round_id}
        report_name_mismatches(sf.path, sf.front, expected, sf.lines, found)
        _amendment_mismatch(sf, sheet.amendment, found)
        return Identity(sheet, True, nonce, sf.plan_version)
    if sf.named_kind:
        return Identity(sheet, False, nonce, sf.plan_version)
    return _front_identity(plan, sf, found)


def _front_identity(plan: Plan, sf: StudyFile, found: Findings) -> Identity:
    """The identity of a file whose name says nothing: its front matter alone."""
    rater = sf.front.get("rater")
    pass_id = sf.front.get("pass", plan.primary_pass.id)
    round_id = sf.front.get("round", plan.main_round.id)
    amendment = sf.front.get("amendment")
    known = bool(rater and plan.rater(rater) and plan.pass_(pass_id) and plan.round_(round_id))
    if not known:
        found.error(
            sf.lines.get("rater", 2),
            "unknown-rater",
            f"front matter does not name a known rater/pass/round ({rater}/{pass_id}/{round_id})",
        )
    elif amendment is not None and plan.amendment(amendment) is None:
        known = False
        found.error(sf.lines.get("amendment", 2), "front-matter-invalid",
                    f"front matter names amendment {amendment!r}, which is not in the plan")
    sheet = SheetId(rater or "", pass_id, round_id, amendment)
    return Identity(sheet, known, sf.front.get("nonce"), sf.plan_version)


def _amendment_mismatch(sf: StudyFile, amendment: str | None, found: Findings) -> None:
    """`amendment:` in the front matter of a file whose folder says otherwise."""
    said = sf.front.get("amendment")
    if said is None or said == amendment:
        return
    where = (f"the file lies in amendments/{amendment}/" if amendment
             else "the file is not in an amendment folder (amendments/<id>/)")
    found.error(sf.lines.get("amendment", 2), "front-matter-mismatch",
                f"front matter says amendment: {said} but {where}")


def reconciliation_identity(plan: Plan, sf: StudyFile, found: Findings) -> Identity:
    """A reconciliation file's pass and round (`sheet.rater` is empty): the name decides, front
    matter must agree; a file not named like one takes them from its front matter."""
    primary, main = plan.primary_pass.id, plan.main_round.id
    pass_id = sf.named.pass_id if sf.named else primary
    round_id = sf.named.round_id if sf.named else main
    ids = dict(sf.front)
    for key, exists in (("pass", plan.pass_), ("round", plan.round_)):
        if key in ids and exists(ids[key]) is None:
            found.error(
                sf.lines.get(key, 2), "front-matter-invalid", f"front matter names unknown {key} {ids[key]!r}"
            )
            ids.pop(key)
    if sf.named is not None:
        report_name_mismatches(sf.path, ids, {"pass": pass_id, "round": round_id}, sf.lines, found)
        _amendment_mismatch(sf, sf.named.amendment, found)
    else:  # not named like a reconciliation file (an explicit path): the front matter decides
        pass_id, round_id = ids.get("pass", pass_id), ids.get("round", round_id)
    known = plan.pass_(pass_id) is not None and plan.round_(round_id) is not None
    amendment = sf.named.amendment if sf.named is not None else None
    return Identity(SheetId("", pass_id, round_id, amendment), known, None, sf.plan_version)

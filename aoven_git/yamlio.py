"""Bounded, line-aware YAML loading shared by the plan and score-file front matter.

ruamel.yaml's round-trip loader builds only plain maps, lists and scalars (no arbitrary Python
objects) and remembers where every key and item starts, which is what lets every error name
its line. Aliases are resolved by reference while parsing; converting to plain data would
expand an alias bomb exponentially, so the conversion counts nodes and stops at a budget.
ruamel.yaml's scanner is quadratic in flow nesting (3,000 `[` take seconds, enough to stall a
pre-commit hook), so nesting is bounded by a linear pre-scan before the parser sees the text.
"""

from __future__ import annotations

import copy
import re
from collections import OrderedDict
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from aoven_git.errors import PlanError

MAX_NODES = 50_000
MAX_DEPTH = 200  # plans nest 4 levels; ruamel.yaml needs 0.05 s at 200, 7 s at 1,500


class YamlError(PlanError):
    """Malformed YAML; callers re-raise it as the error type their file calls for."""


def _plain(
    node: Any, path: str, lines: dict[str, int], budget: list[int], line: int | None, offset: int
) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise YamlError(
            f"document expands to more than {MAX_NODES} values (aliases/anchors used as a bomb?)",
            line=line,
        )
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            try:
                key_line = node.lc.key(key)[0] + 1 + offset
            except (KeyError, TypeError, AttributeError):
                key_line = line
            if not isinstance(key, (str, int, float, bool)) or key is None:
                raise YamlError(f"keys must be plain scalars, got {type(key).__name__}", line=key_line)
            sub = f"{path}.{key}" if path else str(key)
            if key_line is not None:
                lines[sub] = key_line
            plain_key = key if isinstance(key, str) else str(key)
            out[plain_key] = _plain(value, sub, lines, budget, key_line, offset)
        return out
    if isinstance(node, CommentedSeq):
        items: list[Any] = []
        for index, value in enumerate(node):
            try:
                item_line = node.lc.item(index)[0] + 1 + offset
            except (KeyError, TypeError, AttributeError, IndexError):
                item_line = line
            sub = f"{path}.{index}" if path else str(index)
            if item_line is not None:
                lines[sub] = item_line
            items.append(_plain(value, sub, lines, budget, item_line, offset))
        return items
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    # dates, binary and other tagged scalars are not part of any aoven document
    raise YamlError(f"unsupported YAML value of type {type(node).__name__}", line=line)


#: Documents parsed in this process, newest last: verify-seal and the hook read the same plan blob
#: as the verified revision's plan and as the ledger's frozen plan, and the round-trip parser
#: (kept for its line numbers) costs ~0.1 s per plan, so each distinct text is parsed once.
_PARSED: OrderedDict[tuple[str, int], tuple[Any, dict[str, int]]] = OrderedDict()
_PARSED_MAX = 16


def load_yaml(text: str, *, line_offset: int = 0) -> tuple[Any, dict[str, int]]:
    """Parse YAML text into plain data plus a dotted-path → line map.

    `line_offset` shifts reported lines, for YAML embedded in a larger file (front matter).
    Raises YamlError with the line of the problem. A text parsed before is answered from a
    small cache, as a deep copy (callers may change what they get).
    """
    key = (text, line_offset)
    if key in _PARSED:
        _PARSED.move_to_end(key)
        return copy.deepcopy(_PARSED[key])
    parsed = _parse(text, line_offset)
    _PARSED[key] = copy.deepcopy(parsed)
    if len(_PARSED) > _PARSED_MAX:
        _PARSED.popitem(last=False)
    return parsed


def _parse(text: str, line_offset: int) -> tuple[Any, dict[str, int]]:
    deep = _too_deep(text)
    if deep is not None:
        raise YamlError(f"YAML nested more than {MAX_DEPTH} levels deep", line=deep + line_offset)
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        node = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlError(f"invalid YAML: {problem}", line=line) from None
    except YAMLError as exc:
        raise YamlError(f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else 'parse error'}") from None
    except (ValueError, TypeError, RecursionError) as exc:
        raise YamlError(f"invalid YAML: {exc.__class__.__name__}") from None
    lines: dict[str, int] = {}
    try:
        data = _plain(node, "", lines, [MAX_NODES], 1 + line_offset, line_offset)
    except RecursionError:
        raise YamlError("YAML nested too deeply") from None
    return data, lines


_QUOTED_OR_COMMENT = re.compile(
    r"""(?:^|(?<=[\s\[{,:]))(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*')"""  # quoted scalars
    r"|(?:^|(?<=\s))#.*"  # comments
)


def _too_deep(text: str) -> int | None:
    """1-based line where flow nesting (`[`, `{`) passes MAX_DEPTH, or None.

    Quoted scalars and comments on one line are skipped; anything else is counted, so the
    check may over-count brackets in plain text, which is why the limit sits far above the
    few levels any plan or front matter uses.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if "[" not in line and "{" not in line and not depth:
            continue
        bare = _QUOTED_OR_COMMENT.sub("", line)
        for char in bare:
            if char in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    return number
            elif char in "]}" and depth:
                depth -= 1
    return None

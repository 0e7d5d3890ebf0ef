"""The `.gitattributes` lines that decide how git stores the study's files (docs/sealing.md, "Line
endings and .gitattributes"). Pure: no git, no files.

A digest seal is the SHA-256 of the bytes git stores for a score file, and a reveal must store
exactly those bytes. Attributes such as `text`, `eol` or `filter` change what git stores for the
same file on disk: a `* text=auto` line added after the seal turns an honest CRLF sheet into other
bytes, and the reveal fails for a file nobody changed. So the first seal freezes these lines
(`frozen_rules.attributes_changed_after_seal`): the lines that set such an attribute and whose
pattern matches a file of the study. Lines about other files (`*.png binary`) stay free.

Patterns follow gitattributes(5): a pattern without a slash matches a file name in any folder
below the `.gitattributes` file; one with a slash is anchored there, `*` and `?` stop at `/`, and
`**` spans folders. A pattern ending in `/` matches folders only, never a file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

NAME = ".gitattributes"
#: attributes that change the bytes git stores for a file (`binary` is the macro `-diff -merge -text`)
STORAGE = frozenset({"text", "eol", "crlf", "filter", "ident", "working-tree-encoding", "binary"})


def attribute_names(tokens: Iterable[str]) -> set[str]:
    """`-text`, `!eol`, `filter=lfs`, `text` → their names."""
    return {t.lstrip("-!").split("=", 1)[0] for t in tokens if t.lstrip("-!")}


@lru_cache(maxsize=512)
def _regex(pattern: str) -> re.Pattern[str]:
    """An anchored gitattributes pattern (with a slash) as a regular expression."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1:end]
            out.append("[" + ("^" + body[1:] if body[:1] in "!^" else body).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def matches(pattern: str, base: str, path: str) -> bool:
    """Whether a pattern of the `.gitattributes` file in folder `base` ("" at the root) matches
    the file `path` (repository-relative)."""
    if base:
        if not path.startswith(base + "/"):
            return False
        path = path[len(base) + 1:]
    if not pattern or pattern.endswith("/"):
        return False
    if "/" not in pattern:
        return bool(_regex(pattern).fullmatch(path.rsplit("/", 1)[-1]))
    return bool(_regex(pattern.lstrip("/")).fullmatch(path))


def storage_lines(text: str, base: str, probes: Iterable[str]) -> list[str]:
    """The lines of one `.gitattributes` file (in folder `base`) that change how git stores one
    of the `probes` (the study's files), macro definitions of such attributes included, as
    written (stripped)."""
    probes = list(probes)
    storage = set(STORAGE)
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pattern, *tokens = line.split()
        if pattern.startswith("[attr]"):
            if attribute_names(tokens) & storage:
                storage.add(pattern[len("[attr]"):])
                out.append(line)
            continue
        if attribute_names(tokens) & storage and any(matches(pattern, base, p) for p in probes):
            out.append(line)
    return out


def folder_of(path: str) -> str:
    """The folder a `.gitattributes` file applies to ("" at the root)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


def applies_to(path: str, study_dir: str) -> bool:
    """A `.gitattributes` file that can speak about files under `study_dir`: at the root, in a
    folder on the way to it, or inside it."""
    if path.rsplit("/", 1)[-1] != NAME:
        return False
    folder = folder_of(path)
    return not folder or study_dir.startswith(folder + "/") or study_dir == folder \
        or folder.startswith(study_dir.rstrip("/") + "/")


def candidates(study_dir: str) -> list[str]:
    """The `.gitattributes` paths at the root and on the way to the study folder (those inside it
    are part of the study folder's history anyway)."""
    parts = study_dir.rstrip("/").split("/")
    return [NAME, *("/".join(parts[:n]) + "/" + NAME for n in range(1, len(parts) + 1))]

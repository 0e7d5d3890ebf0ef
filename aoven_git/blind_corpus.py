"""Full blinding on disk and in git: the I/O around the pure core of `blinding` (docs/blinding.md).

`blinding` builds and checks a corpus from bytes; this module knows where those bytes live: the
sources of a blind pass (the baseline as generated, the treatment from its stripped copy), the
corpus under `<study_dir>/blind/<pass>/`, and the key, read from a commit or the work tree. It
also says what verify-seal must add for a blind pass once its key is committed
(`corpus_violations`): the corpus must be exactly the normalised sources the key names.

Violation codes of `corpus_violations` (the `blinding.check_corpus` codes, plus one):

==================== ===================================================================
code                 meaning
==================== ===================================================================
blind-mismatch       a blinded file is not the normalisation of the source its key entry
                     names, or that source changed since blinding
blind-missing-file   a key entry has no blinded file
blind-extra-file     a file under `blind/<pass>/` has no key entry
blind-missing-item   a (question, condition) of the pass has no key entry
blind-unknown-item   a key entry names a (question, condition) that is not in the pass
blind-key-invalid    the committed key cannot be read (not the canonical key of this pass)
==================== ===================================================================
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from aoven_git import naming
from aoven_git.model import Plan

__all__ = ["corpus_ids", "work_tree_corpus_ids"]


# --------------------------------------------------------------------------- corpus ids


def _blind_passes(plan: Plan) -> list[str]:
    return [p.id for p in plan.passes if p.blind]


def corpus_ids(plan: Plan, paths: Iterable[str]) -> dict[str, frozenset[str]]:
    """The item ids of each blind pass's corpus among repository `paths` (`blind/<pass>/<id>.md`
    directly in the pass's folder; `key.json` and any other name are not items)."""
    from aoven_git.blinding import blind_id_from_name

    folders = {naming.blind_dir(plan, p): p for p in _blind_passes(plan)}
    out: dict[str, set[str]] = {p: set() for p in folders.values()}
    for path in paths:
        parent, _, name = path.rpartition("/")
        pass_id = folders.get(parent)
        ident = blind_id_from_name(name) if pass_id is not None else None
        if pass_id is not None and ident is not None:
            out[pass_id].add(ident)
    return {p: frozenset(ids) for p, ids in out.items()}


def work_tree_corpus_ids(root: Path, plan: Plan) -> dict[str, frozenset[str]]:
    """`corpus_ids` of the files in the work tree."""
    paths: list[str] = []
    for pass_id in _blind_passes(plan):
        folder = naming.blind_dir(plan, pass_id)
        try:
            paths += [f"{folder}/{e.name}" for e in os.scandir(root / folder) if e.is_file()]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return corpus_ids(plan, paths)

"""The JSON Schemas shipped in `schemas/`, loaded once and validated with Draft 2020-12."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

PACKAGE_DIR = Path(__file__).resolve().parent
SCHEMA_DIR = PACKAGE_DIR / "_schemas"  # symlink to schemas/ in a checkout, a copy in a wheel


@cache
def schema(name: str) -> dict[str, Any]:
    """`name` is the file stem: "plan" or "scores"."""
    data: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text("utf-8"))
    return data


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(schema(name))

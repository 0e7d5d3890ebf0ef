"""The suite's own sharing helpers: what is built once per run is built once, and a build that
failed is not taken for a finished one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import built_once


def test_a_folder_built_once_is_built_once_and_reused(tmp_path_factory: pytest.TempPathFactory) -> None:
    calls: list[Path] = []

    def build(folder: Path) -> None:
        calls.append(folder)
        (folder / "made").write_text("once\n")

    first = built_once(tmp_path_factory, "suite-fixture-test", build)
    second = built_once(tmp_path_factory, "suite-fixture-test", build)
    assert first == second and calls == [first]
    assert (first / "made").read_text() == "once\n"


def test_a_build_that_failed_is_built_again(tmp_path_factory: pytest.TempPathFactory) -> None:
    def broken(folder: Path) -> None:
        (folder / "half").write_text("half\n")
        raise RuntimeError("the build broke")

    with pytest.raises(RuntimeError, match="the build broke"):
        built_once(tmp_path_factory, "suite-fixture-broken", broken)
    folder = built_once(tmp_path_factory, "suite-fixture-broken", lambda f: (f / "whole").write_text("ok\n"))
    assert (folder / "whole").exists() and not (folder / "half").exists()

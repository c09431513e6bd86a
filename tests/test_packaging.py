"""The wheel holds what the commands need (recipes, shipped archives) and not the perf scripts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from recipes import recipe_dir
from stackexchange.catalog import shipped_data

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("adapter_zoo", "stackexchange", "benchmarks", "recipes")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built offline from a clean copy of the source (no build/ or egg-info reused)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in PACKAGES:
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--disable-pip-version-check", "-q", "-w", str(tmp / "dist"), str(src)],
        check=True,
        capture_output=True,
    )
    (path,) = (tmp / "dist").glob("adapter_zoo-*.whl")
    return path


def test_wheel_ships_recipes_and_archives_not_perf_scripts(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    recipes = sorted(recipe_dir().glob("*.toml"))
    archives = sorted(shipped_data().glob("*.7z"))
    assert len(recipes) == 11 and len(archives) == 8
    for path in recipes + archives:
        assert path.relative_to(ROOT).as_posix() in names
    assert "stackexchange/samples/ATTRIBUTION.md" in names
    assert "benchmarks/evaluate.py" in names
    assert [n for n in names if n.startswith("benchmarks/perf")] == []


def test_installed_wheel_lists_the_recipes(wheel, tmp_path):
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import adapter_zoo, sys; print(adapter_zoo.__file__); "
            "from adapter_zoo.cli import main; sys.exit(main(['recipes']))",
        ],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert out[0] == str(site / "adapter_zoo" / "__init__.py")
    listed = {line.split()[0] for line in out[1:] if line and not line.startswith(" ")}
    assert len(listed) == 11
    assert listed == {path.stem for path in recipe_dir().glob("*.toml")}


def test_wheel_carries_the_apache_licence(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
        licences = [n for n in names if n.endswith("/LICENSE")]
        assert len(licences) == 1 and "Apache License" in archive.read(licences[0]).decode()
    assert "License: Apache-2.0" in text or "License-Expression: Apache-2.0" in text
    assert (ROOT / "LICENSE").read_text().startswith(" " * 33 + "Apache License\n")


def test_the_readme_cpu_install_pins_the_torch_the_tests_ran_with():
    """README's CPU install line takes the CPU wheel of .ci/constraints.txt's torch (the
    dry-run resolve itself, 76 packages and no nvidia-*, takes over two minutes: not here)."""
    import re

    pinned = re.search(r"^torch==(\S+)$", (ROOT / ".ci/constraints.txt").read_text(), re.M)
    readme = (ROOT / "README.md").read_text()
    line = 'pip install "torch==%s+cpu" --index-url https://download.pytorch.org/whl/cpu'
    assert line % pinned.group(1) in readme

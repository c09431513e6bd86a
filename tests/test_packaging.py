"""The wheel holds what the commands need (recipes, shipped archives), not the scripts that
measure (``benchmarks``' rooms) nor their results."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from recipes import recipe_dir
from stackexchange.catalog import shipped_data

# one xdist process runs this module (--dist loadgroup): one wheel build for the module
pytestmark = pytest.mark.xdist_group("wheel")

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("adapter_zoo", "stackexchange", "benchmarks", "recipes")


def clean_source(folder: Path) -> Path:
    """A clean copy of the source under ``folder`` (no build/ or egg-info reused): building
    from it writes nothing into the checkout, whose egg-info other test processes read."""
    src = folder / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in PACKAGES:
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    return src


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built offline from a clean copy of the source."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = clean_source(tmp)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--disable-pip-version-check", "-q", "-w", str(tmp / "dist"), str(src)],
        check=True,
        capture_output=True,
    )
    (path,) = (tmp / "dist").glob("adapter_zoo-*.whl")
    return path


def test_wheel_ships_recipes_and_archives_not_the_measuring_scripts(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    recipes = sorted(recipe_dir().glob("*.toml"))
    archives = sorted(shipped_data().glob("*.7z"))
    assert len(recipes) == 13 and len(archives) == 8
    for path in recipes + archives:
        assert path.relative_to(ROOT).as_posix() in names
    assert "stackexchange/samples/ATTRIBUTION.md" in names
    assert "benchmarks/evaluate.py" in names
    rooms = ("perf", "speed", "studies", "reliability", "results")
    assert [n for n in names if n.startswith(tuple(f"benchmarks/{r}/" for r in rooms))] == []


def test_wheel_ships_the_shipped_zoo_every_file_of_every_entry(wheel):
    """The shipped entries are package data: every file their cards list, the card and its
    README, in one folder each; together at most 10 MB."""
    from adapter_zoo.zoo.store import PACKAGE_SHIPPED, read_card

    names = set(zipfile.ZipFile(wheel).namelist())
    entries = sorted(p for p in PACKAGE_SHIPPED.iterdir() if p.is_dir())
    assert len(entries) >= 1
    for entry in entries:
        files = [*read_card(entry)["files"], "card.json", "README.md"]
        for relative in files:
            assert f"adapter_zoo/shipped/{entry.name}/{relative}" in names
    shipped = [n for n in names if n.startswith("adapter_zoo/shipped/")]
    assert len(shipped) == sum(len(read_card(e)["files"]) + 2 for e in entries)
    size = sum(zipfile.ZipFile(wheel).getinfo(n).file_size for n in shipped)
    assert size <= 10 * 2**20


def test_a_fresh_install_lists_the_shipped_entries(wheel, tmp_path):
    """The installed wheel, an empty zoo of the user's: ``list`` shows every shipped entry,
    marked ``shipped``, read from the installed package."""
    from adapter_zoo.zoo.store import PACKAGE_SHIPPED

    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    env = {k: v for k, v in os.environ.items() if k != "ADAPTER_ZOO_SHIPPED"}
    env.update(PYTHONPATH=str(site), ADAPTER_ZOO_HOME=str(tmp_path / "empty-zoo"))
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from adapter_zoo.cli import main; "
         "sys.exit(main(['list', '--json']))"],
        cwd=tmp_path, env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    listed = {card["name"]: card for card in json.loads(out)}
    assert set(listed) == {p.name for p in PACKAGE_SHIPPED.iterdir() if p.is_dir()}
    for name, card in listed.items():
        assert card["source"] == "shipped"
        assert card["path"] == str(site / "adapter_zoo" / "shipped" / name)


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
    assert len(listed) == 13
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


@pytest.mark.slow  # over 10 s: started first (CONTRIBUTING, CI's time budget)
def test_the_readme_cpu_install_resolves_cpu_torch_and_no_cuda_wheels(tmp_path):
    """README's CPU install (the CPU wheel of .ci/constraints.txt's torch, then the project
    under the constraints), resolved as pip's dry run: torch stays the CPU build and not one
    ``nvidia-*`` wheel comes in (a bare install pulls 13 of them)."""
    pinned = re.search(r"^torch==(\S+)$", (ROOT / ".ci/constraints.txt").read_text(), re.M)
    cpu_torch = f"torch=={pinned.group(1)}+cpu"
    readme = (ROOT / "README.md").read_text()
    assert f'pip install "{cpu_torch}" --index-url https://download.pytorch.org/whl/cpu' in readme
    assert "pip install -c .ci/constraints.txt ." in readme
    report, constraints = tmp_path / "report.json", ROOT / ".ci/constraints.txt"
    project = clean_source(tmp_path)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q"]
        + ["--report", str(report), "-c", str(constraints), cpu_torch, str(project)],
        check=True,
        capture_output=True,
    )
    resolved = {
        item["metadata"]["name"].lower(): item["metadata"]["version"]
        for item in json.loads(report.read_text())["install"]
    }
    assert resolved["torch"] == f"{pinned.group(1)}+cpu"
    assert [name for name in resolved if name.startswith("nvidia")] == []
    assert "adapter-zoo" in resolved and "sentence-transformers" in resolved

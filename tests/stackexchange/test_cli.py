"""The ``parse`` and ``forums`` commands through the real ``adapter-zoo`` entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from adapter_zoo.cli import main


def test_parse_a_whole_dump_in_parallel_then_skip(
    beer_archive, bicycles_meta_dir, tmp_path, capsys
):
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / beer_archive.name).symlink_to(beer_archive)
    (dump / bicycles_meta_dir.name).symlink_to(bicycles_meta_dir)
    out = tmp_path / "out"
    assert main(["parse", str(dump), "--out", str(out), "--workers", "2"]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [
        str(out / "beer.stackexchange.com"),
        str(out / "bicycles.meta.stackexchange.com"),
    ]
    stats = json.loads((out / "beer.stackexchange.com" / "stats.json").read_text())
    assert stats["questions"] == 1029
    stamp = (out / "beer.stackexchange.com" / "stats.json").stat().st_mtime_ns
    assert main(["parse", str(dump), "--out", str(out), "--forums", "beer"]) == 0
    assert (out / "beer.stackexchange.com" / "stats.json").stat().st_mtime_ns == stamp


def test_bad_input_exits_2_with_one_line(bicycles_meta_dir, tmp_path, capsys):
    code = main(["parse", str(bicycles_meta_dir), "--out", str(tmp_path), "--forums", "bicycle"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        "adapter-zoo parse: error: unknown forum 'bicycle'; did you mean bicycles.meta?\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_forums_lists_a_set(capsys):
    assert main(["forums", "--set", "balanced"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 19 and lines[0].startswith("host")
    assert any(line.startswith("ell.stackexchange.com ") for line in lines)


def test_importing_the_package_and_its_cli_does_not_load_torch():
    code = "import sys, stackexchange, stackexchange.cli; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def _tree(folder):
    """Every file under ``folder`` (relative path -> bytes), hidden ones included."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_parse_refuses_an_output_that_is_or_contains_the_source(
    bicycles_meta_dir, tmp_path, copy_forum, capsys
):
    dump = tmp_path / "dump"
    forum = copy_forum(bicycles_meta_dir, dump / "bicycles.meta.stackexchange.com")
    before = _tree(tmp_path)
    for source, out in [(forum, forum), (forum, dump), (forum, tmp_path), (dump, dump)]:
        for extra in ([], ["--overwrite"]):
            code = main(["parse", str(source), "--out", str(out), *extra])
            assert code == 2
            assert capsys.readouterr().err == (
                f"adapter-zoo parse: error: {forum}: input inside or equal to the output "
                f"{out}; choose another output\n"
            )
    assert _tree(tmp_path) == before
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(
        ["dump", "bicycles.meta.stackexchange.com", "Posts.xml", "PostLinks.xml"]
    )


@pytest.mark.parametrize("users", ["folder", "file"])
def test_parse_never_moves_or_deletes_a_users_file_at_the_forum_name(
    bicycles_meta_dir, tmp_path, capsys, users
):
    out = tmp_path / "out"
    out.mkdir()
    if users == "folder":
        (out / "bicycles.meta.stackexchange.com").mkdir()
        (out / "bicycles.meta.stackexchange.com" / "notes.txt").write_text("mine")
    else:
        (out / "bicycles.meta.stackexchange.com").write_text("my file")
    (out / "beer.stackexchange.com").write_text("my file")
    before = _tree(out)
    for _ in range(2):  # the second run must not clean up anything of the first
        assert main(["parse", str(bicycles_meta_dir), "--out", str(out)]) == 2
        assert capsys.readouterr().err == (
            f"adapter-zoo parse: error: {out / 'bicycles.meta.stackexchange.com'}: already "
            "exists and is not a parsed forum written by adapter-zoo; move it away or pass "
            "--overwrite\n"
        )
    assert sorted(p.name for p in out.iterdir()) == [
        "beer.stackexchange.com", "bicycles.meta.stackexchange.com"]  # fmt: skip
    assert _tree(out) == before

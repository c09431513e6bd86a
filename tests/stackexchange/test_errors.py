"""Bad input → one DumpError naming the file (and line), and no output that looks complete."""

from __future__ import annotations

import pytest

import stackexchange
from stackexchange import DumpError


def _nothing_left(out):
    """No forum folder, no temporary folder: nothing that could pass for a parse."""
    return not out.exists() or list(out.iterdir()) == []


def test_truncated_archive(beer_archive, tmp_path):
    archive = tmp_path / "beer.stackexchange.com.7z"
    archive.write_bytes(beer_archive.read_bytes()[: beer_archive.stat().st_size // 2])
    with pytest.raises(DumpError, match=rf"^{archive}: corrupt or truncated 7z archive \("):
        stackexchange.parse_forum(archive, tmp_path / "out")
    assert _nothing_left(tmp_path / "out")


def test_corrupt_archive(beer_archive, tmp_path):
    data = bytearray(beer_archive.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096] = bytes(4096)  # zero a block of the compressed stream
    archive = tmp_path / "beer.stackexchange.com.7z"
    archive.write_bytes(bytes(data))
    with pytest.raises(DumpError, match=rf"^{archive}: corrupt or truncated 7z archive \("):
        stackexchange.parse_forum(archive, tmp_path / "out")
    assert _nothing_left(tmp_path / "out")


def test_archive_without_posts(bicycles_meta_dir, tmp_path):
    import py7zr

    archive = tmp_path / "tags.stackexchange.com.7z"
    with py7zr.SevenZipFile(archive, "w") as zipped:
        zipped.write(bicycles_meta_dir / "Tags.xml", "Tags.xml")
    with pytest.raises(DumpError) as error:
        stackexchange.parse_forum(archive, tmp_path / "out")
    assert str(error.value) == f"{archive}: the archive holds no Posts.xml"
    assert _nothing_left(tmp_path / "out")


@pytest.mark.parametrize("chunked", [False, True])
def test_malformed_xml_in_the_middle_names_file_and_line(
    bicycles_meta_dir, tmp_path, copy_forum, monkeypatch, chunked
):
    from stackexchange import chunks

    if chunked:  # the bad row lies in a later chunk, parsed by a worker process
        monkeypatch.setattr(chunks, "CHUNK_BYTES", 200_000)
    lines = (bicycles_meta_dir / "Posts.xml").read_text(encoding="utf-8-sig").split("\n")
    assert len(lines) > 1000
    assert ' Score="' in lines[700]
    lines[700] = lines[700].replace(' Score="', " Score=", 1)  # unquoted value: line 701
    folder = copy_forum(
        bicycles_meta_dir, tmp_path / "bicycles.meta.stackexchange.com", "\n".join(lines)
    )
    with pytest.raises(DumpError) as error:
        stackexchange.parse_forum(folder, tmp_path / "out", workers=2)
    message = str(error.value)
    assert message.startswith(
        "bicycles.meta.stackexchange.com:Posts.xml: malformed XML at line 701: "
    )
    assert "\n" not in message
    assert _nothing_left(tmp_path / "out")


def test_malformed_line_is_the_same_with_and_without_chunks(
    bicycles_meta_dir, tmp_path, copy_forum, monkeypatch
):
    from stackexchange import chunks

    lines = (bicycles_meta_dir / "Posts.xml").read_text(encoding="utf-8-sig").split("\n")
    assert ' Score="' in lines[900]
    lines[900] = lines[900].replace(' Score="', " Score=", 1)
    folder = copy_forum(bicycles_meta_dir, tmp_path / "x.stackexchange.com", "\n".join(lines))
    messages = []
    for chunk_bytes in (chunks.CHUNK_BYTES, 150_000):
        monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk_bytes)
        with pytest.raises(DumpError) as error:
            stackexchange.parse_forum(folder, tmp_path / "out", workers=2)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("x.stackexchange.com:Posts.xml: malformed XML at line 901:")


def test_truncated_posts_xml(bicycles_meta_dir, tmp_path, copy_forum):
    text = (bicycles_meta_dir / "Posts.xml").read_text(encoding="utf-8-sig")
    cut = text[: len(text) // 2]
    cut = cut[: cut.rindex("\n")]  # cut at a row boundary: every row parsed is whole
    folder = copy_forum(bicycles_meta_dir, tmp_path / "x.stackexchange.com", cut)
    with pytest.raises(DumpError) as error:
        stackexchange.parse_forum(folder, tmp_path / "out")
    lines = cut.count("\n") + 1
    assert str(error.value) == (
        f"x.stackexchange.com:Posts.xml: malformed XML at line {lines}: "
        "file ends before </posts> (truncated)"
    )
    assert _nothing_left(tmp_path / "out")


def test_missing_posts_xml(bicycles_meta_dir, tmp_path, copy_forum):
    folder = copy_forum(bicycles_meta_dir, tmp_path / "bicycles.meta.stackexchange.com")
    (folder / "Posts.xml").unlink()
    with pytest.raises(DumpError) as error:
        stackexchange.parse_forum(folder, tmp_path / "out")
    assert str(error.value) == f"{folder}: no Posts.xml in this folder"
    assert _nothing_left(tmp_path / "out")


def test_missing_source(tmp_path):
    with pytest.raises(DumpError) as error:
        stackexchange.parse_forum(tmp_path / "nope.stackexchange.com.7z", tmp_path / "out")
    assert (
        str(error.value)
        == f"{tmp_path / 'nope.stackexchange.com.7z'}: no such archive, folder or file"
    )


def test_empty_forum(bicycles_meta_dir, tmp_path, copy_forum):
    empty = '\ufeff<?xml version="1.0" encoding="utf-8"?>\n<posts>\n</posts>\n'
    folder = copy_forum(bicycles_meta_dir, tmp_path / "empty.stackexchange.com", empty)
    with pytest.raises(DumpError) as error:
        stackexchange.parse_forum(folder, tmp_path / "out")
    assert str(error.value) == (
        "empty.stackexchange.com:Posts.xml: no questions (PostTypeId=1) in this file: an empty forum"
    )
    assert _nothing_left(tmp_path / "out")


def test_unknown_forum_name(beer_archive, bicycles_meta_dir, tmp_path):
    from stackexchange.dump import parse_dump

    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / beer_archive.name).symlink_to(beer_archive)
    (dump / bicycles_meta_dir.name).symlink_to(bicycles_meta_dir)
    with pytest.raises(DumpError) as error:
        parse_dump(dump, tmp_path / "out", forums=["bicycles.meta", "beers"])
    assert str(error.value) == "unknown forum 'beers'; did you mean beer?"
    assert _nothing_left(tmp_path / "out")


def test_failed_overwrite_keeps_the_old_forum(
    bicycles_meta_dir, bicycles_meta_parsed, tmp_path, copy_forum
):
    import shutil

    out = tmp_path / "out"
    shutil.copytree(bicycles_meta_parsed, out / "bicycles.meta.stackexchange.com")
    folder = copy_forum(
        bicycles_meta_dir, tmp_path / "src" / "bicycles.meta.stackexchange.com", "<posts><row"
    )
    with pytest.raises(DumpError, match="malformed XML at line 1"):
        stackexchange.parse_forum(folder, out, overwrite=True)
    assert [p.name for p in out.iterdir()] == ["bicycles.meta.stackexchange.com"]
    assert stackexchange.read_stats(out / "bicycles.meta.stackexchange.com")["questions"] == 453


def test_score_too_large_for_64_bits_names_the_row(bicycles_meta_dir, tmp_path, copy_forum):
    text = (bicycles_meta_dir / "Posts.xml").read_text(encoding="utf-8-sig")
    first = text.index('<row Id="')
    row_id = text[first + 9 : text.index('"', first + 9)]
    score_at = text.index(' Score="', first) + len(' Score="')
    score_end = text.index('"', score_at)
    huge = "9" * 30
    text = text[:score_at] + huge + text[score_end:]
    folder = copy_forum(bicycles_meta_dir, tmp_path / "x.stackexchange.com", text)
    with pytest.raises(DumpError) as error:
        stackexchange.parse_forum(folder, tmp_path / "out")
    assert str(error.value) == (
        f"x.stackexchange.com:Posts.xml: row Id={row_id}: Score='{huge}' is not a 64-bit integer"
    )
    assert _nothing_left(tmp_path / "out")


def test_score_too_large_in_one_forum_lets_the_other_forums_parse(
    bicycles_meta_dir, tmp_path, copy_forum
):
    from stackexchange.dump import parse_dump

    text = (bicycles_meta_dir / "Posts.xml").read_text(encoding="utf-8-sig")
    score_at = text.index(' Score="') + len(' Score="')
    bad = text[:score_at] + "9" * 25 + text[text.index('"', score_at) :]
    dump = tmp_path / "dump"
    copy_forum(bicycles_meta_dir, dump / "bad.stackexchange.com", bad)
    copy_forum(bicycles_meta_dir, dump / "good.stackexchange.com")
    with pytest.raises(DumpError) as error:
        parse_dump(dump, tmp_path / "out", workers=2)
    message = str(error.value)
    assert message.startswith("1 of 2 forums failed; first: bad.stackexchange.com:Posts.xml: row ")
    assert message.endswith(f": Score='{'9' * 25}' is not a 64-bit integer")
    assert stackexchange.read_stats(tmp_path / "out" / "good.stackexchange.com")["questions"] == 453


def test_forum_whose_questions_all_lack_titles_is_an_error(bicycles_meta_dir, tmp_path, copy_forum):
    import re

    text = (bicycles_meta_dir / "Posts.xml").read_text(encoding="utf-8-sig")
    untitled = re.sub(r' Title="[^"]*"', "", text)
    assert untitled != text
    folder = copy_forum(bicycles_meta_dir, tmp_path / "x.stackexchange.com", untitled)
    with pytest.raises(DumpError) as error:
        stackexchange.parse_forum(folder, tmp_path / "out")
    assert str(error.value) == (
        "x.stackexchange.com:Posts.xml: none of the 453 questions (PostTypeId=1) has an Id "
        "and a Title: nothing to pair"
    )
    assert _nothing_left(tmp_path / "out")


def test_full_disk_error_names_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    import errno
    import os

    from stackexchange import io

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(io.os, "fsync", full)
    target = tmp_path / "stats.json"
    with pytest.raises(OSError) as error:
        io.atomic_write_json(target, {"a": 1})
    assert str(error.value) == f"[Errno 28] No space left on device: '{target}'"
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OSError) as error, io.atomic_directory(tmp_path / "forum"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert str(error.value) == f"[Errno 28] No space left on device: '{tmp_path / 'forum'}'"
    assert list(tmp_path.iterdir()) == []


def _raises(error: BaseException):
    def command():
        raise error

    return command


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (DumpError("x.7z: corrupt\nmore detail"), 2, "demo: error: x.7z: corrupt\n"),
        (
            PermissionError(13, "Permission denied"),
            2,
            "demo: error: [Errno 13] Permission denied\n",
        ),
        (KeyboardInterrupt(), 130, "demo: interrupted\n"),
    ],
    ids=["own-error", "os-error", "interrupt"],
)
def test_run_reported_puts_bad_input_on_one_line(capsys, error, status, line):
    from stackexchange.errors import run_reported

    assert run_reported("demo", _raises(error)) == status
    assert capsys.readouterr().err == line


def test_run_reported_keeps_a_bugs_traceback():
    from stackexchange.errors import run_reported

    with pytest.raises(TypeError, match="a bug"):
        run_reported("demo", _raises(TypeError("a bug")))

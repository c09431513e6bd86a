"""The fuzzers' findings, each kept as the minimized input that showed it, and the hostile
inputs the issue names (a billion laughs, a 10^6-deep nesting, decompression bombs), held
to the same rule as every fuzzed input (``fuzz_readers.run_input``).

The bombs run in a forked child whose address space may grow by :data:`GROWTH` at most:
the pytest process's own peak memory may already be higher than a bomb's, so only a bound
the child cannot pass shows that a reader reads in bounded memory.
"""

from __future__ import annotations

import json
import os
import resource
import tempfile
import zlib
from pathlib import Path

import fuzz_readers
import pytest
from fuzz_readers import BY_NAME, run_input

from adapter_zoo.onnx.cache import MANIFEST, verify_folder
from stackexchange.io import sha256_file

GROWTH = 512 << 20
DEEP_JSON = b"[" * 10**6
LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE posts [<!ENTITY a0 "ha">'
    + b"".join(b'<!ENTITY a%d "%s">' % (i, b"&a%d;" % (i - 1) * 10) for i in range(1, 10))
    + b']><posts><row Id="1" PostTypeId="1" Title="&a9;" Body="&a9;" /></posts>'
)


def _deflated(unit: bytes, times: int, head: bytes = b"") -> bytes:
    """A raw deflate stream of ``head`` then ``unit`` repeated ``times`` times, made in
    milliseconds: the unit's block, full-flushed so that it stands alone, repeated."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = packer.compress(head) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(unit) + packer.flush(zlib.Z_FULL_FLUSH)
    return start + block * times + packer.flush()


def gzip_bomb(unit: bytes, times: int, head: bytes = b"") -> bytes:
    """A .gz expanding to ``head + unit * times`` (no trailer: a reader that stops early
    never needs it, one that reads it all fails on memory first). The readers' writers
    keep an input that is gzip already as it is."""
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + _deflated(unit, times, head)


def _tar_header(name: str, size: int) -> bytes:
    fields = name.encode().ljust(100, b"\0") + b"0000644\0" + b"0000000\0" * 2
    fields += b"%011o\0" % size + b"00000000000\0" + b" " * 8 + b"0" + b"\0" * 100
    fields = fields.ljust(257, b"\0") + b"ustar\x0000"
    fields = fields.ljust(512, b"\0")
    checksum = b"%06o\0 " % sum(fields)
    return fields[:148] + checksum + fields[156:]


MEMBER = "02-extracted-arguments/test/culture/a/pro/pro01a-point.txt"

# (reader, input, why it is here): the fuzzers' findings first, as shrunk
CASES = [
    # found by tests/fuzz: libxml2's messages end lines inside ("CData section not
    # finished\n\n  <"), so the CLI's one line lost the rest; now one line, whole
    ("posts-xml", b"<posts>\n<![CDATA[\n\n  <row/>", "libxml2's message on one line"),
    ("mediqa-xml", b"<\x00", "libxml2's message on one line"),
    # found by tests/fuzz: the safetensors library's own error escaped (a header cut short)
    ("safetensors", b"", "a safetensors file cut short"),
    ("safetensors", b"\x10\x00\x00\x00\x00\x00\x00\x00{}garbage", "a header length that lies"),
    # found by tests/fuzz: tomllib recursed to a RecursionError
    ("recipe-toml", b'name = "x"\nv = ' + b"[" * 100_000, "TOML nested 10^5 deep"),
    # found while seeding the campaign: json.loads recursed to a RecursionError
    ("onnx-manifest", DEEP_JSON, "a manifest nested 10^6 deep"),
    # found by benchmarks/reliability/fuzz_campaign.py: a tar member's name holding a line break
    # broke the error about the archive cut short in its middle over two lines
    ("arguana-tar", _tar_header("a\nb.txt", 100) + b"x" * 10, "a member's name breaks lines"),
    # the hostile inputs, each reader of its format
    *[
        (name, DEEP_JSON, "JSON nested 10^6 deep")
        for name in ("adapt-jsonl", "zoo-card", "adapter-config", "results-jsonl")
    ],  # fmt: skip
    ("posts-xml", LAUGHS, "a billion laughs"),
    ("postlinks-xml", LAUGHS.replace(b"posts>", b"postlinks>"), "a billion laughs"),
    ("semeval-xml", LAUGHS.replace(b"posts>", b"xml>"), "a billion laughs"),
    ("mediqa-xml", LAUGHS, "a billion laughs"),
    ("posts-xml", b"<posts>" + b"<a>" * 100_000 + b"</posts>", "XML nested 10^5 deep"),
]


@pytest.mark.parametrize(("name", "data", "why"), CASES, ids=[f"{c[0]}: {c[2]}" for c in CASES])
def test_hostile_input_keeps_the_rule(name, data, why, seeds):
    seeds(BY_NAME[name])  # the reader's real files (the semeval gold, the forum's Posts.xml)
    with tempfile.TemporaryDirectory(prefix="fuzz-") as work:
        assert run_input(BY_NAME[name], data, Path(work)) is None


def _in_bounded_child(name: str, data: bytes) -> str | None:
    """``run_input`` in a forked child whose address space may grow by GROWTH at most."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: bounded, reports its finding through the pipe
        os.close(read)
        finding = "child failed"
        try:
            size = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            resource.setrlimit(resource.RLIMIT_AS, (size + GROWTH, size + GROWTH))
            with tempfile.TemporaryDirectory(prefix="fuzz-") as work:
                finding = run_input(BY_NAME[name], data, Path(work)) or ""
        except BaseException as error:  # MemoryError above all
            finding = f"{type(error).__name__}: {error}"
        finally:
            os.write(write, finding.encode()[:4000])
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        finding = pipe.read().decode()
    os.waitpid(pid, 0)
    return finding or None


BOMBS = [
    # found by tests/fuzz/test_findings.py: a 2 MB .gz whose first line is 2 GiB was read
    # whole into memory; lines are now bounded (benchmarks.datasets._io.MAX_LINE)
    ("wikiqa-tsv", gzip_bomb(b"a" * (1 << 20), 2048), "a .gz line of 2 GiB"),
    ("insuranceqa-gz", gzip_bomb(b"a" * (1 << 20), 2048), "a .gz line of 2 GiB"),
    # found by tests/fuzz/test_findings.py: a tar member of 2 GiB the reader did not want
    # was inflated to be skipped (over 10 s); any member over MAX_MEMBER is now refused
    # from its header (benchmarks.datasets._io)
    (
        "arguana-tar",
        gzip_bomb(b"\0" * (1 << 20), 2048, _tar_header(MEMBER, 2 << 30)),
        "a tar member of 2 GiB",
    ),  # fmt: skip
]


@pytest.mark.parametrize(("name", "data", "why"), BOMBS, ids=[f"{b[0]}: {b[2]}" for b in BOMBS])
def test_a_decompression_bomb_is_read_in_bounded_memory(name, data, why, seeds):
    seeds(BY_NAME[name])
    assert _in_bounded_child(name, data) is None


def test_the_bombs_expand_as_stated():
    """The bomb builders make what they claim (a test of the test: a dud bomb proves nothing)."""
    header = _tar_header(MEMBER, 2 << 30)
    expanded = zlib.decompressobj(-15).decompress(_deflated(b"a" * (1 << 20), 4, header))
    assert expanded == header + b"a" * (4 << 20)
    assert len(header) == 512 and int(header[124:135], 8) == 2 << 30
    assert gzip_bomb(b"a", 1).startswith(fuzz_readers.GZIP_MAGIC)


def test_an_onnx_manifest_naming_a_file_outside_its_folder_is_not_trusted(tmp_path):
    """Found while seeding the campaign: a manifest listing an absolute path with that
    file's true hash made the folder a complete export (only ``..`` was refused)."""
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"not the export")
    manifest = {"key": "k" * 64, "files": {str(outside): sha256_file(outside)}}
    (tmp_path / "export").mkdir()
    (tmp_path / "export" / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert verify_folder(tmp_path / "export", "k" * 64) == f"{outside} is missing"

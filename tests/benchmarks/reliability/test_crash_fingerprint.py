"""What the crash campaign compares across runs (benchmarks/reliability/crash_checks.fingerprint):
huggingface_hub's own probes, which a kill can leave behind, are not a run's outputs."""

from __future__ import annotations

import hashlib

from benchmarks.reliability.crash_checks import fingerprint


def test_hub_probes_left_by_a_kill_are_not_outputs(tmp_path):
    blob = tmp_path / "models--served--entry" / "blobs" / "a5fe01f2"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"weights")
    clean = fingerprint(tmp_path, tmp_path)
    # the symlink probe (are_symlinks_supported) and the permission probe (_chmod_and_move)
    probe = tmp_path / "models--served--entry" / "tmpa1eyoje1"
    probe.mkdir()
    (probe / "dummy_file_src").touch()
    (blob.parent / "tmp_0b6f2c4e-1a2b-4c3d-8e9f-0123456789ab").touch()
    assert fingerprint(tmp_path, tmp_path) == clean
    assert clean == {"models--served--entry/blobs/a5fe01f2": hashlib.sha256(b"weights").hexdigest()}
    (probe / "weights.bin").write_bytes(b"x")  # anything else in such a folder counts
    assert "models--served--entry/tmpa1eyoje1/weights.bin" in fingerprint(tmp_path, tmp_path)

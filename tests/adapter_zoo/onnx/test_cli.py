"""adapter-zoo export NAME --format onnx OUT: the folder, its card, exit codes, one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import adapter_zoo
from adapter_zoo.cli import main
from adapter_zoo.onnx.quantize import int8_file

from .conftest import PAIRS
from .test_layout import st_scores


@pytest.mark.parametrize("entry", ["bi_entry", "cross_entry"])
def test_export_onnx_writes_a_folder_sentence_transformers_opens(entry, request, tmp_path, capsys):
    path = request.getfixturevalue(entry)
    out = tmp_path / "out"
    assert main(["export", path.name, "--format", "onnx", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out} ")
    assert (out / "onnx/model.onnx").is_file() and (out / int8_file()).is_file()
    card = (out / "README.md").read_text()
    assert "`onnx/model.onnx` | fp32" in card and f"`{int8_file()}` | int8" in card
    assert json.loads((out / "adapter_zoo_export.json").read_text())["format"] == "onnx"
    bi = entry == "bi_entry"
    fp32 = adapter_zoo.load(str(path), precision="fp32").score(PAIRS)
    np.testing.assert_allclose(st_scores(out, bi), fp32, atol=1e-4)
    assert st_scores(out, bi, int8_file()).shape == fp32.shape
    # an earlier export is replaced
    assert main(["export", path.name, "--format", "onnx", "--out", str(out)]) == 0


def test_export_onnx_refusals_are_one_line(tmp_path, capsys):
    assert main(["export", "bm25", "--format", "onnx", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot export 'bm25' as ONNX: it is a " in err
    assert main(["export", "bm25", "--format", "onnx"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give the folder to write once" in err
    assert not (tmp_path / "x").exists()


def test_int8_is_a_scoring_precision_only(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["train", "--precision", "int8", "--forums", "beer"])
    assert raised.value.code == 2
    assert "invalid choice: 'int8'" in capsys.readouterr().err

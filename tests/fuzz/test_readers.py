"""Every reader fuzzed: inputs mutated from the real files' seeds, each held to
the rule of ``fuzz_readers.run_input`` (the project's own error naming the file, or data;
no other exception, hang, memory growth or stray write).

The mutations are what breaks files in the wild and in a stranger's hands: cut short, bytes
dropped, flipped or repeated, and the format's own words spliced in (entities, deep
brackets, byte-order marks, NULs, tabs). Settings are deterministic (``derandomize``, no
example database), so a CI run is the same run every time; the long coverage-guided search
is ``benchmarks/reliability/fuzz_campaign.py``'s.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import fuzz_readers
import pytest
from fuzz_readers import READERS, run_input
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# readers that parse a forum (Arrow files, a dataset on disk) cost ~30 ms an input, the
# others a few: CI time stays under a minute for the folder on 2 cores
SLOW = {"posts-xml", "postlinks-xml", "archive-7z"}
EXAMPLES = {name: 60 if name in SLOW else 200 for name in fuzz_readers.BY_NAME}


def fuzz_settings(examples: int) -> settings:
    """Deterministic settings for ``examples`` inputs."""
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,  # run_input bounds each input's time itself (TIME_BOUND)
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@st.composite
def mutated(draw, seeds: list[bytes], tokens: tuple[bytes, ...]) -> bytes:
    """A seed with up to four mutations."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(("cut", "drop", "token", "byte", "repeat")))
        if kind == "cut":
            del data[at:]
        elif kind == "drop":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "token" and tokens:
            data[at:at] = draw(st.sampled_from(tokens))
        elif kind == "byte":
            data[at:at] = draw(st.binary(min_size=1, max_size=4))
        else:
            data[at:at] = bytes(data[at : at + draw(st.integers(1, 32))]) * draw(st.integers(2, 50))
    return bytes(data)


def check(reader, data: bytes, *, must_read: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="fuzz-") as work:
        finding = run_input(reader, data, Path(work), must_read=must_read)
    assert finding is None, f"{reader.name}: {finding}"


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.name)
def test_reader_returns_data_or_its_own_error_naming_the_file(reader, seeds):
    """Each reader, a few hundred mutated inputs: the seeds themselves read, every other
    input is data or one line of the project's error naming the file."""
    corpus = seeds(reader)

    @fuzz_settings(EXAMPLES[reader.name])
    @given(mutated(corpus, reader.tokens))
    def fuzz(data: bytes) -> None:
        check(reader, data)

    for seed in corpus:
        check(reader, seed, must_read=True)
    fuzz()

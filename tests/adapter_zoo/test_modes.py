"""The table of modes (``adapter_zoo.modes.MODE_TABLE``) is the one source of training's modes,
encoders, layouts and default rates and of the entry kinds' encoders, card modes and layouts."""

from __future__ import annotations

import itertools

import pytest

from adapter_zoo.errors import ZooError
from adapter_zoo.kinds import get_kind, kind_for_card, registered_kinds
from adapter_zoo.kinds.entry import EntryKind
from adapter_zoo.modes import MODE_TABLE, rows_of_kind, training_row
from adapter_zoo.training import LEARNING_RATES, MODES, TrainingConfig, default_lr
from adapter_zoo.training.config import ENCODERS

TRAINED = [row for row in MODE_TABLE if row.trained]


def _config(encoder: str, mode: str) -> TrainingConfig:
    extra = {
        "fusion": {"adapters": ("a", "b")},
        "tanda": {"transfer_data": "transfer"},
    }.get(mode, {})
    return TrainingConfig(
        mode=mode, data="parsed", forums=("beer",), name="x", encoder=encoder, **extra
    )


def test_each_card_of_the_table_has_one_row():
    keys = [(row.encoder, row.mode, row.layout) for row in MODE_TABLE]
    assert len(keys) == len(set(keys))
    trained = [(row.encoder, row.mode) for row in TRAINED]
    assert len(trained) == len(set(trained))  # train writes one layout per (encoder, mode)


def test_every_encoder_and_mode_train_accepts_has_its_row():
    assert sorted(itertools.product(ENCODERS, MODES)) == sorted(
        (row.encoder, row.mode) for row in TRAINED
    )
    # the order the CLI offers and the errors name, as before the table
    assert MODES == ("adapter", "full", "multitask", "fusion", "tanda")
    assert ENCODERS == ("bi", "cross")


@pytest.mark.parametrize("row", TRAINED, ids=lambda row: f"{row.encoder}-{row.mode}")
def test_train_takes_its_layout_and_rate_from_the_table(row):
    config = _config(row.encoder, row.mode)
    assert config.layout == row.layout
    assert config.learning_rate == default_lr(row.encoder, row.mode) == row.lr
    assert LEARNING_RATES[row.encoder][row.mode] == row.lr
    assert training_row(row.encoder, row.mode) is row


def test_the_rates_are_the_tables_and_nothing_else():
    assert {(e, m): lr for e, rates in LEARNING_RATES.items() for m, lr in rates.items()} == {
        (row.encoder, row.mode): row.lr for row in TRAINED
    }
    with pytest.raises(ZooError) as error:
        default_lr("bi", "soup")  # a card adapt writes, never train
    assert str(error.value) == "no default learning rate for a bi-encoder in mode 'soup'"


def test_every_kind_of_the_table_is_a_registered_entry_kind_declared_there():
    named = {row.kind for row in MODE_TABLE}
    entry_kinds = {name for name, kind in registered_kinds().items() if isinstance(kind, EntryKind)}
    assert named == entry_kinds
    for name in named:
        kind, rows = get_kind(name), rows_of_kind(name)
        assert kind.card_modes == tuple(dict.fromkeys(row.mode for row in rows))
        assert {kind.layout} == {row.layout for row in rows}
        assert {kind.encoder} == {row.encoder for row in rows}


@pytest.mark.parametrize("row", MODE_TABLE, ids=lambda r: f"{r.encoder}-{r.mode}-{r.layout}")
def test_each_rows_card_opens_with_its_kind(row):
    card = {"mode": row.mode, "encoder": row.encoder, "layout": row.layout}
    assert kind_for_card(card).name == row.kind


def test_an_entry_kind_of_the_table_cannot_declare_its_modes_again():
    with pytest.raises(TypeError, match="card_modes comes from adapter_zoo.modes.MODE_TABLE"):

        class Again(EntryKind):
            name = "bi-adapter"
            card_modes = ("adapter",)

    class PlugIn(EntryKind):  # a kind the table does not name declares its own
        name = "plug-in"
        encoder = "bi"
        card_modes = ("plug",)

    assert (PlugIn.encoder, PlugIn.card_modes, PlugIn.layout) == ("bi", ("plug",), "adapter")

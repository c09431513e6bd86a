"""The answer stage's grids (adapter_zoo.adapt.fusion_choice) on hand-made lists whose right
answer is known: BM25's share where BM25 finds what the base misses, the default kept where a
small list set shows the same gain, feedback where several answers are relevant, none where
one is."""

from __future__ import annotations

import numpy as np
import pytest

from adapter_zoo.adapt.fusion_choice import (
    FEEDBACK_GRID,
    FEEDBACK_OFF,
    choose,
    choose_feedback,
    choose_fusion,
    fusion_points,
)
from adapter_zoo.fusion_defaults import BASE_FUSION_WEIGHTS, FUSION_WEIGHTS

# One list of five: the base puts its one relevant candidate (first) second, behind the
# second; BM25 puts it first. With z-scores BM25 needs a share above about 0.18 to lift it.
MISSED = (np.array([0.5, 0.6, 0.1, 0.2, 0.3]), np.array([1.0, 0.0, 0.0, 0.0, 0.0]))
# One the base ranks right and BM25 cannot hurt at any share tried (it agrees).
FOUND = (np.array([0.9, 0.6, 0.1, 0.2, 0.3]), np.array([1.0, 0.0, 0.0, 0.0, 0.0]))
LABELS = [1, 0, 0, 0, 0]


def _lists(missed: int, found: int):
    rows = [MISSED] * missed + [FOUND] * found
    base = np.concatenate([b for b, _ in rows])
    bm25 = np.concatenate([m for _, m in rows])
    return base, bm25, [LABELS] * len(rows), [5] * len(rows)


def test_bm25s_share_rises_where_bm25_finds_what_the_base_misses():
    base, bm25, labels, lists = _lists(missed=70, found=130)
    choice = choose_fusion([base], bm25, labels, lists=lists)
    assert choice.default == (*BASE_FUSION_WEIGHTS, "zscore")
    # the default's 0.1 leaves the missed lists at AP 0.5; any share from 0.2 finds them
    assert choice.default_map == pytest.approx((70 * 0.5 + 130) / 200)
    assert choice.replaced and choice.map == pytest.approx(1.0)
    assert choice.point[1] >= 0.2 and choice.point[0] + choice.point[1] == pytest.approx(1)
    assert choice.delta == pytest.approx(0.175) and choice.lower > 0
    card = choice.to_card(["base", "bm25", "normalisation"])
    assert card["replaced"] and card["default"] == {"base": 0.9, "bm25": 0.1,
                                                     "normalisation": "zscore"}  # fmt: skip
    assert card["points"] == len(fusion_points(1)) * 3 == 18


def test_a_small_list_set_keeps_the_default_for_the_same_gain():
    # the same share of lists BM25 rescues, on 7 lists: the best of 18 points is within the
    # noise once the grid's size is paid for
    base, bm25, labels, lists = _lists(missed=2, found=5)
    choice = choose_fusion([base], bm25, labels, lists=lists)
    assert choice.best_map > choice.default_map
    assert not choice.replaced and choice.point == choice.default
    assert choice.lower <= 0 < choice.delta


def test_two_members_weigh_the_better_one_up():
    # the candidate ranks every relevant answer first, by a small margin over the distractor
    # the base puts first: at equal weights the base wins, at 3:1 the candidate; BM25 is blind
    base, bm25, labels, lists = _lists(missed=100, found=100)
    bm25 = np.zeros_like(bm25)
    candidate = np.tile([0.56, 0.55, 0.5, 0.5, 0.5], 200)
    choice = choose_fusion([candidate, base], bm25, labels, lists=lists)
    assert choice.default == (*FUSION_WEIGHTS, "zscore")
    assert choice.replaced and choice.map == pytest.approx(1.0)
    assert choice.point[0] > choice.point[1]


def _unit(*rows):
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _vectors(candidates, copies):
    candidates = np.tile(candidates, (copies, 1))
    queries = np.tile([1.0, 0.0, 0.0], (len(candidates), 1))
    return queries, candidates


def test_feedback_where_several_answers_are_relevant():
    # two relevant answers near the query, a third relevant one near them but far from the
    # query, ranked below a distractor without feedback
    cands = _unit([1, 1, 0], [1, 1.1, 0], [0.5, 0, 1], [0.2, 1, 0])
    queries, candidates = _vectors(cands, 60)
    choice = choose_feedback(queries, candidates, [[1, 1, 0, 1]] * 60, lists=[4] * 60)
    assert choice.default == FEEDBACK_OFF
    assert choice.default_map == pytest.approx((1 + 1 + 3 / 4) / 3)
    assert choice.replaced and choice.point != FEEDBACK_OFF and choice.map == pytest.approx(1.0)
    assert choice.points == len(FEEDBACK_GRID)


def test_no_feedback_where_one_answer_is_relevant_and_its_neighbours_are_not():
    cands = _unit([1, 0, 1], [0.6, 1, 0], [0.6, 1.05, 0], [0, 1, 0])
    queries, candidates = _vectors(cands, 60)
    choice = choose_feedback(queries, candidates, [[1, 0, 0, 0]] * 60, lists=[4] * 60)
    assert choice.default_map == pytest.approx(1.0) and choice.best_map < 1.0 + 1e-12
    assert not choice.replaced and choice.point == FEEDBACK_OFF
    # feedback towards the three nearest would pull the query to the distractors
    k3 = choose_feedback(queries, candidates, [[1, 0, 0, 0]] * 60, lists=[4] * 60,
                         grid=[FEEDBACK_OFF, (3, 0.5)])  # fmt: skip
    assert k3.best == FEEDBACK_OFF


def test_choose_refuses_a_grid_without_its_default():
    with pytest.raises(ValueError) as error:
        choose({(1,): np.ones(3)}, (0,))
    assert str(error.value) == "the default point (0,) is not in the grid"

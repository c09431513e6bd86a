"""How adapt trains its candidates is an argument (LearnSettings), not a module global: a
study's batch reaches the budget's plan and each run's config."""

from __future__ import annotations

from pathlib import Path

from adapter_zoo.adapt import budget, stage_sizes
from adapter_zoo.adapt.candidate_training import BATCH, LearnSettings, own_steps, run_config
from adapter_zoo.adapt.heldout import RankingLists
from adapter_zoo.adapt.threads import Target, Thread

TRAINING = {"pairs": {"title_answer": 3000, "title_body": 1000}, "pair_kinds": ["title_body"]}
CACHED = {"mode": "adapter", "loss": "CachedMultipleNegativesRankingLoss"}


def _tokens(texts, cap) -> list[int]:
    """Every text 10 tokens (at most ``cap``)."""
    return [min(10, cap) for _ in texts]


def _sizes(settings) -> stage_sizes.Sizes:
    lists = RankingLists(["answer"], ["a question"], [["its answer", "another"]], [[1, 0]])
    threads = [Thread(i, f"title {i}", f"body {i}", f"answer {i}") for i in range(50)]
    target = Target(threads=threads, name="t")
    return stage_sizes.Sizes(_tokens, lists, [("q", ["p", "n"])], target, settings)


def test_a_batch_of_the_settings_reaches_the_plan(tiny_sentence_bert_path):
    base = str(tiny_sentence_bert_path)
    planned = {}
    for settings in (LearnSettings(), LearnSettings(batch=128)):
        sizes = _sizes(settings)
        # a training example reads its anchor, positive and hard negative: 10 tokens each
        assert sizes.step_tokens == settings.batch * 3 * 10
        stages = stage_sizes.stages(sizes, TRAINING, {}, {}, None, base, settings)
        assert stages.runs == {"own": own_steps(4000, settings.batch)}
        planned[settings.batch] = budget.plan(stages, budget.Rate(1e-6), None).steps["own"]
    # 3 passes over 4,000 pairs: 375 steps of 32, 96 of 128
    assert planned == {BATCH: 375, 128: 96}


def test_the_own_run_trains_as_the_settings_say_and_a_continued_run_an_adapter(tmp_path):
    settings = LearnSettings(batch=128, own_training=CACHED)
    forum = Path(tmp_path / "forum")
    own = run_config(forum, TRAINING, "t", "x--own", "minilm-l6", 0, None, settings)
    assert (own.batch_size, own.mode, own.loss) == (128, "adapter", CACHED["loss"])
    continued = run_config(forum, TRAINING, "t", "x--from-nearest", "minilm-l6", 0, "beer",
                           settings)  # fmt: skip
    assert (continued.batch_size, continued.init_from) == (128, "beer")
    assert continued.loss == run_config(forum, TRAINING, "t", "y", "minilm-l6", 0, None,
                                        LearnSettings()).loss  # fmt: skip

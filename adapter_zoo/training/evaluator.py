"""Dev selection as a sentence-transformers evaluator, which the library's trainers call
after each epoch and select the best checkpoint by (``metric_for_best_model="dev_map"``)."""

from __future__ import annotations

from sentence_transformers.base.evaluation import BaseEvaluator

from adapter_zoo.training.objective import dev_metrics


class DevListsEvaluator(BaseEvaluator):
    """Dev MAP and P@1 of a scorer over ranking lists whose first candidate is the positive.

    The numbers are :func:`adapter_zoo.training.objective.dev_metrics`' (the benchmarks' own:
    ties count as the expectation over their orders), so a card's dev score means what a
    benchmark score means; rankers that order ties otherwise (MTEB's, trec_eval's) differ
    exactly there (tests/benchmarks/test_mteb.py).

    Args:
        scorer: what scores the pairs (a :class:`adapter_zoo.ranker.Ranker` over the model
            being trained); it is left in the training mode it found.
        lists: (query, [positive, negative, ...]) dev lists.

    Example:
        >>> evaluator = DevListsEvaluator(ranker, lists)  # doctest: +SKIP
        >>> evaluator(cross_encoder)  # doctest: +SKIP
        {'dev_map': 0.61, 'dev_p@1': 0.45}
    """

    def __init__(self, scorer, lists):
        super().__init__()
        self.scorer, self.lists = scorer, lists
        self.primary_metric = "dev_map"

    def __call__(self, model, output_path=None, epoch=-1, steps=-1) -> dict:
        was_training = self.scorer.model.training
        try:
            return dev_metrics(self.scorer, self.lists)
        finally:
            self.scorer.model.train(was_training)

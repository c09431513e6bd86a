"""``adapter-zoo run RECIPE --verify``: a run's scores against the recipe's published and
expected numbers, OK or FAIL per metric (as pyserini's reproduction matrix does).

A recipe says in ``[published]`` which scores it reproduces and where the run keeps them::

    [published]
    source = "TANDA Table 3 ..."
    scores = { wikiqa = { map = 0.893, mrr = 0.903 } }   # the paper's
    expected = { wikiqa = { map = 0.88 } }                # ours, measured (optional)
    record = { benchmark = "{target}", mode = "finetune-tanda" }
    tolerance = 0.02                                      # absolute, default 0.02
    results = "{work}/results"                            # the default

``record`` picks the run's result record: its fields, with the recipe's variables filled in
(so a smoke run checks its own stand-in set). Without a ``benchmark`` there, each key of
``scores`` is the benchmark. The latest matching record counts, as on the leaderboard.

A recipe whose entries ship inside the package (``shipped_zoo``) checks its retrained entries
against the shipped ones instead: ``shipped = { benchmark = "local:{work}/bench/{forum_name}" }``
compares each shipped entry's card (``test_scores``: its MAP on each forum's test split) with
this run's record of the entry of that name on that forum's set (a full run only: a smoke run
trains another model).

Example:
    >>> rows = verify(load_recipe(find_recipe("tanda_wikiqa")), "outputs/tanda-wikiqa")  # doctest: +SKIP
    >>> print(format_rows(rows))  # doctest: +SKIP
    wikiqa map published 0.8930 run 0.8912 OK
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from recipes.recipe import Recipe, RecipeError
from recipes.runner import builtin_variables, fill, run_variables, work_folder

DEFAULT_TOLERANCE = 0.02


@dataclass(frozen=True)
class Check:
    """One metric of one benchmark: the number wanted, the run's, and whether they agree."""

    benchmark: str
    metric: str
    against: str  # "published", "expected" or "shipped"
    wanted: float
    got: float | None  # None: the run has no such record
    tolerance: float
    model: str = ""  # the model the record is of, where the check names one (shipped)

    @property
    def ok(self) -> bool:
        return self.got is not None and abs(self.got - self.wanted) <= self.tolerance


def verify(
    recipe: Recipe, work: str | os.PathLike | None = None, *, smoke: bool = False
) -> list[Check]:
    """The checks of ``recipe``'s published (and expected) scores against its run in ``work``.

    Raises:
        RecipeError: ``[published]`` is malformed, or the run left no results file.
    """
    from benchmarks.results import benchmark_key, read_results

    published = recipe.published
    work = work_folder(recipe, smoke, work)
    variables = run_variables(recipe, smoke, work, builtin_variables(work))

    where = f"{recipe.path}: [published]"
    selector = {
        key: fill(value, variables, where) for key, value in published.get("record", {}).items()
    }
    tolerance = published.get("tolerance", DEFAULT_TOLERANCE)
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or tolerance < 0:
        raise RecipeError(f"{recipe.path}: [published] tolerance must be a number >= 0")
    results = Path(fill(published.get("results", "{work}/results"), variables, where))
    try:
        records = read_results(results)
    except ValueError as error:  # BenchmarkError: no results file, or a torn line
        raise RecipeError(f"{recipe.path}: nothing to verify: {error}") from None
    checks = []
    for against in ("published", "expected"):
        table = published.get("scores" if against == "published" else "expected", {})
        for benchmark, metrics in table.items():
            # records name a built set by its absolute folder: so does the selector
            want = {**selector, "benchmark": benchmark_key(selector.get("benchmark", benchmark))}
            matching = [r for r in records if all(r.get(k) == v for k, v in want.items())]
            latest = matching[-1] if matching else None
            for metric, wanted in metrics.items():
                got = None if latest is None else latest["metrics"].get(metric)
                checks.append(
                    Check(benchmark, metric, against, float(wanted), got, float(tolerance))
                )
    if "shipped" in published and not smoke:
        checks += _shipped_checks(recipe, records, variables, float(tolerance))
    return checks


def _shipped_checks(recipe: Recipe, records: list, variables: dict, tolerance: float) -> list:
    """Each shipped entry this recipe made (its card's ``shipped.recipe``), on each forum's
    test split its card scores: the card's MAP against this run's record of the entry."""
    # the zoo's modules load only for a recipe that ships entries
    from adapter_zoo.zoo.store import read_card, shipped_home
    from benchmarks.results import benchmark_key
    from stackexchange.source import forum_short_name

    template = recipe.published["shipped"].get("benchmark", "")
    where = f"{recipe.path}: [published] shipped"
    home = shipped_home()
    folders = sorted(p for p in home.iterdir() if p.is_dir()) if home.is_dir() else []
    checks = []
    for folder in folders:
        card = read_card(folder)
        if (card.get("shipped") or {}).get("recipe") != recipe.path.stem:
            continue
        for host, row in card.get("test_scores", {}).items():
            scope = {**variables, "forum": host, "forum_name": forum_short_name(host)}
            key = benchmark_key(fill(template, scope, where))
            matching = [r for r in records if r.get("benchmark") == key and
                        r.get("model") == card["name"] and r.get("split") == "test"]  # fmt: skip
            got = matching[-1]["metrics"].get("map") if matching else None
            checks.append(
                Check(host, "map", "shipped", float(row["map"]), got, tolerance, card["name"])
            )
    return checks


def format_rows(checks: list[Check]) -> str:
    """One line per check: benchmark, metric, the number wanted, the run's, OK or FAIL."""
    lines = []
    for check in checks:
        got = "missing" if check.got is None else f"{check.got:.4f}"
        verdict = "OK" if check.ok else "FAIL"
        model = f"{check.model} on " if check.model else ""
        lines.append(
            f"{model}{check.benchmark} {check.metric} {check.against} {check.wanted:.4f} "
            f"run {got} (tolerance {check.tolerance:g}) {verdict}"
        )
    return "\n".join(lines)

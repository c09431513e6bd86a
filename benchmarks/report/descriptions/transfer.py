"""Transfer and adaptation: the shipped zoo, the leave-one-forum-out study, ``adapt`` on
unseen forums and outside domains, and its budget curve."""

from __future__ import annotations

from benchmarks.report.render import Column, Rows, Table, delta, forum, map_
from benchmarks.studies.adapt_study import MODELS as STUDY_MODELS


def _one_forum(r) -> bool:
    return len(r["entry"]["test_scores"]) == 1


def _mean(key: str):
    """The mean of ``key`` over an entry's forums."""
    return lambda r: (
        sum(s[key] for s in r["entry"]["test_scores"].values()) / len(r["entry"]["test_scores"])
    )


# The README's first table: the zoo a user gets, each shipped forum adapter on its own
# forum's test questions beside the zero-shot base and it fused with BM25, the gain over the
# zero-shot base with its 95% paired-bootstrap interval; the multi-task adapter as its mean
# over the forums it learnt from.
README_SHIPPED = Table(
    marker="readme-shipped",
    source="shipped_zoo",
    columns=tuple(map(Column, ("entry", "forum (test split)", "questions", "MAP",
                               "zero-shot base", "base + BM25", "vs zero-shot base [95%]"))),
    rows=(Rows("entries.<entry>", cells=(), then=(
        Rows("test_scores.<score>", where=_one_forum, cells=(
            "`{entry.key}`", "{score.key}", "{score[questions]}", "{score[map]:map}",
            "{score[zero_shot_map]:map}", "{score[fused_map]:map}",
            "{score[gain][zero_shot]:interval}")),
        Rows(where=lambda r: not _one_forum(r), cells=(
            "`{entry.key}`", lambda r: f"mean of its {len(r['entry']['test_scores'])} forums",
            lambda r: sum(s["questions"] for s in r["entry"]["test_scores"].values()),
            lambda r: map_(_mean("map")(r)), lambda r: map_(_mean("zero_shot_map")(r)),
            lambda r: map_(_mean("fused_map")(r)),
            lambda r: delta(_mean("map")(r) - _mean("zero_shot_map")(r)))),
    )),),
)  # fmt: skip


# the zero-shot model's row is its MAP, each other row the difference from it
def _matrix_rows(data: dict) -> list[list]:
    matrix, forums = data["matrix_map"], data["forums"]
    zero = matrix["sbert:minilm-l6"]
    rows = [["`sbert:minilm-l6` (its MAP)", *(f"{zero[f]:.3f}" for f in forums)]]
    for model, scores in matrix.items():
        if model == "sbert:minilm-l6":
            continue
        label = "multi-task over all eight" if model == "zoo-multitask" else f"`{model}`"
        cells = []
        for f in forums:
            text = delta(scores[f] - zero[f])
            trained = model == f or model == "zoo-multitask"
            cells.append(f"{text}†" if trained else text)
        rows.append([label, *cells])
    return rows


# Each shipped zoo model on each forum's every split: MAP minus the zero-shot model's (†: a
# forum the model was trained on).
TRANSFER_MATRIX = Table(
    marker="transfer-matrix",
    source="transfer",
    columns=(Column("model"),
             Column("{key:forum} ({study[$][questions]} q.)", over="forums")),
    rows=_matrix_rows,
)  # fmt: skip

STRATEGIES = ("nearest", "soup", "fusion", "route", "multitask")


# the forums come in the record's ``forums`` order, then three summary rows across them
def _strategies_rows(data: dict) -> list[list]:
    study, summary = data["study"], data["summary"]
    rows = []
    for name in data["forums"]:
        entry = study[name]
        zero = entry["strategies"]["zero-shot"]["map"]
        cells = [delta(entry["strategies"][s]["map"] - zero) for s in STRATEGIES]
        strategy, minimum = entry["auto"]["rule"]
        auto = f"{delta(entry['auto']['delta'])} ({strategy} ≥ {minimum})"
        rows.append(
            [forum(name), entry["questions"], f"{entry['best_similarity']:.2f}", *cells, auto]
        )
    names = (*STRATEGIES, "auto")
    rows.append(["**mean**", "", "", *(f"**{delta(summary[s]['mean_delta'], 4)}**" for s in names)])
    rows.append(["≥ zero-shot (of 8)", "", "", *(summary[s]["at_least_zero_shot"] for s in names)])
    rows.append(["worst", "", "", *(delta(summary[s]["worst"]) for s in names)])
    return rows


def _strategy_header(strategy: str):
    def header(data: dict) -> str:
        if strategy not in ("soup", "fusion", "route"):
            return strategy
        members = data["study"][data["forums"][0]]["strategies"][strategy]["members"]
        return f"{strategy} (top {len(members)})"

    return header


# The leave-one-forum-out study: each strategy's MAP minus the zero-shot model's.
TRANSFER_STRATEGIES = Table(
    marker="transfer-strategies",
    source="transfer",
    columns=(Column("left-out forum"), Column("questions"), Column("best similarity"),
             *(Column(_strategy_header(s)) for s in STRATEGIES),
             Column("auto (rule chosen on the other 7)")),
    rows=_strategies_rows,
)  # fmt: skip

_STUDY_HEADERS = dict(zip(STUDY_MODELS, ("base", "base + BM25", "centroid", "own adapter",
                                         "adapt"), strict=True))  # fmt: skip

# ``adapt`` on a forum the zoo never saw, against the base, on its test split.
ADAPT_STUDY = Table(
    marker="adapt-study",
    source="adapt_study",
    columns=(
        Column("left-out forum", "{forum.key:forum}"),
        Column("test questions", "{forum[questions]}"),
        *(Column(header, f"{{forum[map][{key}]:.3f}}") for key, header in _STUDY_HEADERS.items()),
        Column("adapt − base [95%]", "{forum[vs_base][adapt]:interval}"),
        Column("adapt chose", "`{forum[adapt][chosen]}`"),
    ),
    rows=(
        Rows("forums.<forum>"),
        Rows(cells=("**pooled ({summary[questions]} questions)**", "",
                    "{summary[base_pooled_map]:.3f}",
                    *(f"{{summary[{key}][pooled_map]:.3f}}" for key in STUDY_MODELS[1:]),
                    "**{summary[adapt][pooled_delta]:interval}**", "")),
    ),
)  # fmt: skip

_ADAPT_LABELS = {"fused": "zero-shot base fused with BM25 (no training)",
                 "centroid": "similarity rule (`--strategy centroid`)",
                 "own": "the forum's own adapter (40 steps)",
                 "adapt": "`adapt` (default `auto`: learns from the target's posts)"}  # fmt: skip

# The README's short adapt table: pooled over the study's forums.
README_ADAPT = Table(
    marker="readme-adapt",
    source="adapt_study",
    columns=(
        Column("{summary[forums]} forums left out, {summary[questions]} test questions"),
        Column("pooled MAP"),
        Column("vs base [95%]"),
        Column("worst forum"),
    ),
    rows=(
        Rows(cells=("zero-shot base", "{summary[base_pooled_map]:.3f}", "—", "—")),
        *(Rows(cells=(label, f"{{summary[{key}][pooled_map]:.3f}}",
                      f"{{summary[{key}][pooled_delta]:interval}}",
                      f"{{summary[{key}][worst_forum_delta]:delta}}"))
          for key, label in _ADAPT_LABELS.items()),
    ),
)  # fmt: skip


def _steps(r) -> str:
    run = r["point"]["own_run"] or {}
    return f"{run.get('steps_run', 0)} ({run.get('pairs_seen', 0):,} pairs)"


# ``adapt``'s budget curve: per learner, set and budget, the steps its own run trained, what
# it chose, and the test MAP of its entry against the zero-shot base fused with BM25 (the
# paired bootstrap's 95% interval), and of its own adapter.
ADAPT_CURVE = Table(
    marker="adapt-curve",
    source="adapt_budget_curve",
    rows="learners.<learner>.sets.<set>.<point:minutes>",
    columns=(
        Column("learner", "{learner.key}"),
        Column("set", "{set.key}"),
        Column("budget (min)", "{point[minutes]:g}", "--:"),
        Column("own run: steps", _steps, "--:"),
        Column("chose", "`{point[chosen]}`"),
        Column("fused MAP", "{point[map][fused]:.4f}", "--:"),
        Column("adapt MAP", "{point[map][adapt]:.4f}", "--:"),
        Column("adapt − fused [95%]", "{point[vs_fused][adapt]:interval}", "--:"),
        Column("own − fused", lambda r: delta(r["point"]["vs_fused"]["own"]["delta"])
               if "own" in r["point"]["vs_fused"] else "–", "--:"),
    ),
)  # fmt: skip


def _curve_learners(data: dict) -> dict:
    """The learners of the README's curve: the own run's variants are left to the docs'."""
    return {k: v for k, v in data["learners"].items() if "variant" not in v}


def _budgets(data: dict) -> list[float]:
    return sorted({p["minutes"] for runs in _curve_learners(data).values()
                   for points in runs["sets"].values() for p in points.values()})  # fmt: skip


# each budget is a column, and a set without a point at it shows "–"
def _curve_rows(data: dict) -> list[list]:
    rows = []
    for learner, runs in _curve_learners(data).items():
        for benchmark, points in runs["sets"].items():
            by_budget = {p["minutes"]: p for p in points.values()}
            cells = []
            for minutes in _budgets(data):
                p = by_budget.get(minutes)
                if p is None:
                    cells.append("–")
                    continue
                pairs = (p["own_run"] or {}).get("pairs_seen", 0)
                cells.append(f"{delta(p['vs_fused']['adapt']['delta'])} ({pairs:,})")
            rows.append([f"{benchmark}: {learner}", *cells])
    return rows


# The README's budget curve: per set and learner, ``adapt``'s test MAP minus the fused
# base's at each budget, with the pairs its own run saw.
README_CURVE = Table(
    marker="readme-curve",
    source="adapt_budget_curve",
    columns=(Column("adapt − fused base, test MAP (pairs trained)"),
             Column("{key:g} min", over=_budgets)),
    rows=_curve_rows,
)  # fmt: skip

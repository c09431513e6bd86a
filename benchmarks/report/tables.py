"""The Markdown tables of README.md and docs/, generated from the recorded results.

Every number the README and the documentation show in a table comes from here: from the
JSON the perf scripts wrote (``benchmarks/perf/results/*.json``), from the benchmark
registry's recorded scores (``benchmarks.get(name).published`` and ``.expected``) or from the
code's own constants. A page marks each generated table::

    <!-- table: NAME -->
    ...generated lines...
    <!-- /table: NAME -->

``python -m benchmarks.report`` rewrites every marked table of README.md and docs/;
``--check`` changes nothing and exits 1 when a page differs from what the results give
(``tests/test_readme_numbers.py`` checks the same).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from benchmarks.report.paths import RESULTS, ROOT

# the pages whose marked tables are generated
PAGES = ("README.md", "docs")
MARKED = re.compile(
    r"(<!-- table: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /table: (?P=name) -->)", re.S
)
SETS = {"beer": "beer", "bicycles": "bicycles.meta", "wikiqa": "WikiQA"}


def load(name: str) -> dict:
    """``results/NAME.json``."""
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


def _row(*cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header: Iterable[str], rows: Iterable[Iterable], align: str | None = None) -> str:
    header = list(header)
    rule = align or "|" + "---|" * len(header)
    return "\n".join([_row(*header), rule, *(_row(*r) for r in rows)])


def _map(value: float | None, best: float | None = None) -> str:
    if value is None:
        return "—"
    text = f"{value:.3f}"
    return f"**{text}**" if best is not None and round(value, 3) == round(best, 3) else text


def _delta(value: float, digits: int = 3) -> str:
    return f"{value:+.{digits}f}".replace("-", "−")


# ---------------------------------------------------------------- quality (quality.json)

QUALITY_LABELS = {
    "bm25": "BM25",
    "sbert:minilm-l6": "zero-shot all-MiniLM-L6-v2 bi-encoder (`sbert:minilm-l6`)",
    "beer-bi": "beer bi-encoder adapter (`beer-bi`)",
    "beer-bi-hard": "beer bi-encoder adapter, BM25 hard negatives (`beer-bi-hard`)",
    "bicycles-bi": "bicycles.meta bi-encoder adapter (`bicycles-bi`)",
    "multitask-bi": "multi-task bi-encoder adapter, both forums (`multitask-bi`)",
    "fusion-bi": "AdapterFusion of the two forum adapters (`fusion-bi`)",
    "beer-bi-full": "beer full bi-encoder fine-tune, the peer (`beer-bi-full`)",
    "beer-cross": "beer cross-encoder adapter (`beer-cross`)",
    "bicycles-cross": "bicycles.meta cross-encoder adapter (`bicycles-cross`)",
}


def _member(name: str) -> str:
    return "zero-shot" if name == "sbert:minilm-l6" else name


def _composition_label(name: str, composition: dict) -> str:
    members = [_member(m) for m in composition["members"]]
    if composition["how"] == "rerank":
        return f"`{name}`: {members[0]}'s top 10 reranked by {members[1]}"
    weights = " / ".join(f"{w:g}" for w in composition["weights"])
    forum = SETS[composition["forum"]]
    return f"`{name}`: fusion of {' + '.join(members)} (weights {weights}, chosen on {forum} dev)"


def quality_table() -> str:
    """Every model of the quality run's zoo table, each at its own length: test MAP on each
    held-out set."""
    data = load("quality")
    table, compositions = data["table"], data["compositions"]
    models = [m for m in table if not m.startswith("beer-bi-drop")]
    best = {s: max(table[m][s]["map"] for m in models if s in table[m]) for s in SETS}
    rows = []
    for model in models:
        label = QUALITY_LABELS.get(model) or _composition_label(model, compositions[model])
        rows.append([label, *(_map(table[model].get(s, {}).get("map"), best[s]) for s in SETS)])
    return _table(["model", *(f"{label} test MAP" for label in SETS.values())], rows)


def quality_choice_table() -> str:
    """The best model for each forum, chosen on its dev split, against the zero-shot model."""
    summary = load("quality")["summary"]["best_for_forum_chosen_on_dev"]
    rows = [
        [SETS[forum], f"`{pick['chosen_on_dev']}`", _map(pick["test_map"]),
         _map(pick["zero_shot_test_map"]), _delta(pick["gain"]), f"+{pick['target']}",
         "yes" if pick["gain"] >= pick["target"] else "**no**"]
        for forum, pick in summary.items()
    ]  # fmt: skip
    return _table(
        ["forum", "chosen on dev", "test MAP", "zero-shot", "gain", "target", "met"],
        rows,
    )


def length_table() -> str:
    """Dev and test MAP of the bi-encoders at 256 and 512 tokens."""
    rows_data = load("quality")["length_table"]["rows"]
    rows = []
    for model, forums in rows_data.items():
        cells = []
        for forum in ("beer", "bicycles"):
            for length in ("256", "512"):
                score = forums[forum][length]
                cells.append(f"{score['dev']:.3f} / {score['test']:.3f}")
        rows.append([QUALITY_LABELS[model], *cells])
    header = ["model (dev / test MAP)"] + [
        f"{SETS[f]} at {n}" for f in ("beer", "bicycles") for n in ("256", "512")
    ]
    return _table(header, rows)


def retrained_table() -> str:
    """The forum adapters as ``train`` makes them now (length chosen on dev)."""
    data = load("quality")
    rows = []
    for name, entry in data["length_table"]["retrained"].items():
        rows.append(
            [f"`{name}` ({SETS[entry['forum']]}'s, ranks at {entry['max_length']} tokens)"]
            + [
                f"{entry['test_map'][s]:.3f} ({_delta(entry['delta_vs_zero_shot'][s])})"
                for s in SETS
            ]
        )
    return _table(["adapter", *(f"{v} test MAP (vs zero-shot)" for v in SETS.values())], rows)


def lr_table() -> str:
    """beer's bi-encoder adapter at each learning rate: the dev curve and the test MAP."""
    rows = []
    for run in load("quality")["lr_table"]:
        if not run["lr"]:
            rows.append(["zero-shot base", "—", "—", _map(run["test_map"])])
            continue
        curve = ", ".join(f"{v:.3f}" for v in run["dev_map_by_step"].values())
        rows.append([f"{run['lr']:g}", curve, run["best_step"], _map(run["test_map"])])
    steps = ", ".join(next(r for r in load("quality")["lr_table"] if r["lr"])["dev_map_by_step"])
    return _table(
        ["learning rate", f"dev MAP at steps {steps}", "best step", "beer test MAP"], rows
    )


def drop_lower_table() -> str:
    """AdapterDrop: beer's bi-encoder adapter without adapters in the lowest k layers."""
    rows = [
        [run["drop_lower"], f"`{run['entry']}`", *(_map(run[s]) for s in SETS)]
        for run in load("quality")["drop_lower_table"]
    ]
    return _table(["k", "entry", *(f"{v} test MAP" for v in SETS.values())], rows)


def tanda_table() -> str:
    """TANDA with adapters on WikiQA: continued forum adapters against a new adapter."""
    tanda = load("quality")["tanda_table"]
    rows_data, gains = tanda["rows"], tanda["continued_minus_new"]
    starts = {"new": "new adapter"}
    for name in rows_data:
        if not name.startswith("new "):
            start = name.rsplit("-", 1)[0]
            label = "multi-task (both forums)" if start == "multitask" else SETS.get(start, start)
            starts[start] = f"{label} adapter"
    rows = []
    for start, label in starts.items():
        cells = []
        for encoder in ("bi", "cross"):
            name = f"new {encoder} adapter" if start == "new" else f"{start}-{encoder}"
            if name not in rows_data:
                cells.append("—")
                continue
            text = f"{rows_data[name]['mean_test_map']:.3f}"
            cells.append(text if start == "new" else f"{text} ({_delta(gains[name])})")
        rows.append([label, *cells])
    return _table(["start", "bi-encoder", "cross-encoder"], rows)


def lora_table() -> str:
    """LoRA against the SeqBn bottleneck on beer's bi-encoder adapter, same steps and rate."""
    lora = load("quality")["lora_table"]
    zero = lora["zero_shot"]
    rows = [["zero-shot all-MiniLM-L6-v2 (reference)", 0, f"{zero['beer_test_map']:.4f}",
             f"{zero['bicycles_test_map']:.4f}", "—", "—"]]  # fmt: skip
    seqbn = lora["rows"]["beer-bi"]["train_pairs_per_s"]
    for name, row in lora["rows"].items():
        speed = f"{row['train_pairs_per_s']}"
        if row["train_pairs_per_s"] != seqbn:
            speed += f" ({row['train_pairs_per_s'] / seqbn:.2f}×)"
        rows.append(
            [f"{row['method']} (`{name}`, best step {row['best_step']}, {row['max_length']} tokens)",
             f"{row['trainable_parameters']:,}", f"{row['beer_test_map']:.4f}",
             f"{row['bicycles_test_map']:.4f}", speed,
             f"{len(row['train_pairs_per_s_rounds'])} rounds"]
        )  # fmt: skip
    return _table(
        ["beer's bi-encoder adapter", "trainable parameters", "beer test MAP",
         "bicycles.meta test MAP", f"training pairs/s (batch {lora['batch_size']}, 128 tokens)",
         "speed measured"],
        rows,
    )  # fmt: skip


def cross_rerun_table() -> str:
    """The cross-encoder entries retrained on the current training path (CrossEncoderTrainer)."""
    rerun = load("quality")["cross_rerun"]
    rows = []
    for name, row in rerun["rows"].items():
        rows.append(
            [f"`{name}`"]
            + [
                f"{row['test_map'][s]['before']:.3f} → {row['test_map'][s]['after']:.3f}"
                for s in SETS
            ]
            + [f"{row['dev_map']['before']:.3f} → {row['dev_map']['after']:.3f}"]
        )
    return _table(
        ["entry (first path → CrossEncoderTrainer)", *(f"{v} test MAP" for v in SETS.values()),
         "dev MAP"],
        rows,
    )  # fmt: skip


def readme_quality_table() -> str:
    """The README's short table: the zoo's kinds of model as the code makes them now."""
    data = load("quality")
    table, zoo = data["table"], data["zoo"]
    rows_data = {
        "BM25": {s: table["bm25"][s]["map"] for s in SETS},
        "zero-shot MiniLM bi-encoder (`sbert:minilm-l6`), the model a user already has": {
            s: table["sbert:minilm-l6"][s]["map"] for s in SETS
        },
    }
    # the zoo table's forum adapters (quality.py --only zoo reruns them with today's code)
    for name in ("beer-bi", "bicycles-bi"):
        label = f"{SETS[name.split('-')[0]]} bi-encoder adapter (40 steps, ranks at "
        rows_data[label + f"{zoo[name]['max_length']} tokens)"] = {
            s: table[name][s]["map"] for s in SETS
        }
    for name in ("beer-cross", "bicycles-cross"):
        rows_data[f"{SETS[name.split('-')[0]]} cross-encoder adapter (60 steps)"] = {
            s: table[name][s]["map"] for s in SETS
        }
    best = {s: max(scores[s] for scores in rows_data.values()) for s in SETS}
    rows = [
        [label, *(_map(scores[s], best[s]) for s in SETS)] for label, scores in rows_data.items()
    ]
    return _table(["model (test MAP)", "beer", "bicycles.meta", "WikiQA"], rows)


# ------------------------------------------------ the shipped zoo and adapt (transfer, adapt)

SHORT = {"bicycles-meta": "bicycles.meta", "music-meta": "music.meta",
         "raspberrypi-meta": "raspberrypi.meta"}  # fmt: skip


def _forum(name: str) -> str:
    return SHORT.get(name, name)


def readme_shipped_table() -> str:
    """The README's first table: the zoo a user gets (``shipped_zoo.json``), each shipped
    forum adapter on its own forum's test questions beside the zero-shot base and it fused
    with BM25, the gain over the zero-shot base with its 95% paired-bootstrap interval; the
    multi-task adapter as its mean over the forums it learnt from."""
    data = load("shipped_zoo")
    rows = []
    for name, entry in data["entries"].items():
        scores = entry["test_scores"]
        if len(scores) == 1:
            ((host, row),) = scores.items()
            low, high = row["gain"]["zero_shot"]["interval"]
            rows.append([f"`{name}`", host, row["questions"], _map(row["map"]),
                         _map(row["zero_shot_map"]), _map(row["fused_map"]),
                         f"{_delta(row['gain']['zero_shot']['delta'])} "
                         f"[{_delta(low)}, {_delta(high)}]"])  # fmt: skip
            continue
        mean = {key: sum(r[key] for r in scores.values()) / len(scores)
                for key in ("map", "zero_shot_map", "fused_map")}  # fmt: skip
        rows.append([f"`{name}`", f"mean of its {len(scores)} forums",
                     sum(r["questions"] for r in scores.values()), _map(mean["map"]),
                     _map(mean["zero_shot_map"]), _map(mean["fused_map"]),
                     _delta(mean["map"] - mean["zero_shot_map"])])  # fmt: skip
    header = ["entry", "forum (test split)", "questions", "MAP", "zero-shot base",
              "base + BM25", "vs zero-shot base [95%]"]  # fmt: skip
    return _table(header, rows)


def transfer_matrix_table() -> str:
    """Each shipped zoo model on each forum's every split: MAP minus the zero-shot model's."""
    data = load("transfer")
    matrix, forums = data["matrix_map"], data["forums"]
    zero = matrix["sbert:minilm-l6"]
    rows = [["`sbert:minilm-l6` (its MAP)", *(f"{zero[f]:.3f}" for f in forums)]]
    for model, scores in matrix.items():
        if model == "sbert:minilm-l6":
            continue
        label = "multi-task over all eight" if model == "zoo-multitask" else f"`{model}`"
        cells = []
        for forum in forums:
            text = _delta(scores[forum] - zero[forum])
            trained = model == forum or model == "zoo-multitask"
            cells.append(f"{text}†" if trained else text)
        rows.append([label, *cells])
    questions = {f: data["study"][f]["questions"] for f in forums}
    header = ["model", *(f"{_forum(f)} ({questions[f]} q.)" for f in forums)]
    return _table(header, rows)


STRATEGIES = ("nearest", "soup", "fusion", "route", "multitask")


def transfer_strategies_table() -> str:
    """The leave-one-forum-out study: each strategy's MAP minus the zero-shot model's."""
    data = load("transfer")
    study, summary = data["study"], data["summary"]
    members = {s: len(study[data["forums"][0]]["strategies"][s]["members"]) for s in STRATEGIES}
    rows = []
    for forum in data["forums"]:
        entry = study[forum]
        zero = entry["strategies"]["zero-shot"]["map"]
        cells = [_delta(entry["strategies"][s]["map"] - zero) for s in STRATEGIES]
        strategy, minimum = entry["auto"]["rule"]
        auto = f"{_delta(entry['auto']['delta'])} ({strategy} ≥ {minimum})"
        rows.append(
            [_forum(forum), entry["questions"], f"{entry['best_similarity']:.2f}", *cells, auto]
        )
    names = (*STRATEGIES, "auto")
    rows.append(
        ["**mean**", "", "", *(f"**{_delta(summary[s]['mean_delta'], 4)}**" for s in names)]
    )
    rows.append(["≥ zero-shot (of 8)", "", "", *(summary[s]["at_least_zero_shot"] for s in names)])
    rows.append(["worst", "", "", *(_delta(summary[s]["worst"]) for s in names)])
    header = ["left-out forum", "questions", "best similarity"]
    header += [f"{s} (top {members[s]})" if s in ("soup", "fusion", "route") else s
               for s in STRATEGIES]  # fmt: skip
    return _table([*header, "auto (rule chosen on the other 7)"], rows)


def adapt_study_table() -> str:
    """``adapt`` on a forum the zoo never saw, against the base, on its test split."""
    from benchmarks.perf.adapt_study import MODELS as STUDY_MODELS

    data = load("adapt_study")
    rows = []
    for forum, entry in data["forums"].items():
        scores, vs = entry["map"], entry["vs_base"]["adapt"]
        low, high = vs["interval"]
        rows.append(
            [_forum(forum), entry["questions"], *(f"{scores[k]:.3f}" for k in STUDY_MODELS),
             f"{_delta(vs['delta'])} [{_delta(low)}, {_delta(high)}]", f"`{entry['adapt']['chosen']}`"]
        )  # fmt: skip
    summary = data["summary"]
    pooled = summary["adapt"]["pooled_delta"]
    low, high = pooled["interval"]
    rows.append(
        [f"**pooled ({summary['questions']} questions)**", "", f"{summary['base_pooled_map']:.3f}",
         *(f"{summary[k]['pooled_map']:.3f}" for k in STUDY_MODELS[1:]),
         f"**{_delta(pooled['delta'])} [{_delta(low)}, {_delta(high)}]**", ""]
    )  # fmt: skip
    return _table(
        ["left-out forum", "test questions", "base", "base + BM25", "centroid", "own adapter", "adapt",
         "adapt − base [95%]", "adapt chose"],
        rows,
    )  # fmt: skip


def readme_adapt_table() -> str:
    """The README's short adapt table: pooled over the study's forums."""
    data = load("adapt_study")
    summary = data["summary"]
    rows = [["zero-shot base", f"{summary['base_pooled_map']:.3f}", "—", "—"]]
    labels = {"fused": "zero-shot base fused with BM25 (no training)",
              "centroid": "similarity rule (`--strategy centroid`)",
              "own": "the forum's own adapter (40 steps)",
              "adapt": "`adapt` (default `auto`: learns from the target's posts)"}  # fmt: skip
    for key, label in labels.items():
        entry = summary[key]
        low, high = entry["pooled_delta"]["interval"]
        rows.append(
            [label, f"{entry['pooled_map']:.3f}",
             f"{_delta(entry['pooled_delta']['delta'])} [{_delta(low)}, {_delta(high)}]",
             _delta(entry["worst_forum_delta"])]
        )  # fmt: skip
    return _table(
        [f"{summary['forums']} forums left out, {summary['questions']} test questions",
         "pooled MAP", "vs base [95%]", "worst forum"],
        rows,
    )  # fmt: skip


_OUTSIDE_ROWS = {
    "bm25": "BM25",
    "base": "zero-shot base (`sbert:minilm-l6`)",
    "fused": "zero-shot base fused with BM25 (no training)",
    "zoo": "forum zoo, best similarity strategy (`route`)",
    "multitask": "forum zoo's multi-task adapter",
    "adapt": "`adapt` from the domain's own texts",
}


def _with_interval(vs: dict) -> str:
    low, high = vs["interval"]
    return f"{_delta(vs['delta'])} [{_delta(low)}, {_delta(high)}]"


def outside_study_table() -> str:
    """``adapt`` outside the base's home ground: test MAP per set and model, and each model
    against the zero-shot base fused with BM25 (paired bootstrap over test queries)."""
    data = load("outside_study")
    sets = data["sets"]
    summary = data["summary"]
    header = ["model (test MAP)", *(f"{name} ({row['queries']} q)" for name, row in sets.items()),
              "mean", "vs fused: mean over sets", "pooled vs fused [95%]"]  # fmt: skip
    rows = []
    for key, label in _OUTSIDE_ROWS.items():
        cells = [f"{row['map'][key]:.3f}" for row in sets.values()]
        entry = summary[key]
        rows.append(
            [label, *cells, f"{entry['mean_map']:.3f}",
             "—" if key == "fused" else _delta(entry["mean_delta_vs_fused"]),
             "—" if key == "fused" else _with_interval(entry["pooled_vs_fused"])]
        )  # fmt: skip
    rows.append(["`adapt` − fused [95%]", *(_with_interval(r["vs_fused"]["adapt"])
                                           for r in sets.values()), "", "", ""])  # fmt: skip
    rows.append(["`adapt` chose", *(f"`{r['adapt']['chosen']}`" for r in sets.values()),
                 "", "", ""])  # fmt: skip
    return _table(header, rows)


_OBJECTIVE_ROWS = {
    "none": "no pre-training",
    "mlm": "MLM only (the control)",
    "ssp": "SSP + MLM",
    "sp": "SP + MLM",
    "psd": "PSD + MLM",
    "zero-shot bi-encoder": "zero-shot all-MiniLM-L6-v2 bi-encoder",
    "bi-encoder + bm25": "the bi-encoder fused with BM25",
}


def sentence_objectives_table(name: str = "sentence_objectives") -> str:
    """WikiQA's clean test after each sentence-level objective (then equal fine-tuning):
    P@1, MAP, MRR, each against no pre-training (paired bootstrap, 95%)."""
    data = load(name)
    header = ["MiniLM cross-encoder, fine-tuned after", "P@1", "MAP", "MRR",
              "P@1 − none [95%]", "MAP − none [95%]", "MRR − none [95%]"]  # fmt: skip
    rows = []
    for key, label in _OBJECTIVE_ROWS.items():
        row = data["table"].get(key)
        if row is None:
            continue
        vs = row.get("vs_none")
        rows.append([label, *(f"{row[m]:.3f}" for m in ("p@1", "map", "mrr")),
                     *(_with_interval(vs[m]) if vs else "—" for m in ("p@1", "map", "mrr"))])  # fmt: skip
    return _table(header, rows)


def outside_agreement_table() -> str:
    """How often ``adapt``'s held-out lists predict the test sets: each candidate's gain over
    the base on its target's held-out lists against its gain on the test set."""
    data = load("outside_study")
    rows = []
    for name, row in data["sets"].items():
        for candidate, entry in row["candidates"].items():
            if candidate.startswith("base"):  # learned nothing: outside_study.agreement's rule
                continue
            rows.append(
                [name, f"`{candidate}`", _delta(entry["pseudo_dev_vs_base"]),
                 _delta(entry["pseudo_dev_lower"]), _with_interval(entry["test_vs_base"])]
            )  # fmt: skip
    agreement = data["agreement"]
    rows.append(
        [f"**{agreement['candidates']} candidates**", "", f"sign agrees: {agreement['sign_agrees']}",
         f"clear gain agrees: {agreement['clear_gain_agrees']}", ""]
    )  # fmt: skip
    return _table(
        ["set", "candidate", "held-out lists − base", "its lower bound", "test − base [95%]"],
        rows,
    )


def readme_outside_table() -> str:
    """The README's short outside-domain table: mean over the sets, against the fused base."""
    data = load("outside_study")
    summary = data["summary"]
    rows = []
    for key in ("base", "fused", "zoo", "adapt"):
        entry = summary[key]
        rows.append(
            [_OUTSIDE_ROWS[key], f"{entry['mean_map']:.3f}",
             "—" if key == "fused" else _with_interval(entry["pooled_vs_fused"]),
             "—" if key == "fused" else _delta(entry["worst_set_vs_fused"])]
        )  # fmt: skip
    return _table(
        [f"{summary['sets']} outside sets, {summary['queries']} test queries", "mean MAP",
         "pooled vs fused [95%]", "worst set vs fused"],
        rows,
    )  # fmt: skip


def answer_stage_table() -> str:
    """The answer stage without training on two outside sets: the base, its fusion with BM25
    at 0.9/0.1 and at the weight tuned on dev, and pseudo-relevance feedback on and off."""
    data = load("answer_stage")
    rows = []
    for name, entry in data["sets"].items():
        label = (f"{name} ({entry['test_questions']} q, {entry['relevant_per_question']} "
                 "relevant a q)")  # fmt: skip
        for row, value in entry["map"].items():
            rows.append(
                [label, row, f"{value:.3f}",
                 "—" if row == "base" else _with_interval(entry["vs_base"][row]),
                 "—" if row in ("base", "fused 0.9/0.1") else _with_interval(entry["vs_fused"][row])]
            )  # fmt: skip
            label = ""
        chosen = entry["chosen_on_dev"]
        feedback = chosen["feedback"]["chosen"]
        rows.append(
            ["", f"chosen on dev ({chosen['dev_lists']} lists)",
             f"`{chosen['fused_tuned_spec']}`; feedback "
             + ("off" if feedback["k"] == 0 else f"k={feedback['k']}, w={feedback['w']:g}"),
             "", ""]
        )  # fmt: skip
    return _table(["set", "row", "test MAP", "− base [95%]", "− fused 0.9/0.1 [95%]"], rows)


def answer_stage_timing_table() -> str:
    """Scoring the test pairs: a fused or fed-back answer against its members' scoring."""
    data = load("answer_stage")
    rows = []
    for name, entry in data["sets"].items():
        timing = entry["timing"]
        seconds = timing["seconds"]
        rows.append(
            [name, timing["pairs"], f"{seconds['base']:.2f}", f"{seconds['bm25']:.2f}",
             f"{seconds['fused']:.2f}", f"{timing['fused_over_members']:.2f}×",
             f"{seconds['prf']:.2f}", f"{timing['prf_over_base']:.2f}×"]
        )  # fmt: skip
    return _table(
        ["set", "pairs", "base s", "BM25 s", "fused s", "fused / members", "prf s", "prf / base"],
        rows,
    )


# ---------------------------------------------------------------- the other perf scripts


def recommend_table() -> str:
    """The recommender per real target: the sweep's best adapter and the recommendations."""
    data = load("recommend")

    def short(path: str) -> str:
        return Path(path).name

    rows = []
    for target in data["targets"]:
        best = short(target["best"])
        spread = max(target["sweep"].values()) - min(target["sweep"].values())
        rows.append(
            [target["target"], f"`{best}`", f"{spread:.3f}",
             ", ".join(f"**{short(p)}**" if short(p) == best else short(p) for p in target["similarity_top3"]),
             ", ".join(f"**{short(p)}**" if short(p) == best else short(p) for p in target["probe_top3"])]
        )  # fmt: skip
    return _table(
        ["target", "best adapter (full sweep)", "spread of the 5 adapters' MAP",
         "top 3 by similarity", "top 3 by the probe"],
        rows,
    )  # fmt: skip


def cascade_table() -> str:
    """The Cascade Transformer run: compute saved and P@1 lost at each α, per set."""
    data = load("cascade")
    rows = []
    for set_name, result in data["sets"].items():
        monolithic = result["rows"]["monolithic"]
        rows.append([set_name, result["queries"], "monolithic", f"{monolithic['p@1']:.3f}",
                     f"{monolithic['map']:.3f}", "—", "—", "1.00×"])  # fmt: skip
        for label, row in result["rows"].items():
            if not label.startswith("alpha=") or label == "alpha=0.0":
                continue
            rows.append(
                [set_name, result["queries"], label.replace("alpha", "α"), f"{row['p@1']:.3f}",
                 f"{row['map']:.3f}", f"{row['compute_saved']:.1%}",
                 f"{row['p@1_lost_points']:.1f}", f"{row['speedup_pairs_per_s']:.2f}×"]
            )  # fmt: skip
    return _table(
        ["set", "questions", "cascade", "P@1", "MAP", "compute saved", "P@1 lost (points)",
         "pairs/s vs monolithic"],
        rows,
    )  # fmt: skip


def train_memory_table() -> str:
    """Real ``adapter-zoo train`` runs: peak memory, wall time and dev selection's share."""
    data = load("train_memory")
    cases = data["setup"]["cases"]
    notes = {
        "checkpointed": "activations recomputed in backward, the whole batch at once",
        "chunked": "8 pairs (cross) / 8 texts (bi, GradCache) at a time; the cross-encoder "
        "rows ran the hand-written loop that CrossEncoderTrainer replaced",
        "cross-encoder-trainer": "the cross-encoder path before memory budgets: "
        "CrossEncoderTrainer, backward 8 pairs at a time",
        "budget": "today's code: the memory plan (in brackets) is the cheapest that fits "
        "the budget (`--memory-budget 2GB` / `512MB` in the -2gb / -512mb cases): plain, "
        "recompute, or bounded (GradCache / chunks of 8 pairs and recomputation)",
    }
    rows = []
    for label, runs in data["runs"].items():
        for case, run in runs.items():
            plan = run.get("memory")
            code = f"{label} ({plan['mode']})" if plan else label
            # wall time outside dev scoring (model loading included) per optimizer step
            per_step = (
                (run["wall_s"] - run["dev_selection_s"]) / run["steps"]
                if run.get("dev_selection_s") is not None and run.get("steps")
                else None
            )
            rows.append(
                [f"`{case}`", f"`{cases[case]}`", code, f"{run['peak_rss_gb']:.2f} GB",
                 f"{run['wall_s']:.0f} s", f"{run['dev_selection_share']:.0%}",
                 "—" if per_step is None else f"{per_step:.1f} s"]
            )  # fmt: skip
    legend = "\n".join(
        f"- `{label}`: {text}." for label, text in notes.items() if label in data["runs"]
    )
    table = _table(
        ["case", "`adapter-zoo train` options", "code", "peak RSS", "wall time",
         "dev selection's share", "s per step outside dev"],
        rows,
    )  # fmt: skip
    return f"{table}\n\n{legend}"


def html_to_text_table() -> str:
    """HTML → text libraries against ``stackexchange.html_to_text`` on the shipped forums."""
    data = load("html_to_text_candidates")
    forums = list(next(iter(data["candidates"].values()))["forums"])
    rows = []
    for name, candidate in data["candidates"].items():
        runs = candidate["forums"]
        rows.append(
            [name, candidate["version"]]
            + [f"{runs[f]['us_per_body']:.1f}" for f in forums]
            + [f"{runs[f]['identical']}/{runs[f]['bodies']}" for f in forums]
        )
    short = [f.removesuffix(".stackexchange.com") for f in forums]
    return _table(
        ["candidate", "version", *(f"µs/body {f}" for f in short),
         *(f"identical {f}" for f in short)],
        rows,
    )  # fmt: skip


def sentence_splitters_table() -> str:
    """Sentence segmenters on four real sources: sentences a second and agreement with
    hand-checked sentences (``sentence_splitters.json``)."""
    data = load("sentence_splitters")
    sources = list(next(iter(data["segmenters"].values()))["sources"])
    rows = []
    for name, row in data["segmenters"].items():
        gold, differ = row["gold"], row["gold_where_they_differ"]
        chosen = " (ours)" if name == data["chosen"] else ""
        rows.append(
            [f"{name}{chosen}", row["version"], f"{row['sentences_per_s']:,}"]
            + [f"{row['sources'][s]['sentences_per_s']:,}" for s in sources]
            + [f"{gold['exact']}/{gold['paragraphs']}", f"{gold['boundary_f1']:.3f}",
               f"{differ['exact']}/{differ['paragraphs']}"]
        )  # fmt: skip
    table = _table(
        ["segmenter", "version", "sentences/s", *(f"sentences/s {s}" for s in sources),
         "hand-checked paragraphs right", "boundary F1", "right where they differ"],
        rows,
    )  # fmt: skip
    agreed = ", ".join(f"{s} {n}" for s, n in data["all_agree_of_300"].items())
    machine = data["machine"]
    return (f"{table}\n\nAll three split alike in {agreed} of 300 paragraphs per source; "
            f"{machine['cpu']}, {machine['cpu_count']} cores.")  # fmt: skip


def objective_examples_table() -> str:
    """CPU seconds of reading documents and building each objective's examples on two real
    corpora (``objective_examples.json``)."""
    data = load("objective_examples")
    rows = []
    for corpus, row in data["corpora"].items():
        found = row["structure"]
        rows.append([f"{corpus} ({found['documents']:,} documents, {found['paragraphs']:,} "
                     f"paragraphs, {found['sentences']:,} sentences)", "read_documents", "—",
                     f"{row['read_s']:.2f}", "—", "—"])  # fmt: skip
        for objective, cell in row["objectives"].items():
            every, capped = cell["all"], cell["adapt_cap"]
            rows.append(["", objective, f"{every['examples']:,}", f"{every['seconds']:.2f}",
                         f"{every['with_hard_negative']:,}", f"{capped['seconds']:.2f}"])  # fmt: skip
    cap = data["arguments"]["adapt_cap"]
    return _table(
        ["corpus", "step", "examples", "CPU s", "with a hard negative",
         f"CPU s at adapt's cap ({cap:,})"],
        rows,
    )  # fmt: skip


def int8_table() -> str:
    """Scoring through ONNX Runtime (fp32 and int8) against torch fp32 and the peer,
    sentence-transformers' own int8 export of the same base (``int8.json``)."""
    data = load("int8")
    variants = {"torch_fp32": "torch fp32", "onnx_fp32": "ONNX fp32 (ours)",
                "onnx_int8": "ONNX int8 (ours)", "peer_int8": "sentence-transformers int8 (peer)"}  # fmt: skip
    rows = []
    for name, row in data["sets"].items():
        base = row["torch_fp32"]
        for key, label in variants.items():
            cell = row[key]
            moved = "—" if key == "torch_fp32" else f"{cell['lists_moved']}/{cell['lists']}"
            delta = "—" if key == "torch_fp32" else _delta(cell["map_delta"], 4)
            rows.append([f"{name} ({row['lists']} lists)", label, f"{cell['pairs_per_s']:.0f}",
                         f"{cell['pairs_per_s'] / base['pairs_per_s']:.2f}×",
                         f"{cell['map']:.4f}", delta, moved])  # fmt: skip
    return _table(
        ["set", "scoring", "pairs/s", "× torch fp32", "MAP", "Δ MAP", "lists' AP moved"], rows
    )


def semeval_table() -> str:
    """SemEval task 3 subtask B test MAP (points): the registry's recorded and published
    scores, and the model ``adapt`` made from QatarLiving's questions (``adapt_study.json``)."""
    import benchmarks

    columns = ("semeval2016", "semeval2017")
    cells: dict[str, dict[str, str]] = {}

    def put(row: str, column: str, value: str) -> None:
        cells.setdefault(row, {})[column] = value

    for column in columns:
        bench = benchmarks.get(column)
        for ref in bench.published:
            if ref.split != "test":
                continue
            label = {"ir-baseline": "IR baseline (the task's search engine order)"}.get(
                ref.model, ref.model
            )
            value = f"{100 * ref.metrics['map']:.2f}"
            system = re.fullmatch(r"(best system of the challenge) \((.+)\)", label)
            if system:  # one row for the challenge's best, whichever system it was
                label, value = system[1], f"{value} ({system[2]})"
            put(label, column, value)
        for (model, split), metrics in bench.expected.items():
            if split == "test":
                put(f"`{model}` (ours)", column, f"{100 * metrics['map']:.2f}")
    study = load("adapt_study")
    runs = {"semeval": "`adapt` on QatarLiving's train and dev questions, empty zoo",
            "semeval_zoo": "`adapt` on the same, the eight forum adapters as its zoo"}  # fmt: skip
    for key, label in runs.items():  # adapt_study.py's rows: the model adapt made, on each test
        for column in columns:
            for model, value in ((study.get(key) or {}).get(column) or {}).items():
                if model.startswith("adapt-"):
                    put(f"{label} (ours, adapt_study.json)", column, f"{100 * value:.2f}")
    rows = [[label, *(values.get(c, "–") for c in columns)] for label, values in cells.items()]
    return _table(
        ["model", "SemEval 2016 test", "SemEval 2017 test (ours: bodies only)"],
        rows,
        "|---|---:|---:|",
    )


OUTSIDE = ("arguana-01", "arguana-02", "arguana-05", "mediqa2019")
OUTSIDE_METRICS = ("map", "mrr", "p@1")


def outside_table() -> str:
    """Test MAP / MRR / P@1 on the sets outside the base model's domain (ArguAna, MEDIQA 2019
    Task 3): the registry's recorded (``expected``) and published scores; "–" where a source
    gives no such number."""
    import benchmarks

    cells: dict[str, dict[str, str]] = {}
    for column in OUTSIDE:
        bench = benchmarks.get(column)
        recorded = [
            (f"`{model}` (ours)", metrics)
            for (model, split), metrics in bench.expected.items()
            if split == "test"
        ]
        published = [(f"{ref.model} [{ref.source}]", ref.metrics)
                     for ref in bench.published if ref.split == "test"]  # fmt: skip
        for label, metrics in recorded + published:
            values = (f"{metrics[m]:.3f}" if m in metrics else "–" for m in OUTSIDE_METRICS)
            cells.setdefault(label, {})[column] = " / ".join(values)
    rows = [[label, *(values.get(c, "–") for c in OUTSIDE)] for label, values in cells.items()]
    return _table(["model (test MAP / MRR / P@1)", *OUTSIDE], rows, "|---|---:|---:|---:|---:|")


INSURANCEQA_LABELS = {
    "bm25": "`bm25`",
    "sbert:minilm-l6": "zero-shot all-MiniLM-L6-v2 bi-encoder (`sbert:minilm-l6`)",
    "fusion:sbert:minilm-l6*0.9+bm25*0.1": "zero-shot base fused with BM25 "
    "(`fusion:sbert:minilm-l6*0.9+bm25*0.1`)",
}
# the in-domain model's entry, as docs/benchmarks.md says to train it (evaluate --finetune)
INSURANCEQA_IN_DOMAIN = "insuranceqa-indomain"


def insuranceqa_table() -> str:
    """InsuranceQA v2 test (1,625 questions, 500 candidates each): our rows
    (``insuranceqa.json``, ``benchmarks/perf/insuranceqa.py``) in points, P@1 and MAP,
    beside MultiCQA's published accuracies (the registry's ``published``, P@1 only)."""
    import benchmarks
    from benchmarks.perf.outside_study import MULTITASK

    labels = {
        **INSURANCEQA_LABELS,
        MULTITASK: "forum zoo's multi-task adapter (eight shipped forums; zero-shot here)",
        INSURANCEQA_IN_DOMAIN: "in-domain: an adapter fine-tuned on the 12,889 training "
        "questions (`evaluate --finetune adapter`)",
    }
    data = load("insuranceqa")
    rows = []
    for key, row in data["rows"].items():
        model, _, precision = key.partition(" [")
        label = labels.get(model, f"`{model}`") + (f" [{precision}" if precision else "")
        if "adapt" in row and "strategy" in row["adapt"]:  # by similarity: nothing trained
            label = (f"forum zoo, `adapt --strategy {row['adapt']['requested']}`: chose "
                     + ", ".join(f"`{m}`" for m in row["adapt"]["members"]))  # fmt: skip
        elif "adapt" in row:
            adapt = row["adapt"]
            runs = (adapt["training"].get("runs") or {}).values()
            steps = sum(r["steps_run"] for r in runs)
            label = (f"`adapt` from InsuranceQA's own texts, {adapt['budget_minutes']:g}-minute "
                     f"budget: {steps} steps trained, chose `{adapt['chosen']}`")  # fmt: skip
        rows.append([label, "ours", f"{100 * row['p@1']:.1f}", f"{100 * row['map']:.1f}"])
    for ref in benchmarks.get("insuranceqa").published:
        rows.append([ref.model, "published", f"{100 * ref.metrics['p@1']:.1f}", "–"])
    smoke = f": a smoke run, the first {data['limit']}" if data["limit"] else ""
    return _table(
        ["model", "source", f"test P@1 ({data['queries']:,} questions{smoke})", "test MAP"],
        rows,
        "|---|---|---:|---:|",
    )


BEIR_LABELS = {
    "bm25": "`bm25` (bm25s: k1=1.5, b=0.75, no stemming)",
    "sbert:minilm-l6": "zero-shot all-MiniLM-L6-v2 bi-encoder (`sbert:minilm-l6`)",
    "fusion:sbert:minilm-l6*0.9+bm25*0.1": "zero-shot base fused with BM25 "
    "(`fusion:sbert:minilm-l6*0.9+bm25*0.1`), re-ranking the union of their top 100",
}


def beir_arguana_table() -> str:
    """ArguAna's test debates as a BEIR folder, scored through ``beir:``
    (``beir_arguana.json``, ``benchmarks/perf/beir_arguana.py``): our rows with the 95%
    bootstrap interval of nDCG@10 and its paired difference from the fused base, bm25s at
    Pyserini's settings on the same folder, and the published BM25 numbers on BEIR's."""
    data = load("beir_arguana")

    def cells(metrics: dict) -> list[str]:
        return [
            f"{metrics[m]:.3f}" if m in metrics else "–" for m in ("map", "mrr@10", "recall@100")
        ]

    rows = []
    for model, row in data["rows"].items():
        low, high = row["ndcg@10_interval"]
        paired = row.get("ndcg@10_vs_fused")
        versus = "–"
        if paired:
            a, b = paired["interval"]
            versus = f"{_delta(paired['delta'])} [{_delta(a)}, {_delta(b)}]"
        rows.append([BEIR_LABELS.get(model, f"`{model}`"), "ours",
                     f"{row['metrics']['ndcg@10']:.3f} [{low:.3f}, {high:.3f}]", versus,
                     *cells(row["metrics"]), f"{row['seconds']:.0f}"])  # fmt: skip
    for model, label in BEIR_LABELS.items():
        if model not in data["rows"]:
            rows.append([label, "not in this record", "–", "–", "–", "–", "–", ""])
    for name, metrics in data["bm25s_at_pyserini_settings"].items():
        rows.append([name, "ours, same folder", f"{metrics['ndcg@10']:.3f}", "–",
                     *cells(metrics), ""])  # fmt: skip
    for ref in data["published"]:
        rows.append([ref["model"], "published, BEIR's folder", f"{ref['metrics']['ndcg@10']:.3f}",
                     "–", *cells(ref["metrics"]), ""])  # fmt: skip
    folder, machine = data["folder"], data["machine"]
    smoke = (
        f", a smoke run: the first {data['arguments']['limit']}"
        if data["arguments"]["limit"]
        else ""
    )
    return _table(
        ["model", "source",
         f"nDCG@10 [95%] ({data['queries']:,} queries, {folder['documents']:,} documents{smoke})",
         "− fused base, paired [95%]", "MAP", "MRR@10", "Recall@100",
         f"seconds ({machine['cpu_count']} cores)"],
        rows,
        "|---|---|---:|---:|---:|---:|---:|---:|",
    )  # fmt: skip


def readme_insuranceqa_table() -> str:
    """The README's InsuranceQA v2: our P@1 (``insuranceqa.json``) by kind of model beside
    MultiCQA's published accuracies of the same kind (the registry's ``published``; ``–``
    where a kind has no row)."""
    import benchmarks
    from benchmarks.perf.insuranceqa import FUSED, ZERO_SHOT, row_name
    from benchmarks.perf.outside_study import MULTITASK

    data = load("insuranceqa")
    rows = data["rows"]
    published = benchmarks.get("insuranceqa").published

    def ours(key: str) -> str:
        if key not in rows:
            return "–"
        int8 = rows.get(row_name(key, "int8"))
        return f"{100 * rows[key]['p@1']:.1f}" + (
            f" (int8 {100 * int8['p@1']:.1f})" if int8 else ""
        )

    def theirs(kind: str, forums: bool | None = None) -> str:
        """Published rows of ``kind``; ``forums``: only MultiCQA's (trained on forums), or
        only the others."""
        refs = [r for r in published if kind in r.model]
        if forums is not None:
            refs = [r for r in refs if r.model.startswith("MultiCQA") == forums]
        return (
            ", ".join(
                f"{r.model.replace(f' ({kind})', '')} {100 * r.metrics['p@1']:.1f}" for r in refs
            )
            or "–"
        )

    def latest(by_similarity: bool) -> tuple[str, dict] | None:
        made = [(k, r) for k, r in rows.items() if "adapt" in r]
        made = [(k, r) for k, r in made if ("strategy" in r["adapt"]) == by_similarity]
        return made[-1] if made else None

    adapt_row = ["`adapt` from its own texts, empty zoo", "–", "–"]
    if (learned := latest(by_similarity=False)) is not None:
        key, row = learned
        adapt = row["adapt"]
        adapt_row = [f"`adapt` from its own texts, empty zoo ({adapt['budget_minutes']:g} "
                     f"minutes; chose `{adapt['chosen']}`)", ours(key), "–"]  # fmt: skip
    # the zoo's single adapter for the domain, picked by similarity (no label read)
    nearest_row = ["forum zoo's nearest adapter (`adapt --strategy nearest`)", "–", "–"]
    if (nearest := latest(by_similarity=True)) is not None:
        key, row = nearest
        chose = ", ".join(f"`{m}`" for m in row["adapt"]["members"])
        nearest_row = [f"forum zoo's nearest adapter (`adapt --strategy "
                       f"{row['adapt']['requested']}`: {chose})", ours(key), "–"]  # fmt: skip
    table = [
        ["BM25", ours("bm25"), theirs("IR baseline")],
        ["zero-shot bi-encoder", ours(ZERO_SHOT), theirs("zero-shot", forums=False)],
        ["zero-shot bi-encoder fused with BM25", ours(FUSED), "–"],
        ["forum zoo's multi-task adapter (eight forums; MultiCQA's: 140)", ours(MULTITASK),
         theirs("zero-shot", forums=True)],
        nearest_row,
        adapt_row,
        ["in-domain (fine-tuned on its 12,889 training questions)",
         ours(INSURANCEQA_IN_DOMAIN), theirs("in-domain")],
    ]  # fmt: skip
    return _table(
        [f"InsuranceQA v2 test, P@1 ({data['queries']:,} questions, 500 candidates)",
         "ours (MiniLM)", "MultiCQA's Table 4 (published)"],
        table,
    )  # fmt: skip


def adapt_curve_table() -> str:
    """``adapt``'s budget curve (``adapt_budget_curve.json``): per learner, set and budget,
    the steps its own run trained, what it chose, and the test MAP of its entry against the
    zero-shot base fused with BM25 (the paired bootstrap's 95% interval), and of its own
    adapter."""
    data = load("adapt_budget_curve")
    rows = []
    for learner, runs in data["learners"].items():
        for benchmark, points in runs["sets"].items():
            for p in sorted(points.values(), key=lambda p: p["minutes"]):
                run, vs = p["own_run"] or {}, p["vs_fused"]
                own = _delta(vs["own"]["delta"]) if "own" in vs else "–"
                rows.append([
                    learner, benchmark, f"{p['minutes']:g}",
                    f"{run.get('steps_run', 0)} ({run.get('pairs_seen', 0):,} pairs)",
                    f"`{p['chosen']}`", f"{p['map']['fused']:.4f}", f"{p['map']['adapt']:.4f}",
                    _with_interval(vs["adapt"]), own,
                ])  # fmt: skip
    return _table(
        ["learner", "set", "budget (min)", "own run: steps", "chose", "fused MAP", "adapt MAP",
         "adapt − fused [95%]", "own − fused"],
        rows,
        "|---|---|--:|--:|---|--:|--:|--:|--:|",
    )  # fmt: skip


def readme_curve_table() -> str:
    """The README's budget curve: per set and learner (the variants of the own run left to
    the docs' table), ``adapt``'s test MAP minus the fused base's at each budget, with the
    pairs its own run saw."""
    data = load("adapt_budget_curve")
    learners = {k: v for k, v in data["learners"].items() if "variant" not in v}
    budgets = sorted({p["minutes"] for runs in learners.values()
                      for points in runs["sets"].values() for p in points.values()})  # fmt: skip
    rows = []
    for learner, runs in learners.items():
        for benchmark, points in runs["sets"].items():
            by_budget = {p["minutes"]: p for p in points.values()}
            cells = []
            for minutes in budgets:
                p = by_budget.get(minutes)
                if p is None:
                    cells.append("–")
                    continue
                pairs = (p["own_run"] or {}).get("pairs_seen", 0)
                cells.append(f"{_delta(p['vs_fused']['adapt']['delta'])} ({pairs:,})")
            rows.append([f"{benchmark}: {learner}", *cells])
    return _table(["adapt − fused base, test MAP (pairs trained)",
                   *(f"{m:g} min" for m in budgets)], rows)  # fmt: skip


def learning_rates_table() -> str:
    """``adapter_zoo.training.rates.LEARNING_RATES``: the default rate by encoder and mode."""
    from adapter_zoo.training.rates import LEARNING_RATES

    modes = list(LEARNING_RATES["cross"])
    rows = [
        [f"`{encoder}`", *(f"{rates[m]:g}" for m in modes)]
        for encoder, rates in LEARNING_RATES.items()
    ]
    return _table(["encoder", *(f"`{m}`" for m in modes)], rows)


def perf_table() -> str:
    from benchmarks.report.cli import table

    return table()


# the README's rows of the performance table: (row, what it measures, in a few words)
README_PERF_ROWS = (
    ("`train_infer` training (drop lower 0)", "adapter training, pairs/s vs full fine-tuning"),
    ("`train_infer` training (drop lower 3)", "the same, AdapterDrop k = 3"),
    ("`train_infer` inference", "Ranker.score vs CrossEncoder.predict, pairs/s"),
    ("`sweep` (drop lower 3)", "8 adapters in one shared pass vs 8 passes"),
    ("`cascade` wikiqa α=0.4", "Cascade Transformer: compute saved; P@1 lost"),
    ("`parse_throughput` (chunk workers = cores)", "parse, MB/s (peak RSS) vs bare lxml"),
    ("`train_memory` bi-default (chunked)", "default bi-encoder `train`: peak RSS, time"),
    ("`train_memory` cross-default (cross-encoder-trainer)", "default cross-encoder `train`"),
    (
        "`train_throughput` arguana, upper-4 vs today",
        "adapt's learner, adapters in the top 2 of 6 layers (frozen layers cached) vs all 6: "
        "pairs/s (a later epoch's); selection MAP after equal pairs",
    ),
    ("`quickstart_time` quickstart", "`adapter-zoo quickstart` as a user runs it"),
)


def readme_perf_table() -> str:
    """The README's short performance table: a few rows of the full one (docs/performance.md)
    with the measurement said in a few words."""
    rows = {}
    for line in perf_table().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        rows.setdefault(cells[0], cells)  # the first train_infer inference row: drop lower 0
    picked = []
    for label, what in README_PERF_ROWS:
        cells = rows[label]
        picked.append([cells[0], what, cells[2], cells[4], cells[5], cells[6], cells[7]])
    return _table(["benchmark", "measured", "ours", "ratio", "target", "met", "machine"], picked)


# ---------------------------------------------------------------- crash (crash_campaign.json)

CRASH_COMMANDS = {
    "parse": "`parse` (3 forums, `--workers 1`)",
    "parse-pool": "`parse` (3 forums, 2 worker processes)",
    "train-bi": "`train` bi-encoder adapter",
    "train-cross": "`train` cross-encoder adapter",
    "adapt": "`adapt --strategy soup`",
    "build": "`build` (a forum's entry from its dump)",
    "build-benchmark": "`build-benchmark`",
    "evaluate": "`evaluate` (3 models)",
    "compose": "`compose` (fusion chosen on dev)",
    "push": "`push` (to olah's repositories)",
    "pull": "`pull` (from olah)",
    "run": "`run multicqa_indomain_bert --smoke`",
}


def crash_table() -> str:
    """The crash campaign (``crash_campaign.json``): per command, the kills (at a seeded
    fraction of the run's time, or right after its k-th file-system change), the trials whose
    every check held, and what the uninterrupted run took."""
    data = load("crash_campaign")
    rows = []
    for name, row in data["commands"].items():
        kinds = row["kills_by_kind"]
        rows.append([
            CRASH_COMMANDS.get(name, f"`{name}`"), row["kills"], kinds.get("clock", 0),
            kinds.get("io", 0), f"{row['survived']} of {row['trials']}",
            f"{row['uninterrupted_seconds']:.0f}", row["file_system_changes"],
        ])  # fmt: skip
    total = sum(r["kills"] for r in data["commands"].values())
    survived = sum(r["survived"] for r in data["commands"].values())
    trials = sum(r["trials"] for r in data["commands"].values())
    rows.append(["**all**", f"**{total}**", "", "", f"**{survived} of {trials}**", "", ""])
    header = ["command", "kills", "by time", "after a write", "trials that held",
              "uninterrupted s", "file-system changes"]  # fmt: skip
    return _table(header, rows, "|---|--:|--:|--:|--:|--:|--:|")


# ---------------------------------------------------------------- fuzz (fuzz_campaign.json)


def fuzz_table() -> str:
    """The fuzzing campaign (``fuzz_campaign.json``): per reader, the inputs Atheris ran, the
    project's lines and arcs its seeds reach and those its corpus reaches, the findings and
    the seconds; then the whole campaign with its chip, date and hours, and how many readers
    reached the inputs aimed at."""
    data = load("fuzz_campaign")
    readers = data["readers"]
    rows = []
    for name, row in readers.items():
        seeds, corpus = row["coverage"]["seeds"], row["coverage"]["corpus"]
        rows.append([
            f"`{name}`: {row['what']}", f"{row['inputs']:,}",
            f"{seeds['lines']:,} → {corpus['lines']:,}", f"{seeds['arcs']:,} → {corpus['arcs']:,}",
            row["corpus"], len(row["findings"]), f"{row['seconds']:.0f}",
        ])  # fmt: skip
    machine, target = data["machine"], data["target_inputs_per_reader"]
    met = sum(row["inputs"] >= target for row in readers.values())
    total = sum(row["inputs"] for row in readers.values())
    found = sum(len(row["findings"]) for row in readers.values())
    rows.append([
        f"**all** ({data['tool'].split(',')[0]}; {machine['cpu']}, {machine['cpu_count']} cores, "
        f"{machine['date'][:10]}, {data['hours']} h; {met} of {len(readers)} readers reached "
        f"{target:,} inputs)", f"**{total:,}**", "", "", "", f"**{found}**", "",
    ])  # fmt: skip
    header = ["reader", "inputs", "lines: seeds → corpus", "arcs: seeds → corpus",
              "corpus files", "findings", "seconds"]  # fmt: skip
    return _table(header, rows, "|---|--:|--:|--:|--:|--:|--:|")


def ci_time_table() -> str:
    """``.ci/run`` on a clean clone: each stage's time, then the slowest tests with the
    decision recorded for each (``benchmarks/perf/ci_time.py``)."""
    data = load("ci_time")
    machine = data["machine"]
    chip = f"{machine['cpu']} ({', '.join(machine['cpu_flags'])}), {machine['cpu_count']} cores"
    stages = ", ".join(f"{name} {seconds} s" for name, seconds in data["stages"].items())
    rows = [["all of `.ci/run`", f"{data['wall_time_s']:.0f}", f"{chip}, {machine['date'][:10]}, "
             f"commit {data['commit'][:7]}: {stages}; {data['passed']} passed, "
             f"{data['failed']} failed"]]  # fmt: skip
    for test in data["slowest"][:25]:
        rows.append([f"`{test['test']}` ({test['when']})", f"{test['seconds']:.1f}",
                     test["decision"] or "**no decision recorded**"])  # fmt: skip
    return _table(["what", "seconds", "decision"], rows, "|---|--:|---|")


TABLES: dict[str, Callable[[], str]] = {
    "perf": perf_table,
    "readme-perf": readme_perf_table,
    "readme-quality": readme_quality_table,
    "readme-shipped": readme_shipped_table,
    "readme-adapt": readme_adapt_table,
    "quality": quality_table,
    "quality-choice": quality_choice_table,
    "quality-length": length_table,
    "quality-retrained": retrained_table,
    "quality-lr": lr_table,
    "quality-drop-lower": drop_lower_table,
    "quality-tanda": tanda_table,
    "quality-lora": lora_table,
    "quality-cross-rerun": cross_rerun_table,
    "transfer-matrix": transfer_matrix_table,
    "transfer-strategies": transfer_strategies_table,
    "adapt-study": adapt_study_table,
    "outside-study": outside_study_table,
    "outside-agreement": outside_agreement_table,
    "sentence-objectives": sentence_objectives_table,
    "sentence-objectives-long": lambda: sentence_objectives_table("sentence_objectives_long"),
    "readme-outside": readme_outside_table,
    "answer-stage": answer_stage_table,
    "answer-stage-timing": answer_stage_timing_table,
    "recommend": recommend_table,
    "cascade": cascade_table,
    "train-memory": train_memory_table,
    "html-to-text": html_to_text_table,
    "sentence-splitters": sentence_splitters_table,
    "objective-examples": objective_examples_table,
    "int8": int8_table,
    "semeval": semeval_table,
    "outside": outside_table,
    "insuranceqa": insuranceqa_table,
    "beir-arguana": beir_arguana_table,
    "adapt-curve": adapt_curve_table,
    "readme-curve": readme_curve_table,
    "readme-insuranceqa": readme_insuranceqa_table,
    "learning-rates": learning_rates_table,
    "crash": crash_table,
    "fuzz": fuzz_table,
    "ci-time": ci_time_table,
}


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page of docs/."""
    found = []
    for name in PAGES:
        path = root / name
        found += sorted(path.rglob("*.md")) if path.is_dir() else [path]
    return found


def fill(text: str, where: str = "") -> str:
    """``text`` with every marked table generated afresh (an unknown name is an error)."""

    def generate(match: re.Match) -> str:
        name = match["name"]
        if name not in TABLES:
            raise KeyError(f"{where}: unknown table {name!r}; known: {', '.join(TABLES)}")
        return f"{match[1]}{TABLES[name]()}\n{match[4]}"

    return MARKED.sub(generate, text)


def marked_tables(text: str) -> dict[str, str]:
    """Name -> the lines a page holds between a table's markers."""
    return {m["name"]: m["body"] for m in MARKED.finditer(text)}


def stale_pages(root: Path = ROOT) -> list[Path]:
    """The pages whose marked tables differ from what the results give now."""
    return [
        p
        for p in pages(root)
        if fill(p.read_text(encoding="utf-8"), str(p)) != p.read_text(encoding="utf-8")
    ]


def write_pages(root: Path = ROOT) -> list[Path]:
    """Regenerate every marked table in place; return the pages that changed."""
    changed = []
    for path in pages(root):
        text = path.read_text(encoding="utf-8")
        new = fill(text, str(path))
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed

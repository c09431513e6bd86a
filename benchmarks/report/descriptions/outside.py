"""Outside the base model's home ground (``outside_study.json``, ``answer_stage.json``,
``answer_time.json``, ``sentence_objectives*.json``): ``adapt`` and the answer stage on other domains."""

from __future__ import annotations

from benchmarks.report.render import Column, Rows, Table, delta, interval

_OUTSIDE_ROWS = {
    "bm25": "BM25",
    "base": "zero-shot base (`sbert:minilm-l6`)",
    "fused": "zero-shot base fused with BM25 at 0.9/0.1 (no training)",
    "fused_tuned": "zero-shot base fused with BM25, tuned on the decision lists (no training)",
    "prf": "zero-shot base with pseudo-relevance feedback (no training)",
    "zoo": "forum zoo, best similarity strategy (`route`)",
    "multitask": "forum zoo's multi-task adapter",
    "adapt": "`adapt` from the domain's own texts",
}


def _versus(entry: dict, key: str, baseline: str) -> list[str]:
    if key == baseline:
        return ["—", "—"]
    return [delta(entry[f"mean_delta_vs_{baseline}"]), interval(entry[f"pooled_vs_{baseline}"])]


def _feedback(row: dict) -> str:
    stage = row["adapt"]["answer_stage"]["feedback"]["chosen"]
    chosen = "off" if stage["k"] == 0 else f"k={stage['k']}, w={stage['w']:g}"
    gain = row["map"]["prf"] - row["map"]["base"]
    return f"{chosen} (test: {delta(gain)})"


# a row per model and a column per set: the models are the study's, not the record's keys
def _outside_study_rows(data: dict) -> list[list]:
    sets, summary = data["sets"], data["summary"]
    rows = []
    for key, label in _OUTSIDE_ROWS.items():
        entry = summary[key]
        rows.append(
            [label, *(f"{row['map'][key]:.3f}" for row in sets.values()), f"{entry['mean_map']:.3f}",
             *_versus(entry, key, "fused"), *_versus(entry, key, "fused_tuned")]
        )  # fmt: skip
    blank = ["", "", "", "", ""]
    rows.append(["`adapt` − fused [95%]", *(interval(r["vs_fused"]["adapt"])
                                           for r in sets.values()), *blank])  # fmt: skip
    rows.append(["`adapt` − fused tuned [95%]", *(interval(r["vs_fused_tuned"]["adapt"])
                                                 for r in sets.values()), *blank])  # fmt: skip
    rows.append(["`adapt` chose", *(f"`{r['adapt']['chosen']}`" for r in sets.values()), *blank])
    rows.append(["feedback `adapt` chose", *map(_feedback, sets.values()), *blank])
    return rows


# ``adapt`` outside the base's home ground: test MAP per set and model, and each model
# against the zero-shot base fused with BM25 at the fixed 0.9/0.1 and at its tuned weight
# (paired bootstrap over test queries).
OUTSIDE_STUDY = Table(
    marker="outside-study",
    source="outside_study",
    columns=(Column("model (test MAP)"), Column("$ ({sets[$][queries]} q)", over="sets"),
             Column("mean"), Column("vs fused: mean over sets"),
             Column("pooled vs fused [95%]"), Column("vs fused tuned: mean"),
             Column("pooled vs fused tuned [95%]")),
    rows=_outside_study_rows,
)  # fmt: skip

# How often ``adapt``'s held-out lists predict the test sets: each candidate's gain over the
# base on its target's held-out lists against its gain on the test set.
OUTSIDE_AGREEMENT = Table(
    marker="outside-agreement",
    source="outside_study",
    columns=(
        Column("set", "{set.key}"),
        Column("candidate", "`{candidate.key}`"),
        Column("held-out lists − base", "{candidate[pseudo_dev_vs_base]:delta}"),
        Column("its lower bound", "{candidate[pseudo_dev_lower]:delta}"),
        Column("test − base [95%]", "{candidate[test_vs_base]:interval}"),
    ),
    rows=(
        # a base candidate learned nothing: outside_study.agreement's rule
        Rows("sets.<set>.candidates.<candidate>",
             where=lambda r: not r["candidate"].key.startswith("base")),
        Rows(cells=("**{agreement[candidates]} candidates**", "",
                    "sign agrees: {agreement[sign_agrees]}",
                    "clear gain agrees: {agreement[clear_gain_agrees]}", "")),
    ),
)  # fmt: skip

# The README's short outside-domain table: mean over the sets, against both fused bases.
README_OUTSIDE = Table(
    marker="readme-outside",
    source="outside_study",
    columns=(Column("{summary[sets]} outside sets, {summary[queries]} test queries"),
             Column("mean MAP"), Column("pooled vs fused 0.9/0.1 [95%]"),
             Column("pooled vs fused tuned [95%]"), Column("worst set vs fused tuned")),
    rows=tuple(
        Rows(cells=(_OUTSIDE_ROWS[key], f"{{summary[{key}][mean_map]:.3f}}",
                    "—" if key == "fused" else f"{{summary[{key}][pooled_vs_fused]:interval}}",
                    *(("—", "—") if key == "fused_tuned" else (
                        f"{{summary[{key}][pooled_vs_fused_tuned]:interval}}",
                        f"{{summary[{key}][worst_set_vs_fused_tuned]:delta}}"))))
        for key in ("base", "fused", "fused_tuned", "adapt")
    ),
)  # fmt: skip

_OBJECTIVE_ROWS = {
    "none": "no pre-training",
    "mlm": "MLM only (the control)",
    "ssp": "SSP + MLM",
    "sp": "SP + MLM",
    "psd": "PSD + MLM",
    "zero-shot bi-encoder": "zero-shot all-MiniLM-L6-v2 bi-encoder",
    "bi-encoder + bm25": "the bi-encoder fused with BM25",
}
METRICS = ("p@1", "map", "mrr")


def _objective_row(key: str, label: str) -> Rows:
    """An objective's row, when the record has it: its scores, and each against no
    pre-training (the no pre-training row itself has no such interval)."""

    def versus(metric: str):
        def cell(r) -> str:
            vs = r["table"][key].get("vs_none")
            return interval(vs[metric]) if vs else "—"

        return cell

    return Rows(
        cells=(label, *(f"{{table[{key}][{m}]:.3f}}" for m in METRICS), *map(versus, METRICS)),
        where=lambda r: key in r["table"],
    )


def _objectives(marker: str, source: str) -> Table:
    """WikiQA's clean test after each sentence-level objective (then equal fine-tuning): P@1,
    MAP, MRR, each against no pre-training (paired bootstrap, 95%)."""
    return Table(
        marker=marker,
        source=source,
        columns=tuple(map(Column, ("MiniLM cross-encoder, fine-tuned after", "P@1", "MAP", "MRR",
                                   "P@1 − none [95%]", "MAP − none [95%]", "MRR − none [95%]"))),
        rows=tuple(_objective_row(key, label) for key, label in _OBJECTIVE_ROWS.items()),
    )  # fmt: skip


SENTENCE_OBJECTIVES = _objectives("sentence-objectives", "sentence_objectives")
SENTENCE_OBJECTIVES_LONG = _objectives("sentence-objectives-long", "sentence_objectives_long")


def _stage_set(r) -> str:
    entry = r["set"]
    if r["row"].index:  # the set is named on its first row only
        return ""
    return (f"{entry.key} ({entry['test_questions']} q, {entry['relevant_per_question']} "
            "relevant a q)")  # fmt: skip


def _stage_chosen(r) -> str:
    chosen = r["set"]["chosen_on_dev"]
    feedback = chosen["feedback"]["chosen"]
    return f"`{chosen['fused_tuned_spec']}`; feedback " + (
        "off" if feedback["k"] == 0 else f"k={feedback['k']}, w={feedback['w']:g}"
    )


# The answer stage without training on two outside sets: the base, its fusion with BM25 at
# 0.9/0.1 and at the weight tuned on dev, and pseudo-relevance feedback on and off.
ANSWER_STAGE = Table(
    marker="answer-stage",
    source="answer_stage",
    columns=(
        Column("set", _stage_set),
        Column("row", "{row.key}"),
        Column("test MAP", "{row:.3f}"),
        Column("− base [95%]", lambda r: "—" if r["row"].key == "base"
               else interval(r["set"]["vs_base"][r["row"].key])),
        Column("− fused 0.9/0.1 [95%]", lambda r: "—" if r["row"].key in ("base", "fused 0.9/0.1")
               else interval(r["set"]["vs_fused"][r["row"].key])),
    ),
    rows=(
        Rows("sets.<set>", cells=(), then=(
            Rows("map.<row>"),
            Rows(cells=("", "chosen on dev ({set[chosen_on_dev][dev_lists]} lists)", _stage_chosen,
                        "", "")),
        )),
    ),
)  # fmt: skip

# Scoring the same test pairs (benchmarks/speed/answer_time.py): a fused or fed-back answer
# against its members' scoring, in the same run.
ANSWER_STAGE_TIMING = Table(
    marker="answer-stage-timing",
    source="answer_time",
    rows="sets.<set>",
    columns=(
        Column("set", "{set.key}"),
        Column("pairs", "{set[pairs]}"),
        Column("base s", "{set[seconds][base]:.2f}"),
        Column("BM25 s", "{set[seconds][bm25]:.2f}"),
        Column("fused s", "{set[seconds][fused]:.2f}"),
        Column("fused / members", "{set[over_members][fused]:.3f}×"),
        Column("prf s", "{set[seconds][prf]:.2f}"),
        Column("prf / base", "{set[over_members][prf]:.3f}×"),
        Column("within 10%", "{set[meets_target]:met}"),
    ),
)

"""Every marked table's description, by its marker: :data:`TABLES`.

A description says what a table shows (:class:`benchmarks.report.render.Table`); the
renderer makes its Markdown. The modules hold them by the records they read.
"""

from __future__ import annotations

from benchmarks.report.descriptions import (
    benchmarks,
    outside,
    perf,
    quality,
    reliability,
    speed,
    transfer,
)
from benchmarks.report.render import Table

TABLES: dict[str, Table] = {
    table.marker: table
    for table in (
        perf.PERF,
        perf.README_PERF,
        quality.README_QUALITY,
        transfer.README_SHIPPED,
        transfer.README_ADAPT,
        quality.QUALITY,
        quality.QUALITY_CHOICE,
        quality.QUALITY_LENGTH,
        quality.QUALITY_RETRAINED,
        quality.QUALITY_LR,
        quality.QUALITY_DROP_LOWER,
        quality.QUALITY_TANDA,
        quality.QUALITY_LORA,
        quality.QUALITY_CROSS_RERUN,
        transfer.TRANSFER_MATRIX,
        transfer.TRANSFER_STRATEGIES,
        transfer.ADAPT_STUDY,
        outside.OUTSIDE_STUDY,
        outside.OUTSIDE_AGREEMENT,
        outside.SENTENCE_OBJECTIVES,
        outside.SENTENCE_OBJECTIVES_LONG,
        outside.README_OUTSIDE,
        outside.ANSWER_STAGE,
        outside.ANSWER_STAGE_TIMING,
        speed.RECOMMEND,
        speed.CASCADE,
        speed.TRAIN_MEMORY,
        speed.ATTENTION_DROPOUT,
        speed.HTML_TO_TEXT,
        speed.SENTENCE_SPLITTERS,
        speed.OBJECTIVE_EXAMPLES,
        speed.INT8,
        benchmarks.SEMEVAL_TABLE,
        benchmarks.OUTSIDE_TABLE,
        benchmarks.INSURANCEQA,
        benchmarks.BEIR_ARGUANA,
        transfer.ADAPT_CURVE,
        transfer.README_CURVE,
        benchmarks.README_INSURANCEQA,
        speed.LEARNING_RATES_TABLE,
        reliability.CRASH,
        reliability.FUZZ,
        speed.CI_TIME,
    )
}

"""One module per benchmark family; importing this package registers them all."""

from benchmarks.datasets import (  # noqa: F401
    arguana,
    askubuntu,
    asnq,
    beir,
    insuranceqa,
    las,
    local,
    mediqa2019,
    semeval,
    trecqa,
    wikipassageqa,
    wikiqa,
)

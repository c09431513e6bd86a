"""One module per benchmark family; importing this package registers them all."""

from benchmarks.datasets import (  # noqa: F401
    askubuntu,
    asnq,
    insuranceqa,
    las,
    semeval,
    trecqa,
    wikipassageqa,
    wikiqa,
)

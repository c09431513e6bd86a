"""Documents with their structure (documents, paragraphs, sentences), read from what teams
hold: what the sentence-level objectives (:mod:`adapter_zoo.objectives`) build pairs from.

Torch-free.

Example:
    >>> corpus = read_documents(["Stouts are dark. They taste roasted."])
    >>> corpus.documents[0]
    Document(id='1', title=None, paragraphs=(('Stouts are dark.', 'They taste roasted.'),))
    >>> split_sentences("Is it dark? Yes.")
    ['Is it dark?', 'Yes.']
"""

from adapter_zoo.documents.corpus import Corpus, Document
from adapter_zoo.documents.readers import read_documents
from adapter_zoo.documents.sentences import split_sentences

__all__ = ["Corpus", "Document", "read_documents", "split_sentences"]

"""The document readers: a folder of .txt/.md/.html files, a JSONL corpus (BEIR's form), a
text file of passages, a parsed forum (never its test split), and each bad input as one line
naming the file and the record, with nothing written."""

from __future__ import annotations

import json

import pytest

from adapter_zoo.documents import Corpus, Document, read_documents, split_sentences
from adapter_zoo.errors import ZooError
from stackexchange.store import read_dataset

BEER = "beer.stackexchange.com"
BICYCLES = "bicycles.meta.stackexchange.com"
# a MedQuAD answer (NIDDK, public domain), its paragraphs a blank line apart
DYSPLASIA = (
    "The long-term outlook for a child with kidney dysplasia in only one kidney is generally "
    "good. A person with one working kidney, a condition called solitary kidney, can grow "
    "normally and may have few, if any, health problems.\n\n"
    "The affected kidney may shrink as the child grows. Children and adults with only one "
    "working kidney should have regular checkups to test for high blood pressure and kidney "
    "damage.\n\n"
    "More information is provided in the NIDDK health topics."
)


def _tree(folder):
    return sorted((p.relative_to(folder), p.stat().st_mtime_ns) for p in folder.rglob("*"))


def test_a_folder_of_text_markdown_and_html_files(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "dysplasia.txt").write_text(DYSPLASIA)
    (tmp_path / "faq.md").write_text("# Solitary kidney\n\nA person with one working kidney "
                                     "can grow\nnormally. Most have no problems.\n")  # fmt: skip
    (tmp_path / "page.html").write_text(
        "<html><head><title>Kidney  dysplasia</title><style>p{}</style></head><body>"
        "<h1>Outlook</h1><p>It is good. Checkups help.</p><ul><li>Dialysis.</li></ul>"
        "<script>track()</script></body></html>"
    )
    (tmp_path / "notes.csv").write_text("ignored,not a document\n")
    corpus = read_documents(tmp_path)
    assert [d.id for d in corpus.documents] == ["faq.md", "guide/dysplasia.txt", "page.html"]
    faq, dysplasia, page = corpus.documents
    assert faq == Document(
        "faq.md",
        "Solitary kidney",
        (("A person with one working kidney can grow normally.", "Most have no problems."),),
    )
    assert dysplasia.title is None and [len(p) for p in dysplasia.paragraphs] == [2, 2, 1]
    assert dysplasia.paragraphs[2] == ("More information is provided in the NIDDK health topics.",)
    assert page == Document("page.html", "Kidney dysplasia", (
        ("Outlook",), ("It is good.", "Checkups help."), ("Dialysis.",)))  # fmt: skip
    assert corpus.about == {"source": "folder", "files": 3, "documents": 3, "paragraphs": 7,
                            "sentences": 11, "titles": 2}  # fmt: skip


def test_a_jsonl_corpus_keeps_beir_ids_and_titles(tmp_path):
    path = tmp_path / "corpus.jsonl"
    records = [{"_id": "MED-10", "title": "Kidney dysplasia", "text": DYSPLASIA},
               {"title": "", "text": "Yes you can insure a salvage title. Ask an agent."}]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n")
    corpus = read_documents(path)
    assert [(d.id, d.title, len(d.paragraphs)) for d in corpus.documents] == [
        ("MED-10", "Kidney dysplasia", 3), ("2", None, 1)]  # fmt: skip
    assert corpus.about == {"source": "jsonl", "file": "corpus.jsonl", "documents": 2,
                            "paragraphs": 4, "sentences": 7, "titles": 1}  # fmt: skip


def test_a_text_file_is_one_passage_a_line_named_by_its_line(tmp_path):
    path = tmp_path / "answers.txt"
    path.write_text("Yes you can insure a salvage title. Ask an agent.\n\n  \nAlways ask.\n")
    corpus = read_documents(path)
    assert corpus.documents == (
        Document("1", None, (("Yes you can insure a salvage title.", "Ask an agent."),)),
        Document("4", None, (("Always ask.",),)),
    )
    assert read_documents(["One. Two.\n\nThree."]).documents[0].paragraphs == (
        ("One.", "Two."), ("Three.",))  # fmt: skip


def test_a_parsed_forum_never_yields_a_test_split_thread(parsed_shipped):
    rows = read_dataset(parsed_shipped / BEER / "questions").to_list()
    corpus = read_documents(parsed_shipped / BEER)
    kept = {str(r["id"]) for r in rows if r["split"] != "test"}
    held_out = {str(r["id"]) for r in rows if r["split"] == "test"}
    ids = [d.id for d in corpus.documents]
    assert len(held_out) == 97 and not held_out & set(ids) and set(ids) <= kept
    assert len(ids) == len(set(ids)) == len(kept) == 932
    first = next(r for r in rows if str(r["id"]) == ids[0])
    assert corpus.documents[0].title == " ".join(first["title"].split())
    body_lines = [line for line in first["body"].splitlines() if line.strip()]
    assert corpus.documents[0].paragraphs[0] == tuple(split_sentences(body_lines[0]))
    test_titles = {" ".join(r["title"].split()) for r in rows if r["split"] == "test"}
    assert not test_titles & {d.title for d in corpus.documents}
    both = read_documents(parsed_shipped)
    assert both.about["forums"] == [BEER, BICYCLES] and both.documents[0].id.startswith(BEER + "/")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d, "{d}: no .txt, .md, .html, .htm file to read documents from (empty folder)"),
        (lambda d: (d / "a.txt").write_bytes(b"PK\x03\x04\x00\x00zip") and d,
         "{d}/a.txt: a binary file, not text (a NUL byte at byte 4)"),
        (lambda d: (d / "a.md").write_bytes(b"caf\xe9") and d,
         "{d}/a.md: not a UTF-8 text file (unexpected end of data at byte 3)"),
        (lambda d: (d / "c.jsonl").write_text('{"text": "Fine."}\n{"title": "No text"}\n')
         and d / "c.jsonl", "{d}/c.jsonl, line 2: no 'text' field"),
        (lambda d: (d / "c.jsonl").write_text('{"text": ["a list"]}\n') and d / "c.jsonl",
         "{d}/c.jsonl, line 1: 'text' must be a string"),
        (lambda d: (d / "c.jsonl").write_text('{"text": "x"\n') and d / "c.jsonl",
         "{d}/c.jsonl, line 1: not valid JSON (Expecting ',' delimiter)"),
        (lambda d: (d / "c.jsonl").write_text("[1]\n") and d / "c.jsonl",
         "{d}/c.jsonl, line 1: expected an object, got [1]"),
        (lambda d: (d / "blank.txt").write_text("\n  \n") and d / "blank.txt",
         "{d}/blank.txt: no text to read documents from (empty)"),
        (lambda d: d / "missing",
         "{d}/missing: no such documents (a folder, a .jsonl, a text file or a forum)"),
    ],
    ids=["empty-folder", "binary", "not-utf8", "no-text", "text-not-string", "bad-json",
         "not-object", "blank", "missing"],
)  # fmt: skip
def test_bad_documents_are_one_line_naming_the_file_and_record(tmp_path, make, message):
    folder = tmp_path / "in"
    folder.mkdir()
    source = make(folder)
    before = _tree(folder)
    with pytest.raises(ZooError) as raised:
        read_documents(source)
    assert str(raised.value) == message.format(d=folder)
    assert _tree(folder) == before  # nothing written


def test_sentences_are_split_by_a_segmenter_not_at_every_full_stop():
    assert split_sentences("Dr. Smith paid $3.50 on Jan. 5. Was it good?  Yes.") == [
        "Dr. Smith paid $3.50 on Jan. 5.", "Was it good?", "Yes."]  # fmt: skip
    assert split_sentences("It is in Medicare Part B. There is a 20% co-insurance.") == [
        "It is in Medicare Part B.", "There is a 20% co-insurance."]  # fmt: skip
    assert split_sentences("e.g. a line\nwrapped here.") == ["e.g. a line wrapped here."]
    assert split_sentences(" \n ") == []


def test_a_corpus_is_frozen():
    corpus = read_documents(["One sentence here."])
    assert isinstance(corpus, Corpus)
    with pytest.raises(AttributeError):
        corpus.documents[0].title = "changed"

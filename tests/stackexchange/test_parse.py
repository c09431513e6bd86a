"""parse_forum on the real dump files: exact counts, layout, splits, caps, both tag forms."""

from __future__ import annotations

import json

import datasets
import pytest

import stackexchange
from stackexchange.io import lock_file
from stackexchange.splits import SPLITS

KINDS = ("title_body", "title_answer", "duplicates")
PAIR_COLUMNS = ["forum", "query", "positive", "query_id", "positive_id", "tags", "score"]
QUESTION_COLUMNS = [
    "id", "title", "body", "tags", "score", "accepted_answer_id", "accepted_answer", "split",
]  # fmt: skip


def _stats(forum_dir):
    return json.loads((forum_dir / "stats.json").read_text())


def test_beer_counts_match_the_files_and_the_readme(beer_parsed, beer_xml, count_forum):
    stats, files = _stats(beer_parsed), count_forum(beer_xml)
    assert beer_parsed.name == "beer.stackexchange.com"
    assert (stats["questions"], stats["answers"]) == (files["questions"], files["answers"])
    assert (stats["questions"], stats["answers"]) == (1029, 2277)  # ../shared/README.md
    assert files["with_accepted"] == 619 and files["duplicate_links"] == 26
    # every accepted answer is either a pair or counted under a drop reason
    dropped = stats["dropped"]
    assert (
        stats["pairs"]["title_answer"]
        + dropped.get("title_answer_too_short", 0)
        + dropped.get("accepted_answer_missing", 0)
        == files["with_accepted"]
    )
    assert stats["pairs"]["title_answer"] == files["accepted_found"] == 619
    assert dropped["duplicate_dangling"] == 2
    assert stats["pairs"]["duplicates"] == files["duplicates_resolvable"] == 24
    assert stats["pairs"]["title_body"] + dropped.get("title_body_too_short", 0) == 1029
    assert stats["source"] == {"file": "beer.stackexchange.com.7z", "dump_date": "2020-06-01"}
    assert dropped["other_post_type"] == 3471 - 1029 - 2277


def test_bicycles_meta_folder_counts(bicycles_meta_parsed, bicycles_meta_dir, count_forum):
    stats, files = _stats(bicycles_meta_parsed), count_forum(bicycles_meta_dir)
    assert (stats["questions"], stats["answers"]) == (files["questions"], files["answers"])
    assert (stats["questions"], stats["answers"]) == (453, 971)
    assert files["duplicate_links"] == 10 and stats["dropped"]["duplicate_dangling"] == 1
    assert stats["pairs"]["duplicates"] == files["duplicates_resolvable"] == 9
    assert stats["pairs"]["title_answer"] == files["accepted_found"]
    assert stats["source"] == {"file": "bicycles.meta.stackexchange.com", "dump_date": None}


def test_layout_columns_and_split_sizes(beer_parsed):
    stats = _stats(beer_parsed)
    for kind in KINDS:
        data = datasets.load_from_disk(str(beer_parsed / kind))
        assert list(data) == list(SPLITS)
        for split in SPLITS:
            assert data[split].column_names == PAIR_COLUMNS
            assert data[split].num_rows == stats["splits"][kind][split]
        assert sum(stats["splits"][kind].values()) == stats["pairs"][kind]  # under the cap
        assert set(data["train"]["forum"]) == {"beer.stackexchange.com"}
    questions = datasets.load_from_disk(str(beer_parsed / "questions"))
    assert questions.column_names == QUESTION_COLUMNS
    assert questions.num_rows == 1029
    shares = {s: questions["split"].count(s) / 1029 for s in SPLITS}
    assert 0.75 < shares["train"] < 0.85 and 0.05 < shares["dev"] < 0.15
    assert 0.05 < shares["test"] < 0.15


def test_no_question_on_two_sides_and_duplicates_follow_canonical(beer_parsed):
    questions = datasets.load_from_disk(str(beer_parsed / "questions"))
    split_of = dict(zip(questions["id"], questions["split"]))
    for kind in KINDS:
        data = datasets.load_from_disk(str(beer_parsed / kind))
        for split in SPLITS:
            for row in data[split]:
                assert split_of[row["query_id"]] == split
                if kind == "duplicates":
                    assert split_of[row["positive_id"]] == split  # the canonical question


def test_pair_texts_are_plain_text_of_the_right_posts(beer_parsed, beer_xml):
    from lxml import etree

    bodies = {}
    for _, row in etree.iterparse(str(beer_xml / "Posts.xml"), tag="row"):
        bodies[int(row.get("Id"))] = (row.get("Title"), row.get("Body"))
        row.clear()
    answers = datasets.concatenate_datasets(
        list(datasets.load_from_disk(str(beer_parsed / "title_answer")).values())
    )
    for row in answers.select(range(0, answers.num_rows, 50)):
        assert row["query"] == bodies[row["query_id"]][0]
        assert row["positive"] == stackexchange.html_to_text(bodies[row["positive_id"]][1])
        assert "<p>" not in row["positive"] and "&amp;" not in row["positive"]
    duplicates = datasets.load_from_disk(str(beer_parsed / "duplicates"))["train"]
    row = duplicates[0]
    title, body = bodies[row["positive_id"]]
    assert row["positive"] == title + "\n" + stackexchange.html_to_text(body)


def test_questions_carry_their_accepted_answer(beer_parsed):
    questions = datasets.load_from_disk(str(beer_parsed / "questions"))
    answered = questions.filter(lambda r: r["accepted_answer"] is not None)
    assert answered.num_rows == 619
    assert all(r["accepted_answer_id"] is not None for r in answered)
    assert questions.filter(lambda r: r["accepted_answer_id"] is None).num_rows == 1029 - 619


def test_pipe_tag_form_gives_the_same_tags(
    bicycles_meta_dir, bicycles_meta_parsed, tmp_path, copy_forum
):
    import re

    text = (bicycles_meta_dir / "Posts.xml").read_text(encoding="utf-8-sig")
    piped = re.sub(
        r'Tags="([^"]*)"',
        lambda m: 'Tags="|' + "|".join(m.group(1)[4:-4].split("&gt;&lt;")) + '|"',
        text,
    )
    assert piped != text and 'Tags="|' in piped and "&lt;" not in piped.split('Tags="|')[1][:40]
    folder = copy_forum(
        bicycles_meta_dir, tmp_path / "src" / "bicycles.meta.stackexchange.com", piped
    )
    parsed = stackexchange.parse_forum(folder, tmp_path / "out")
    original = datasets.load_from_disk(str(bicycles_meta_parsed / "questions"))
    rewritten = datasets.load_from_disk(str(parsed / "questions"))
    assert rewritten["tags"] == original["tags"]
    assert sum(len(t) for t in rewritten["tags"]) > 453  # real tags, not empty lists


def test_cap_keeps_a_seeded_sample_and_counts_before_it(
    bicycles_meta_dir, bicycles_meta_parsed, tmp_path
):
    capped = stackexchange.parse_forum(bicycles_meta_dir, tmp_path / "a", max_positives=100, seed=1)
    again = stackexchange.parse_forum(bicycles_meta_dir, tmp_path / "b", max_positives=100, seed=1)
    stats = _stats(capped)
    assert stats["pairs"] == _stats(bicycles_meta_parsed)["pairs"]  # counted before the cap
    assert sum(stats["splits"]["title_body"].values()) == 100
    assert sum(stats["splits"]["duplicates"].values()) == 9  # under the cap: all kept
    first = datasets.load_from_disk(str(capped / "title_body"))["train"]["query_id"]
    assert first == datasets.load_from_disk(str(again / "title_body"))["train"]["query_id"]


def test_bare_posts_xml_and_forum_name(bicycles_meta_dir, tmp_path):
    parsed = stackexchange.parse_forum(
        bicycles_meta_dir / "Posts.xml", tmp_path, forum="bikes.example"
    )
    stats = _stats(parsed)
    assert parsed == tmp_path / "bikes.example" and stats["forum"] == "bikes.example"
    assert stats["questions"] == 453 and stats["pairs"]["duplicates"] == 0


def test_complete_forum_is_skipped_unless_overwrite(bicycles_meta_dir, tmp_path):
    first = stackexchange.parse_forum(bicycles_meta_dir, tmp_path)
    stamp = (first / "stats.json").stat().st_mtime_ns
    assert stackexchange.parse_forum(bicycles_meta_dir, tmp_path) == first
    assert (first / "stats.json").stat().st_mtime_ns == stamp
    stackexchange.parse_forum(bicycles_meta_dir, tmp_path, overwrite=True)
    assert (first / "stats.json").stat().st_mtime_ns != stamp
    assert [p.name for p in tmp_path.iterdir()] == ["bicycles.meta.stackexchange.com"]


def test_parse_never_deletes_a_users_file_named_like_a_temporary(bicycles_meta_dir, tmp_path):
    from stackexchange.dump import parse_dump

    out = tmp_path / "out"
    out.mkdir()
    mine = {".notes.tmp-mine": "notes", ".bicycles.meta.stackexchange.com.old-1": "backup"}
    for name, text in mine.items():
        (out / name).write_text(text)
    [parsed] = parse_dump(bicycles_meta_dir, out, workers=1)
    assert _stats(parsed)["questions"] == 453
    for name, text in mine.items():
        assert (out / name).read_text() == text
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*mine, "bicycles.meta.stackexchange.com"]
    )


def test_a_second_parse_of_the_same_forum_is_refused_while_the_first_runs(
    bicycles_meta_dir, copy_forum, tmp_path
):
    """The lock is the forum folder's: a run of the same forum is refused, a run of another
    forum into the same output goes on beside it."""
    from stackexchange.dump import parse_dump
    from stackexchange.errors import DumpError
    from stackexchange.io import output_lock

    out = tmp_path / "out"
    forum = out / "bicycles.meta.stackexchange.com"
    other = copy_forum(bicycles_meta_dir, tmp_path / "src" / "music.meta.stackexchange.com")
    with output_lock(forum):  # a first run, writing the forum
        (out / ".x.tmp-1-ffff").mkdir(parents=True)  # its temporary: the second must not touch it
        for second in (
            lambda: parse_dump(bicycles_meta_dir, out, workers=1),
            lambda: stackexchange.parse_forum(bicycles_meta_dir, out),
        ):
            with pytest.raises(DumpError) as error:
                second()
            assert str(error.value) == (
                f"{forum}: another adapter-zoo run is writing into it (lock {lock_file(forum)}); "
                "wait until it ends or choose another output"
            )
        assert [p.name for p in out.iterdir()] == [".x.tmp-1-ffff"]
        # another forum into the same output, while the first run holds its own
        assert stackexchange.parse_forum(other, out).name == "music.meta.stackexchange.com"
        assert parse_dump(other, out, workers=1) == [out / "music.meta.stackexchange.com"]
    assert stackexchange.parse_forum(bicycles_meta_dir, out) == forum


def test_two_runs_of_different_forums_into_one_output_at_once_both_succeed(
    bicycles_meta_dir, copy_forum, tmp_path
):
    import threading

    sources = [
        copy_forum(bicycles_meta_dir, tmp_path / "src" / host)
        for host in ("music.meta.stackexchange.com", "raspberrypi.meta.stackexchange.com")
    ]
    out, results, started = tmp_path / "out", {}, threading.Barrier(2)

    def run(source):
        started.wait()
        try:
            results[source.name] = stackexchange.parse_forum(source, out)
        except Exception as error:  # noqa: BLE001 (reported by the assertion below)
            results[source.name] = error

    threads = [threading.Thread(target=run, args=(source,)) for source in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {s.name: out / s.name for s in sources}
    assert all(stackexchange.is_complete(out / s.name) for s in sources)
    assert sorted(p.name for p in out.iterdir()) == sorted(s.name for s in sources)


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<p>One &amp; two</p>\n<p>three</p>", "One & two\nthree"),
        ("<ul><li>a</li><li>b</li></ul>", "a\nb"),
        ("<pre><code>x = 1\n    y = 2\n</code></pre><p>after</p>", "x = 1\n    y = 2\nafter"),
        ("<p>line<br>break &lt;tag&gt; &eacute;</p>", "line\nbreak <tag> é"),
        ("plain", "plain"),
        (None, ""),
    ],
)
def test_html_to_text(html, text):
    assert stackexchange.html_to_text(html) == text


def test_blank_line_pattern_matches_the_nested_one():
    """text.py's flat pattern collapses exactly what the original nested one did."""
    import random
    import re

    from stackexchange.text import BLANK_LINES

    nested = re.compile(r"\n[ \t\r\f\v]*(?:\n[ \t\r\f\v]*)+")
    rng = random.Random(0)
    alphabet = "\n \t\r\f\va\xa0\u2028"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert BLANK_LINES.sub("\n", text) == nested.sub("\n", text)


def test_parse_tags_both_forms():
    assert stackexchange.parse_tags("<ale><c++>") == ["ale", "c++"]
    assert stackexchange.parse_tags("|ale|c++|") == ["ale", "c++"]
    assert stackexchange.parse_tags("") == []


def _rows_of(forum_dir, kind):
    data = datasets.load_from_disk(str(forum_dir / kind))
    return {split: data[split].to_list() for split in SPLITS}


def test_parallel_chunks_give_identical_output(
    bicycles_meta_dir, bicycles_meta_parsed, tmp_path, monkeypatch
):
    from stackexchange import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 200_000)  # about 10 chunks of this 2 MB file
    assert len(chunks.plan_chunks(bicycles_meta_dir / "Posts.xml", "Posts.xml")) >= 8
    parsed = stackexchange.parse_forum(bicycles_meta_dir, tmp_path, workers=2)
    for kind in KINDS:
        assert _rows_of(parsed, kind) == _rows_of(bicycles_meta_parsed, kind)
    questions = datasets.load_from_disk(str(parsed / "questions")).to_list()
    assert questions == datasets.load_from_disk(str(bicycles_meta_parsed / "questions")).to_list()
    assert _stats(parsed) == _stats(bicycles_meta_parsed)


def test_split_table_archives_like_stack_overflow(
    bicycles_meta_dir, bicycles_meta_parsed, tmp_path
):
    """A dump with one archive per table (HOST-Posts.7z, HOST-PostLinks.7z, HOST-Tags.7z)."""
    import py7zr

    from stackexchange.dump import parse_dump

    dump = tmp_path / "dump"
    dump.mkdir()
    for table in ("Posts", "PostLinks", "Tags"):
        with py7zr.SevenZipFile(
            dump / f"bicycles.meta.stackexchange.com-{table}.7z", "w"
        ) as zipped:
            zipped.write(bicycles_meta_dir / f"{table}.xml", f"{table}.xml")
    [parsed] = parse_dump(dump, tmp_path / "out")
    assert parsed.name == "bicycles.meta.stackexchange.com"
    stats, reference = _stats(parsed), _stats(bicycles_meta_parsed)
    assert stats["source"]["file"] == "bicycles.meta.stackexchange.com-Posts.7z"
    assert stats["source"]["dump_date"] is not None
    for key in ("questions", "answers", "pairs", "dropped", "splits"):
        assert stats[key] == reference[key]


def test_written_features_match_datasets_own(beer_parsed):
    from stackexchange.assemble import PAIR_SCHEMA, QUESTIONS_SCHEMA
    from stackexchange.store import features_json

    for schema in (PAIR_SCHEMA, QUESTIONS_SCHEMA):
        assert features_json(schema) == datasets.Features.from_arrow_schema(schema).to_dict()
    info = json.loads((beer_parsed / "questions" / "dataset_info.json").read_text())
    assert info["features"] == datasets.Features.from_arrow_schema(QUESTIONS_SCHEMA).to_dict()
    loaded = datasets.load_from_disk(str(beer_parsed / "title_body"))["test"]
    assert loaded.features == datasets.Features.from_arrow_schema(PAIR_SCHEMA)


def _pairs(forum_dir):
    return stackexchange.read_stats(forum_dir)["pairs"]


@pytest.mark.parametrize("variant", ["utf-16", "row-tab", "long-comment"])
def test_valid_posts_xml_the_chunker_cannot_cut_parses_like_the_original(
    bicycles_meta_dir, bicycles_meta_parsed, tmp_path, copy_forum, variant
):
    text = (bicycles_meta_dir / "Posts.xml").read_text(encoding="utf-8-sig")
    folder = copy_forum(bicycles_meta_dir, tmp_path / "bicycles.meta.stackexchange.com")
    if variant == "utf-16":
        text = text.replace('encoding="utf-8"', 'encoding="utf-16"', 1)
        (folder / "Posts.xml").write_text(text, encoding="utf-16")
    elif variant == "row-tab":
        (folder / "Posts.xml").write_text(text.replace("<row ", "<row\t"), encoding="utf-8")
    else:
        comment = "<!-- " + "x" * (1 << 21) + " -->\n"
        at = text.index("<posts>") + len("<posts>\n")
        (folder / "Posts.xml").write_text(text[:at] + comment + text[at:], encoding="utf-8")
    parsed = stackexchange.parse_forum(folder, tmp_path / "out")
    expected = stackexchange.read_stats(bicycles_meta_parsed)
    stats = stackexchange.read_stats(parsed)
    assert stats["questions"] == expected["questions"] == 453
    assert stats["answers"] == expected["answers"]
    assert _pairs(parsed) == _pairs(bicycles_meta_parsed)
    assert stats["splits"] == expected["splits"]


_POOL_SCRIPT = """
import time
from stackexchange.pool import process_pool

pool = process_pool(2)
futures = [pool.submit(time.sleep, 120) for _ in range(2)]
while len(pool._processes) < 2:
    time.sleep(0.05)
print(" ".join(map(str, pool._processes)), flush=True)
time.sleep(120)
"""


def _running(pid: int) -> bool:
    from pathlib import Path

    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status  # a zombie has already exited


def test_parse_workers_die_after_kill_9_of_the_main_process():
    """The pools of parse_dump and stream_posts (stackexchange.pool) outlive no kill -9."""
    import signal
    import subprocess
    import sys
    import time

    main = subprocess.Popen([sys.executable, "-c", _POOL_SCRIPT], stdout=subprocess.PIPE, text=True)
    workers = [int(pid) for pid in main.stdout.readline().split()]
    assert len(workers) == 2 and all(_running(pid) for pid in workers)
    main.send_signal(signal.SIGKILL)
    main.wait()
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(pid) for pid in workers)

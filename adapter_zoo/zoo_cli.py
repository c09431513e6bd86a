"""``adapter-zoo list``: the entries of the local zoo and the shipped zoo, marked ``local`` or
``shipped`` (and the Hub index with --remote);
``adapter-zoo export NAME --format onnx OUT``: any bi- or cross-encoder entry as an ONNX
folder (fp32 and int8) that sentence-transformers opens with ``backend="onnx"``;
``adapter-zoo export NAME --out DIR``: a LoRA adapter entry merged into its base
(SentenceTransformer or CrossEncoder folder), a full cross-encoder entry as a CrossEncoder
folder;
``adapter-zoo build FORUM [--dump PATH]``: a catalog forum's entry built from its dump;
``adapter-zoo adapt``: a zoo entry for an unlabelled domain (:mod:`adapter_zoo.adapt.cli`)."""

from __future__ import annotations

import json

from adapter_zoo.adapt.cli import register as register_adapt
from adapter_zoo.build import build_entry
from adapter_zoo.errors import ZooError
from adapter_zoo.export import export_cross_encoder, export_merged_lora, export_onnx, lora_entry
from adapter_zoo.loading import list_entries
from adapter_zoo.precision import add_precision_option
from adapter_zoo.zoo.store import zoo_home
from stackexchange.numbers import step_int
from stackexchange.paths import output_folder_option, path_option


def register(subparsers) -> None:
    register_adapt(subparsers)
    parser = subparsers.add_parser(
        "list", help="list the zoo's entries: yours (local) and the package's (shipped)"
    )
    parser.add_argument("--remote", action="store_true", help="also list the Hub index")
    parser.add_argument("--json", action="store_true", help="print the cards as JSON")
    parser.set_defaults(func=run_list)

    export = subparsers.add_parser(
        "export",
        help="write entry NAME as a folder sentence-transformers opens without adapter-zoo: "
        "ONNX for any bi- or cross-encoder entry, or a merged model",
        description="Write the zoo entry NAME as a folder sentence-transformers opens without "
        "adapter-zoo. With --format onnx any bi- or cross-encoder entry (adapter, LoRA, full; "
        "its head too) is written in sentence-transformers' ONNX layout: onnx/model.onnx "
        "(fp32) and onnx/model_qint8_<arch>.onnx (int8 for this CPU), opened with "
        "backend='onnx'. With --format pytorch (the default) a LoRA adapter entry is merged "
        "into its base and written as a plain SentenceTransformer (bi-encoder) or CrossEncoder "
        "(CLS head) folder, and a full cross-encoder entry (a BERT base with its CLS "
        "classification head) as a CrossEncoder folder whose predict() gives the entry's "
        "scores; there bottleneck-adapter entries are refused (--format onnx writes them), "
        "and so are fusion, composite and cascade entries and pair-cosine heads.",
    )
    export.add_argument("name", metavar="NAME", help="zoo name, entry folder or Hub name")
    export.add_argument(
        "out_dir", nargs="?", type=output_folder_option, metavar="OUT",
        help="the folder to write (or --out)",
    )  # fmt: skip
    export.add_argument(
        "--out", type=output_folder_option, metavar="DIR", help="the folder to write"
    )
    export.add_argument(
        "--format", choices=("pytorch", "onnx"), default="pytorch",
        help="pytorch (default): a CrossEncoder or merged SentenceTransformer; onnx: "
        "the ONNX layout, fp32 and int8",
    )  # fmt: skip
    export.add_argument("--overwrite", action="store_true", help="replace DIR whatever it holds")
    export.set_defaults(func=run_export)

    build = subparsers.add_parser(
        "build",
        help="build a forum's default bi-encoder adapter from its dump into the zoo",
        description="Download FORUM's dump (archive.org's stackexchange collection, or the "
        "mirror in $ADAPTER_ZOO_DUMP_MIRROR; checked against the mirror's file listing or the "
        "catalog's size), parse it, train the zoo's default bi-encoder adapter and save it as "
        "the zoo entry FORUM. adapter_zoo.load(FORUM) does the same on first use.",
    )
    build.add_argument("forum", metavar="FORUM", help="a catalog forum: travel, bicycles.meta, ...")
    build.add_argument(
        "--dump", default=None, type=path_option, metavar="PATH",
        help="the forum's .7z archive you already have",
    )  # fmt: skip
    build.add_argument(
        "--name", default=None, help="the entry's name (default: FORUM's short name)"
    )
    build.add_argument("--base", default=None, help="base model (default: minilm-l6)")
    build.add_argument("--steps", type=step_int, default=None, help="training steps (default: 40)")
    add_precision_option(build)
    build.add_argument("--overwrite", action="store_true", help="replace an existing entry")
    build.set_defaults(func=run_build)


def run_list(args) -> int:
    cards = list_entries(remote=args.remote)
    if args.json:
        print(json.dumps(cards, indent=2, ensure_ascii=False))
        return 0
    if not cards:
        print(f"no zoo entries in {zoo_home()}")
        return 0
    print(f"{'name':<24} {'mode':<10} {'base_model':<20} {'source':<7} forums")
    for card in cards:
        if "broken" in card:  # listed with its reason; the others still are
            print(f"{card['name']:<24} {'BROKEN':<10} {card['broken']}")
            continue
        forums = ",".join(map(str, card.get("forums") or []))
        print(
            f"{card['name']!s:<24} {card.get('mode', '?')!s:<10} "
            f"{str(card.get('base_model')):<20} {card.get('source', '')!s:<7} {forums}"
        )
    return 0


def run_export(args) -> int:
    if (args.out is None) == (args.out_dir is None):
        raise ZooError("export: give the folder to write once, as OUT or as --out DIR")
    args.out = args.out or args.out_dir
    if args.format == "onnx":
        out = export_onnx(args.name, args.out, overwrite=args.overwrite)
        print(f"wrote {out} (sentence-transformers, backend='onnx'; its README.md names the files)")
        return 0
    lora = lora_entry(args.name)
    if lora:
        out = export_merged_lora(args.name, args.out, overwrite=args.overwrite)
    else:
        out = export_cross_encoder(args.name, args.out, overwrite=args.overwrite)
    opener = "SentenceTransformer" if lora == "bi" else "CrossEncoder"
    print(f"wrote {out} (sentence_transformers.{opener}({str(out)!r}))")
    return 0


def run_build(args) -> int:
    options = {"base_model": args.base, "steps": args.steps}
    path = build_entry(
        args.forum,
        dump=args.dump,
        name=args.name,
        overwrite=args.overwrite,
        precision=args.precision,
        **{k: v for k, v in options.items() if v is not None},
    )
    print(f"adapter-zoo build: wrote zoo entry {path.name!r} at {path}")
    return 0

"""``adapter-zoo list``: the entries of the local zoo (and the Hub index with --remote);
``adapter-zoo export NAME --out DIR``: a full cross-encoder entry as a CrossEncoder folder,
a LoRA adapter entry merged into its base (SentenceTransformer or CrossEncoder folder)."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser("list", help="list the zoo's entries")
    parser.add_argument("--remote", action="store_true", help="also list the Hub index")
    parser.add_argument("--json", action="store_true", help="print the cards as JSON")
    parser.set_defaults(func=run_list)

    export = subparsers.add_parser(
        "export",
        help="write a full cross-encoder entry as a sentence-transformers CrossEncoder folder",
        description="Write the full cross-encoder entry NAME (a BERT base with its CLS "
        "classification head) as a sentence-transformers CrossEncoder folder whose predict() "
        "gives the entry's scores. Adapter, fusion, bi-encoder, composite and cascade entries "
        "and pair-cosine heads are refused. A LoRA adapter entry is merged into its base and "
        "written as a plain SentenceTransformer (bi-encoder) or CrossEncoder (CLS head) folder.",
    )
    export.add_argument("name", metavar="NAME", help="zoo name, entry folder or Hub name")
    export.add_argument("--out", required=True, metavar="DIR", help="the folder to write")
    export.add_argument("--overwrite", action="store_true", help="replace DIR whatever it holds")
    export.set_defaults(func=run_export)


def run_list(args) -> int:
    import json

    from adapter_zoo.loading import list_entries
    from adapter_zoo.zoo.store import zoo_home

    cards = list_entries(remote=args.remote)
    if args.json:
        print(json.dumps(cards, indent=2, ensure_ascii=False))
        return 0
    if not cards:
        print(f"no zoo entries in {zoo_home()}")
        return 0
    print(f"{'name':<24} {'kind':<10} {'base_model':<20} {'source':<6} forums")
    for card in cards:
        forums = ",".join(card.get("forums") or [])
        print(
            f"{card['name']:<24} {card.get('kind', '?'):<10} "
            f"{str(card.get('base_model')):<20} {card.get('source', ''):<6} {forums}"
        )
    return 0


def run_export(args) -> int:
    from adapter_zoo.export import export_cross_encoder, export_merged_lora, lora_entry

    lora = lora_entry(args.name)
    if lora:
        out = export_merged_lora(args.name, args.out, overwrite=args.overwrite)
    else:
        out = export_cross_encoder(args.name, args.out, overwrite=args.overwrite)
    opener = "SentenceTransformer" if lora == "bi" else "CrossEncoder"
    print(f"wrote {out} (sentence_transformers.{opener}({str(out)!r}))")
    return 0

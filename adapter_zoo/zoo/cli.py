"""``adapter-zoo list``: the entries of the local zoo (and the Hub index with --remote)."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser("list", help="list the zoo's entries")
    parser.add_argument("--remote", action="store_true", help="also list the Hub index")
    parser.add_argument("--json", action="store_true", help="print the cards as JSON")
    parser.set_defaults(func=run_list)


def run_list(args) -> int:
    import json

    from adapter_zoo.zoo.store import list_entries, zoo_home

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

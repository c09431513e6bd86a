"""``adapter-zoo push`` and ``adapter-zoo pull``."""

from __future__ import annotations

from adapter_zoo.hub import pull, push


def _push(args) -> int:
    sha = push(
        args.name_or_path,
        args.repo_id,
        private=args.private,
        commit_message=args.message,
        revision=args.revision,
        tag=args.tag,
        index=args.index,
    )
    print(sha)
    return 0


def _pull(args) -> int:
    print(pull(args.repo_id, revision=args.revision))
    return 0


def register(subparsers) -> None:
    """Add ``push`` and ``pull`` to the ``adapter-zoo`` command line."""
    push = subparsers.add_parser("push", help="upload a zoo entry to a Hub repository")
    push.add_argument("name_or_path", metavar="NAME_OR_PATH", help="local zoo name or entry folder")
    push.add_argument("repo_id", metavar="REPO_ID", help="Hub repository, org/name")
    push.add_argument("--private", action="store_true", help="create the repository private")
    push.add_argument("--message", help="commit message")
    push.add_argument("--revision", help="branch to push to (created when missing)")
    push.add_argument("--tag", help="tag the new commit")
    push.add_argument("--index", action="store_true", help="also add it to the zoo index")
    push.set_defaults(func=_push)

    pull = subparsers.add_parser("pull", help="download and verify a zoo entry from the Hub")
    pull.add_argument("repo_id", metavar="REPO_ID", help="Hub repository, org/name")
    pull.add_argument("--revision", help="branch, tag or commit")
    pull.set_defaults(func=_pull)

"""``arena merge OUT STORE...``: combine shard stores of one tournament into one.

Shards of a secret-seeded tournament share its secret (``--secret-file``); the merged
store keeps it, and stores of two secrets (other deals) are refused."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..results.store import Store, StoreError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, help="the merged store (created, or added to)")
    p.add_argument("stores", type=Path, nargs="+", help="stores to merge (shards of one tournament config)")


def run(args: argparse.Namespace) -> int:
    for path in args.stores:  # check them all before creating anything
        Store(path, create=False).close()
    with Store(args.out) as out:
        for path in args.stores:
            with Store(path, create=False) as src:
                mine, theirs = out.secret(), src.secret()
                if mine is not None and theirs is not None and mine != theirs:
                    raise StoreError(
                        f"cannot merge {path}: it was played with another secret seed than {args.out} (other deals); "
                        "shards share one secret with --secret-file"
                    )
                try:
                    n = out.merge_from(src)
                except StoreError as e:
                    raise StoreError(f"cannot merge {path}: {e}") from None
                if theirs is not None and mine is None and src.config_hash is not None:
                    out.bind_secret(theirs)  # the merged store can be resumed, replayed, published
            print(f"{path}: {n} matches added")
        print(f"{args.out}: {out.count()} matches")
    return 0

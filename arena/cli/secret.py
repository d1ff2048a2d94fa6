"""``arena secret STORE``: print the secret root seed of a store (or a ladder's folder).

To hand it to the shards of a tournament (``--secret-file``), or to publish it once a
competition is finished, so that anyone can replay its deals. A store of an explicit
seed has no secret (its seed is in its config): refused.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import UserError
from ..ladder.rounds import STORE
from ..results.store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("store", type=Path, help="a results store, or a ladder's folder")
    p.add_argument(
        "--out", "-o", type=Path, metavar="FILE",
        help="write the secret to FILE (mode 0600) instead of printing it, for --secret-file",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    path = args.store / STORE if args.store.is_dir() else args.store
    with Store(path, create=False) as store:
        secret = store.secret()
        config = store.config or {}
    if secret is None:
        raise UserError(f"{path}: no secret: it was played with the explicit seed {config.get('seed', '?')}, "
                        "which its config holds")  # fmt: skip
    if args.out is None:
        print(secret)
        return 0
    fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"{secret}\n")
    print(f"secret of {path} written to {args.out}")
    return 0

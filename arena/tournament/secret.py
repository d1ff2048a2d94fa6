"""Secret root seeds: deals that no agent can rebuild.

An agent may import the pure engine, so a guessable root seed (1, 7, ...) lets it try
candidates against its own hand, rebuild the deal and play knowing every hidden card.
So when a tournament, a comparison or a ladder is given no seed, its root seed is a
**secret**: ``secrets.randbits(128)``, drawn when its store is created and kept only
there (``meta`` key ``secret``; the store is 0600). ``--resume`` reads it back, so the
same match ids get the same seeds.

Rules, in one place:

- **Tournaments and comparisons**: the root is the user's ``--seed`` (trusted local
  experiments) or else the store's secret, or the secret of ``--secret-file`` (shards,
  a published replay), never both. The config identity holds ``seed = "secret"`` and
  ``secret_sha256`` (`commitment`), never the secret: stores of two secrets play other
  deals, so their config hashes differ and ``arena merge`` refuses them, and a secret
  published later can be checked against a report.
- **Ladders** (submitted, untrusted code) always have a secret. A ``seed`` in
  ``ladder.toml`` is mixed with it (`ladder_root`), never used alone.

The secret is never printed, logged or put on a command line; only ``arena secret
STORE`` shows it, to hand to shards or to publish a finished competition.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..results.store import Store, StoreError

if TYPE_CHECKING:
    from .schedule import TournamentConfig

BITS = 128
#: A secret file must hold more than 64 bits: a smaller number is a seed, not a secret.
MIN_SECRET = 1 << 64


def new_secret() -> int:
    """A fresh secret root seed of 128 bits."""
    return secrets.randbits(BITS)


def commitment(secret: int) -> str:
    """A public hash of a secret (SHA-256, hex): it identifies the deals without revealing
    them, and lets anyone check a secret published later."""
    return hashlib.sha256(b"sixtysix-arena/secret/" + str(secret).encode()).hexdigest()


def ladder_root(seed: int | None, secret: int) -> int:
    """A ladder's root seed: its secret, mixed with its ``seed`` if it has one (128 bits
    of BLAKE2b), so a known seed alone never gives the deals."""
    if seed is None:
        return secret
    digest = hashlib.blake2b(b"sixtysix-arena/ladder-root/" + f"{secret}/{seed}".encode(), digest_size=16)
    return int.from_bytes(digest.digest(), "big")


def parse_secret(text: str, where: str) -> int:
    """A secret from its text (a decimal integer, as ``arena secret`` prints it)."""
    word = text.strip()
    if not word.isdigit() or not MIN_SECRET <= int(word) < 1 << BITS:
        raise UserError(
            f"{where}: must hold a secret seed of 65 to {BITS} bits as a decimal integer (arena secret STORE "
            "prints one); for a plain seed use --seed"
        )
    return int(word)


def read_secret_file(path: Path) -> int:
    """The secret held in ``path``; `UserError` if there is none."""
    try:
        text = Path(path).read_text(encoding="ascii", errors="replace")
    except FileNotFoundError:
        raise UserError(f"{path}: no such secret file") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read the secret file ({e.strerror})") from None
    return parse_secret(text, str(path))


def bind_tournament(cfg: TournamentConfig, store: Store) -> TournamentConfig:
    """``cfg`` with its root seed bound to ``store``: an explicit seed as it is; else the
    store's secret, drawn now for a new store (or taken from the secret file, which must
    match a store that already has one)."""
    if not cfg.secret:
        return cfg
    have = store.secret()
    if have is None:
        if store.config_hash is not None:
            seed = (store.config or {}).get("seed")
            raise StoreError(
                f"{store.path} holds a tournament of the explicit seed {seed}, not a secret one; "
                f"give --seed {seed} to go on with it, or use another --store"
            )
        have = store.bind_secret(cfg.seed if cfg.seed is not None else new_secret())
    if cfg.seed is not None and cfg.seed != have:
        raise StoreError(
            f"{store.path} holds another secret than {cfg.secret_file}; use the secret it was made with "
            "(arena secret STORE), or another --store"
        )
    return dataclasses.replace(cfg, seed=have)


def store_root(store: Store) -> int:
    """The root seed of a store's matches (for ``arena replay``): the explicit seed of its
    config, its secret, or for a ladder the two mixed."""
    config: dict[str, Any] = store.config or {}
    seed = config.get("seed")
    if config.get("format") == "ladder":
        secret = store.secret()
        if secret is None:  # a ladder made before secrets, not run since
            return seed
        return ladder_root(seed, secret)
    if seed == "secret":
        secret = store.secret()
        if secret is None:
            raise StoreError(f"{store.path}: its config names a secret seed, but the store holds none")
        return secret
    return seed


def explicit_seed_warning(seed: int) -> str:
    """The one-line warning for a sandboxed run of an explicit seed."""
    return (
        f"arena: warning: seed {seed} is not secret: anyone who knows or guesses it can rebuild every deal; "
        "leave --seed out for agents you do not trust"
    )

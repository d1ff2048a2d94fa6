"""Seeded shuffles and seed derivation, specified so any language can reproduce them.

No global random state is touched. A deck order is a pure function of (pack, seed):

1. ``h = BLAKE2b(b"sixtysix-arena/deck/" + str(seed).encode(), digest_size=16)``, read as
   a big-endian 128-bit integer (``digest_size=32``, 256 bits, for a pack of more than 24
   cards: the 32-card pack of Kreuzmariage);
2. ``i = h mod n!`` for a pack of ``n`` cards (the bias is below 2**-49, 2**-138 for 32);
3. decode ``i`` in the factorial number system (Lehmer code) over the pack in card-id
   order: for ``k = n-1 .. 0``, ``j, i = divmod(i, k!)`` and take the ``j``-th card left.

The first card of the order goes first in the deal (see `arena.game.state` for the fixed
deal pattern). `derive_seed` turns a root seed and any path of names or numbers into an
independent 64-bit seed the same way, so a match seed, a deal seed and an agent seed
never share randomness and none can be guessed from another.
"""

from __future__ import annotations

import hashlib
import math

_FACTORIALS = tuple(math.factorial(k) for k in range(33))


def _hash_int(tag: bytes, text: str, size: int) -> int:
    return int.from_bytes(hashlib.blake2b(tag + text.encode(), digest_size=size).digest(), "big")


def derive_seed(root: int, *path: int | str) -> int:
    """A 64-bit seed for ``path`` under ``root``: ``derive_seed(7, "deal", 3)``."""
    return _hash_int(b"sixtysix-arena/seed/", "/".join(map(str, (root, *path))), 8)


def deck_order(pack: tuple[int, ...], seed: int) -> list[int]:
    """The seeded order of ``pack`` (card ids, ascending): a uniform random permutation."""
    n = len(pack)
    index = _hash_int(b"sixtysix-arena/deck/", str(seed), 16 if n <= 24 else 32) % _FACTORIALS[n]
    left = list(pack)
    order = []
    for k in range(n - 1, -1, -1):
        j, index = divmod(index, _FACTORIALS[k])
        order.append(left.pop(j))
    return order

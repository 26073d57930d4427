"""Self-play data written by ``tabula selfplay`` (or ``python -m
tabula.cluster selfplay``): one set of NumPy ``.npy`` files per shard,
``shard-I-of-N-NAME.npy``, with these arrays (one row per position):

``observations``  float32 (positions, observation size): the mover's view
``masks``         uint8 (positions, actions): 1 for each legal action
``policies``      float32 (positions, actions): the search's visits, summing to 1
``returns``       float32 (positions,): the mover's return at the end
                  (1 win, -1/(players-1) loss, 0 draw)
``values``        float32 (positions,): the return the search expected of
                  the move it chose, on the same scale (the final return
                  for a controller that estimates none)
``seats``         uint8 (positions,): the mover's seat
``games``         uint32 (positions,): the game's number in the run
``plies``         uint32 (positions,): the ply in the game

``tabula.selfplay.load("selfplay")`` joins a run's shards into one dict of
these arrays.
"""

from __future__ import annotations

import os
import re

__all__ = ["ARRAYS", "load"]

#: The arrays of each shard.
ARRAYS = ("observations", "masks", "policies", "returns", "values", "seats", "games", "plies")

_NAME = re.compile(r"^shard-(\d+)-of-(\d+)-(\w+)\.npy$")


def load(folder: str) -> dict:
    """Every shard's arrays in ``folder``, joined in shard order (so games
    are in the run's order within each shard). Raises ``ValueError`` when a
    shard of the run is missing or the folder mixes runs split two ways."""
    shards: dict = {}
    counts = set()
    for name in os.listdir(folder):
        m = _NAME.match(name)
        if m and m.group(3) in ARRAYS:
            index, count = int(m.group(1)), int(m.group(2))
            counts.add(count)
            shards.setdefault(index, {})[m.group(3)] = os.path.join(folder, name)
    if not shards:
        raise ValueError(f"no self-play shards (shard-I-of-N-*.npy) in {folder}")
    if len(counts) != 1:
        raise ValueError(f"{folder} holds runs split {sorted(counts)} ways; keep one run per folder")
    (count,) = counts
    missing = [i for i in range(count) if i not in shards or len(shards[i]) != len(ARRAYS)]
    if missing:
        raise ValueError(f"{folder}: shards {missing} of {count} are missing or incomplete")
    # NumPy is imported here, not with the package: `import tabula` stays
    # light, and starts no BLAS threads beside a game's loop.
    import numpy as np

    return {a: np.concatenate([np.load(shards[i][a]) for i in range(count)]) for a in ARRAYS}

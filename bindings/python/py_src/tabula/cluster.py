"""tabula's ``match``, ``tournament``, ``selfplay``, ``perft``, ``bench`` and ``analyze`` on a Ray cluster.

The command line is the ``tabula`` command's own, run in shards as Ray
tasks that call the engine in this package (no ``tabula`` binary needed on
the nodes)::

    python -m tabula.cluster match breakthrough --seat mcts:200 --seat greedy --games 2000
    python -m tabula.cluster tournament breakthrough -o rows=6 -o cols=6 -p random -p greedy -p mcts:100 --games 50
    python -m tabula.cluster selfplay breakthrough -o rows=6 -o cols=6 --games 1000 --out data
    python -m tabula.cluster perft breakthrough 6 --address auto
    python -m tabula.cluster bench go -o size=9 --playouts 10000 --shards 64
    python -m tabula.cluster analyze breakthrough -o rows=6 -o cols=6 --games 10000

It prints the same report as ``tabula`` would. Shard ``I`` of ``N`` does
the games (playouts, perft subtrees) ``i`` with ``i mod N = I``, each a
pure function of the job and ``i``, so the result for a seed is the same
whatever the number of shards or workers. A shard whose worker or node
dies is run again by Ray (``--retries``) and counted once.

Options of this module (anywhere on the line):

``--address ADDR``  the cluster (``auto``, ``ray://host:10001``, ``host:6379``);
                    without it, Ray starts on this machine.
``--shards N``      how many shards (default: 4 per CPU of the cluster, at
                    most one per game or playout).
``--retries K``     runs of a shard after its worker dies (default 3).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from typing import Callable, Optional, Sequence

from tabula import _tabula
from tabula._tabula import TabulaError

__all__ = ["Result", "run", "main"]


class Result:
    """A finished cluster run: its report as text and as JSON, and how it ran."""

    def __init__(self, text: str, doc: dict, shards: int, seconds: float, nodes: int, wants_json: bool = False):
        self.text = text
        self.json = doc
        #: ``--json`` was on the command line.
        self.wants_json = wants_json
        self.shards = shards
        self.seconds = seconds
        self.nodes = nodes

    def __repr__(self) -> str:
        return f"<tabula.cluster.Result: {self.shards} shards on {self.nodes} nodes, {self.seconds:.1f} s>"


def _shard(job: str, path: str, rules: str, net: Optional[str], index: int, count: int):
    # Runs in a Ray worker: the engine runs in this process, one thread (on
    # a grounded GDL game's network, built once by the driver). Self-play
    # returns its positions too (.npy files as bytes), which the driver
    # writes: the nodes need no shared disk.
    from tabula import _tabula as engine

    if json.loads(job)["command"] == "selfplay":
        return engine._run_selfplay_shard(job, path, rules, index, count, 1, net)
    return engine._run_shard(job, path, rules, index, count, 1, net), []


def _items(job: dict) -> Optional[int]:
    """How many games or playouts a job has (None: a perft, any number)."""
    if job["command"] == "match":
        return int(job["games"])
    if job["command"] in ("selfplay", "analyze"):
        return int(job["games"])
    if job["command"] == "tournament":
        pairings = math.comb(len(job["controllers"]), len(job["players"]))
        return pairings * int(job["games"])
    if job["command"] == "bench":
        return int(job["playouts"])
    return None


def run(
    argv: Sequence[str],
    address: Optional[str] = None,
    shards: Optional[int] = None,
    retries: int = 3,
    on_progress: Optional[Callable[[int, int], None]] = None,
) -> Result:
    """Runs a ``match``, ``tournament``, ``selfplay``, ``perft``, ``bench`` or ``analyze`` command line (without
    ``tabula``) in shards on Ray and returns the merged report.

    Connects with ``ray.init(address)`` unless Ray is already initialised.
    Raises ``TabulaError`` for a command line or game the ``tabula``
    command would refuse, and ``ray.exceptions.RayError`` when a shard
    fails on every run Ray gives it.
    """
    import ray

    job, path, rules, as_json, out, net = _tabula._plan(list(argv))
    job_doc = json.loads(job)
    if shards is not None and shards < 1:
        raise TabulaError(f"--shards needs at least 1, not {shards}")
    if retries < 0:
        raise TabulaError(f"--retries needs 0 or more, not {retries}")
    if not ray.is_initialized():
        ray.init(address=address, logging_level="ERROR", log_to_driver=False, include_dashboard=False)
    cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
    nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    count = shards if shards is not None else 4 * cpus
    items = _items(job_doc)
    if items is not None:
        count = max(1, min(count, items))
    task = ray.remote(num_cpus=1, max_retries=retries)(_shard)
    # The job, the rules and the network go to the object store once, not
    # once a task.
    job_ref, path_ref, rules_ref, net_ref = ray.put(job), ray.put(path), ray.put(rules), ray.put(net)
    started = time.monotonic()
    pending = {task.remote(job_ref, path_ref, rules_ref, net_ref, i, count): i for i in range(count)}
    done: dict[int, str] = {}
    waiting = list(pending)
    while waiting:
        ready, waiting = ray.wait(waiting, num_returns=1)
        for ref in ready:
            try:
                text, files = ray.get(ref)
            except ray.exceptions.RayTaskError as e:
                # An error of the engine: the run cannot go on.
                cause = e.cause if isinstance(getattr(e, "cause", None), Exception) else e
                raise TabulaError(f"shard {pending[ref]}/{count}: {cause}") from None
            # Each shard is counted once, however many times Ray ran it.
            index = pending[ref]
            if index not in done:
                done[index] = text
                for name, data in files:
                    os.makedirs(out, exist_ok=True)
                    with open(os.path.join(out, f"shard-{index}-of-{count}-{name}.npy"), "wb") as f:
                        f.write(data)
            if on_progress is not None:
                on_progress(len(done), count)
    seconds = time.monotonic() - started
    files = [(f"shard {i}/{count}", done[i]) for i in range(count)]
    text = _tabula._merge(files, json=False, seconds=seconds)
    doc = json.loads(_tabula._merge(files, json=True, seconds=seconds))
    return Result(text, doc, count, seconds, nodes, as_json)


def _progress_printer() -> Optional[Callable[[int, int], None]]:
    """A progress bar of the shards on stderr, when it is a terminal."""
    if not sys.stderr.isatty():
        return None
    started = time.monotonic()

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        elapsed = time.monotonic() - started
        eta = f", {elapsed / done * (total - done):.0f} s left" if 0 < done < total else ""
        bar = "#" * filled + "-" * (width - filled)
        end = "\n" if done == total else ""
        print(f"\rshards [{bar}] {done}/{total}, {elapsed:.0f} s{eta}   ", end=end, file=sys.stderr, flush=True)

    return show


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m tabula.cluster``: exit code 0, or 2 with a message."""
    parser = argparse.ArgumentParser(
        prog="python -m tabula.cluster",
        description="Run tabula's match, tournament, selfplay, perft, bench or analyze in shards on a Ray cluster.",
        epilog="The rest of the line is the tabula command's own, e.g. "
        "`match breakthrough --seat mcts --seat greedy --games 1000`.",
        allow_abbrev=False,
        add_help=False,
    )
    parser.add_argument("--address", default=None, help="the Ray cluster (auto, ray://host:port); default: start Ray here")
    parser.add_argument("--shards", type=int, default=None, help="number of shards (default: 4 per CPU)")
    parser.add_argument("--retries", type=int, default=3, help="runs of a shard after its worker dies")
    parser.add_argument("--help-cluster", action="help", help="this help")
    own, rest = parser.parse_known_args(argv)
    if not rest or rest[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if rest else 2
    try:
        result = run(rest, address=own.address, shards=own.shards, retries=own.retries, on_progress=_progress_printer())
    except TabulaError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # Ray's own failures: a cluster not found, a task lost.
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    if result.wants_json:
        print(json.dumps(result.json))
    else:
        print(result.text, end="")
    print(f"ray: {result.shards} shards on {result.nodes} node(s), {result.seconds:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

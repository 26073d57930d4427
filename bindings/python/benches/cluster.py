"""Throughput of a match on Ray against the same match in one process.

    python bindings/python/benches/cluster.py [GAMES]

Plays a GAMES-game match (default 2,000; Breakthrough 6x6, greedy against
random) in this process on one thread, then through tabula.cluster on a
local Ray instance with 1 and with 2 workers (CPUs), and checks that every
run gives the same result. Then the overhead of a Ray task: the same
match split into many more shards, the extra time divided by the extra
tasks.
"""

import json
import sys
import time

import ray

from tabula import _tabula, cluster

GAMES = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
ARGV = ["match", "breakthrough", "-o", "rows=6", "-o", "cols=6", "--seat", "greedy", "--seat", "random",
        "--games", str(GAMES), "--seed", "1"]


def untimed(doc):
    doc = {k: v for k, v in doc.items() if k not in ("seconds", "shards")}
    doc["controllers"] = [{k: v for k, v in c.items() if k != "max_move_seconds"} for c in doc["controllers"]]
    return doc


def one_process(threads):
    job, path, rules, _, _, _ = _tabula._plan(ARGV)
    start = time.perf_counter()
    whole = _tabula._run_shard(job, path, rules, 0, 1, threads)
    seconds = time.perf_counter() - start
    return json.loads(_tabula._merge([("whole", whole)], json=True)), seconds


def on_ray(cpus, shards):
    ray.init(num_cpus=cpus, logging_level="ERROR", log_to_driver=False, include_dashboard=False)
    try:
        # A warm-up task starts the workers, as a long run would have them.
        cluster.run(["match", "breakthrough", "--seat", "random", "--games", str(cpus)], shards=cpus)
        result = cluster.run(ARGV, shards=shards)
    finally:
        ray.shutdown()
    return result.json, result.seconds


def main():
    rows = []
    base, t1 = one_process(1)
    rows.append(("one process, 1 thread", t1, 1))
    doc, t = one_process(2)
    assert untimed(doc) == untimed(base)
    rows.append(("one process, 2 threads", t, 1))
    for cpus in (1, 2):
        shards = 8 * cpus
        doc, t = on_ray(cpus, shards)
        assert untimed(doc) == untimed(base), "Ray gave another result"
        rows.append((f"Ray, {cpus} worker{'s' if cpus > 1 else ''} ({shards} shards)", t, shards))
    print(f"{GAMES}-game match, Breakthrough 6x6, greedy vs random (same result in every run)")
    print(f"{'run':<34} {'seconds':>8} {'games/s':>9}")
    for name, t, _ in rows:
        print(f"{name:<34} {t:>8.2f} {GAMES / t:>9.1f}")
    # Overhead per task: 1 worker, few shards against many.
    few, many = 4, 400
    _, t_few = on_ray(1, few)
    _, t_many = on_ray(1, many)
    per_task = (t_many - t_few) / (many - few)
    print(f"Ray task overhead (1 worker, {few} vs {many} shards): {per_task * 1000:.2f} ms a task")
    print(json.dumps({"games": GAMES, "runs": {n: t for n, t, _ in rows}, "task_overhead_s": per_task}))


if __name__ == "__main__":
    main()

"""tabula.cluster: match, tournament, selfplay, perft, bench and analyze in shards on Ray.

The tests marked ``cluster`` start a Ray cluster of a head and two worker
nodes on 127.0.0.1. Ray takes the machine's own network address when it
has one, so they run in a network namespace of their own, where 127.0.0.1
is the only address (as root: ``unshare -n``, then ``ip link set lo up``);
elsewhere they are skipped, unless TABULA_CLUSTER_TESTS=required (CI), when
they fail. The others check errors, which come before any cluster.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

import tabula
from tabula import _tabula, cluster
from tabula._tabula import TabulaError

HEAD_PORT = 6390
#: The node-manager ports of the two worker nodes (to find their raylets).
WORKER_PORTS = (6401, 6402)


def only_loopback():
    """Whether this process sees no network interface but the loopback."""
    # /proc/net is the reading process's own network namespace (/sys/class/net
    # is the namespace's that mounted /sys).
    try:
        lines = pathlib.Path("/proc/net/dev").read_text().splitlines()[2:]
    except OSError:
        return False
    return [line.split(":")[0].strip() for line in lines] == ["lo"]


def ray_cli(*args, check=True):
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    ray = pathlib.Path(sys.executable).with_name("ray")
    return subprocess.run([str(ray), *args], env=env, check=check, capture_output=True, text=True)


@pytest.fixture(scope="module")
def ray_cluster():
    required = os.environ.get("TABULA_CLUSTER_TESTS") == "required"
    try:
        import ray
    except ImportError:
        if required:
            pytest.fail("ray is not installed (pip install 'tabula[cluster]')")
        pytest.skip("ray is not installed (pip install 'tabula[cluster]')")
    if not only_loopback():
        why = "the cluster tests run in a network namespace of their own (unshare -n; ip link set lo up)"
        if required:
            pytest.fail(why)
        pytest.skip(why)
    ray_cli("stop", "--force", check=False)
    ray_cli("start", "--head", f"--port={HEAD_PORT}", "--num-cpus=1", "--node-ip-address=127.0.0.1",
            "--include-dashboard=false", "--disable-usage-stats")
    for port in WORKER_PORTS:
        ray_cli("start", f"--address=127.0.0.1:{HEAD_PORT}", "--num-cpus=1", f"--node-manager-port={port}",
                "--node-ip-address=127.0.0.1", "--disable-usage-stats")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(address=f"127.0.0.1:{HEAD_PORT}", logging_level="ERROR", log_to_driver=False)
    try:
        deadline = time.monotonic() + 60
        while sum(1 for n in ray.nodes() if n["Alive"]) < 3:
            assert time.monotonic() < deadline, "the three nodes did not come up"
            time.sleep(0.5)
        yield ray
    finally:
        ray.shutdown()
        ray_cli("stop", "--force", check=False)


def kill_raylet(port):
    """Kills the raylet of the node whose node manager listens on `port`
    (its worker processes die with it): the pids killed."""
    killed = []
    for proc in pathlib.Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if args and args[0].endswith(b"/raylet") and f"--node_manager_port={port}".encode() in args:
            os.kill(int(proc.name), signal.SIGKILL)
            killed.append(int(proc.name))
    return killed


def one_machine(argv):
    """The run's report (JSON) done whole in this process, as `tabula` does it."""
    job, path, rules, _, _, _ = _tabula._plan(argv)
    whole = _tabula._run_shard(job, path, rules, 0, 1, 2)
    return json.loads(_tabula._merge([("whole", whole)], json=True))


def untimed(doc):
    """A report without what depends on the clock."""
    doc = {k: v for k, v in doc.items() if k not in ("seconds", "playouts_per_second", "plies_per_second", "shards")}
    for key in ("controllers", "depths"):
        if key in doc:
            doc[key] = [{k: v for k, v in row.items() if k not in ("seconds", "max_move_seconds")} for row in doc[key]]
    return doc


MATCH = ["match", "breakthrough", "-o", "rows=5", "-o", "cols=5", "--seat", "mcts:20", "--seat", "greedy",
         "--games", "200", "--seed", "7"]


@pytest.mark.cluster
def test_a_match_on_three_nodes_is_the_match_on_one_machine(ray_cluster):
    result = cluster.run(MATCH, shards=12)
    assert result.nodes == 3 and result.shards == 12
    assert result.json["games"] == 200
    assert untimed(result.json) == untimed(one_machine(MATCH))
    assert result.text.startswith("breakthrough: 200 games, seats rotated, seed 7,")
    # Another split gives the same result: it depends on the seed only.
    again = cluster.run(MATCH, shards=5)
    assert untimed(again.json) == untimed(result.json)


@pytest.mark.cluster
def test_perft_5_of_breakthrough_on_three_nodes(ray_cluster):
    result = cluster.run(["perft", "breakthrough", "5"], shards=9)
    assert [d["nodes"] for d in result.json["depths"]] == [22, 484, 11132, 256036, 6182818]
    assert "9 shards" in result.text


@pytest.mark.cluster
def test_a_tournament_on_three_nodes_is_the_tournament_on_one_machine(ray_cluster):
    argv = ["tournament", "breakthrough", "-o", "rows=5", "-o", "cols=5", "-p", "random", "-p", "greedy",
            "-p", "mcts:20", "-p", "mcts:60", "--games", "10", "--seed", "2"]
    result = cluster.run(argv, shards=10)
    assert result.json["games"] == 60 and result.json["pairings"] == 6
    assert untimed(result.json) == untimed(one_machine(argv))
    ranks = {row["spec"]: row["rank"] for row in result.json["controllers"]}
    assert ranks["random"] == 4, ranks
    assert "score of the row against the column" in result.text


@pytest.mark.cluster
def test_a_bench_on_three_nodes_is_the_bench_on_one_machine(ray_cluster):
    argv = ["bench", "domin-up", "-o", "players=3", "--playouts", "60", "--seed", "3"]
    result = cluster.run(argv, shards=7)
    assert untimed(result.json) == untimed(one_machine(argv))


@pytest.mark.cluster
def test_an_analysis_on_three_nodes_is_the_analysis_on_one_machine(ray_cluster):
    argv = ["analyze", "breakthrough", "-o", "rows=6", "-o", "cols=6", "--games", "600", "--seed", "5",
            "--seat", "greedy"]
    result = cluster.run(argv, shards=9)
    assert untimed(result.json) == untimed(one_machine(argv))
    m = result.json["metrics"]
    assert m["games"] == 600 and m["seats"][0]["controller"] == "greedy"
    # greedy against random in the first seat wins nearly every game.
    assert m["seats"][0]["wins"]["low"] > 0.8, m["seats"]
    assert "coverage" in result.text and "9 shards" in result.text


@pytest.mark.cluster
def test_selfplay_on_three_nodes_writes_the_data_of_one_machine(ray_cluster, tmp_path):
    import numpy as np

    import tabula

    argv = ["selfplay", "breakthrough", "-o", "rows=5", "-o", "cols=5", "--seat", "mcts:30", "--seat", "mcts:30",
            "--games", "12", "--seed", "1", "--out", str(tmp_path / "ray")]
    result = cluster.run(argv, shards=6)
    on_ray = tabula.selfplay.load(tmp_path / "ray")
    assert result.json["positions"] == len(on_ray["returns"]) > 0
    # The same run in one piece, here.
    job, path, rules, _, _, _ = _tabula._plan(argv)
    _, files = _tabula._run_selfplay_shard(job, path, rules, 0, 1, 2)
    (tmp_path / "here").mkdir()
    for name, data in files:
        (tmp_path / "here" / f"shard-0-of-1-{name}.npy").write_bytes(data)
    here = tabula.selfplay.load(tmp_path / "here")
    order = lambda d: np.lexsort((d["plies"], d["games"]))  # noqa: E731
    for k in here:
        assert (here[k][order(here)] == on_ray[k][order(on_ray)]).all(), k


@pytest.mark.cluster
def test_a_node_killed_mid_run_and_the_result_is_the_same(ray_cluster):
    # Long enough shards that some are in flight when the node dies.
    argv = ["match", "breakthrough", "-o", "rows=6", "-o", "cols=5", "--seat", "mcts:40", "--seat", "mcts:20",
            "--games", "48", "--seed", "11"]
    expected = untimed(one_machine(argv))
    killed = []

    def kill_a_worker_node(done, total):
        if done == 2 and not killed:
            killed.extend(kill_raylet(WORKER_PORTS[1]))

    result = cluster.run(argv, shards=16, on_progress=kill_a_worker_node)
    assert killed, "no worker node was killed"
    # Every shard ran to its end on the nodes left, and counted once.
    assert untimed(result.json) == expected
    # And the node is gone for good (Ray's health checks take a while).
    deadline = time.monotonic() + 120
    while sum(1 for n in ray_cluster.nodes() if n["Alive"]) != 2:
        assert time.monotonic() < deadline, "the killed node is still alive"
        time.sleep(1)
    assert result.json["games"] == 48


def test_a_command_the_tabula_cli_refuses_is_refused():
    cases = [
        (["match", "no-such-game", "--seat", "random"], "no game named `no-such-game`"),
        (["perft", "breakthrough", "3", "--shard", "3/2"], "I must be below N"),
        (["perft", "breakthrough", "3", "--shard", "1/2"], "leave out --shard"),
        (["bench", "breakthrough", "--seconds", "2"], "give --playouts"),
        (["play", "breakthrough"], "does not split into shards"),
        (["match", "breakthrough", "--seat", "wizard"], "wizard"),
        (["analyze", "breakthrough", "--compare", "rows=5", "--compare", "rows=6"], "one variant"),
        (["analyze", "breakthrough", "--plots", "x"], "draws no plots"),
        (["analyze", "domin-up", "-o", "players=3", "--decisive", "mcts:10"], "two seats"),
        (["analyze", "breakthrough", "--decisive", "greedy"], "estimates"),
    ]
    for argv, says in cases:
        with pytest.raises(TabulaError, match=None) as e:
            cluster.run(argv)
        assert says in str(e.value), (argv, str(e.value))


def test_python_m_tabula_cluster_exits_2_with_the_message():
    out = subprocess.run([sys.executable, "-m", "tabula.cluster", "perft", "nowhere", "2"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "error: no game named `nowhere`" in out.stderr
    out = subprocess.run([sys.executable, "-m", "tabula.cluster", "--shards", "0", "perft", "breakthrough", "2"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--shards needs at least 1" in out.stderr


KIF_BREAKTHROUGH = str(pathlib.Path(__file__).resolve().parents[3] / "games" / "breakthrough-8x8.kif")


def test_shards_of_a_grounded_gdl_game_run_on_its_network():
    argv = ["bench", KIF_BREAKTHROUGH, "--playouts", "12", "--seed", "5"]
    job, path, rules, _, _, net = _tabula._plan(argv)
    assert net is not None
    shards = [(f"shard {i}", _tabula._run_shard(job, path, rules, i, 3, 1, net)) for i in range(3)]
    merged = json.loads(_tabula._merge(shards, json=True))
    # The network's random games are those of the game as loaded here (a
    # grounded game plays its playouts on its network).
    here = tabula.load(KIF_BREAKTHROUGH).bench(playouts=12, seed=5)
    assert merged["playouts"] == 12
    assert {p: merged["results"][p] for p in ("white", "black")} == here["wins"]
    assert round(merged["average_length"] * 12) == here["plies"]
    # A game that does not ground has none.
    assert _tabula._plan(["perft", "breakthrough", "2"])[5] is None


def test_a_damaged_or_foreign_network_is_an_error():
    job, path, rules, _, _, net = _tabula._plan(["perft", KIF_BREAKTHROUGH, "2"])
    doc = json.loads(net)
    broken = dict(doc, net=dict(doc["net"], terminal=10**9))
    with pytest.raises(TabulaError, match="damaged network of propositions: terminal"):
        _tabula._run_shard(job, path, rules, 0, 1, 1, json.dumps(broken))
    cut = dict(doc, net=dict(doc["net"], code=doc["net"]["code"][:-1]))
    with pytest.raises(TabulaError, match="damaged network of propositions"):
        _tabula._run_shard(job, path, rules, 0, 1, 1, json.dumps(cut))
    with pytest.raises(TabulaError, match="not a network"):
        _tabula._run_shard(job, path, rules, 0, 1, 1, "{}")
    # Breakthrough's network with Connect Four's rules and job.
    other, other_path, other_rules, *_ = _tabula._plan(
        ["perft", str(pathlib.Path(KIF_BREAKTHROUGH).with_name("connect-four.kif")), "2"]
    )
    with pytest.raises(TabulaError, match="the network is for other rules"):
        _tabula._run_shard(other, other_path, other_rules, 0, 1, 1, net)
    # The right network, with another job's rules.
    with pytest.raises(TabulaError, match="not the rules of this job"):
        _tabula._run_shard(other, path, rules, 0, 1, 1, net)


def test_a_corrupt_or_foreign_shard_is_refused_by_merge():
    job, path, rules, _, _, _ = _tabula._plan(["perft", "breakthrough", "2"])
    a = _tabula._run_shard(job, path, rules, 0, 2)
    b = _tabula._run_shard(job, path, rules, 1, 2)
    assert json.loads(_tabula._merge([("a", a), ("b", b)], json=True))["depths"][1]["nodes"] == 484
    with pytest.raises(TabulaError, match="b: not a shard file"):
        _tabula._merge([("a", a), ("b", b[: len(b) // 2])])
    with pytest.raises(TabulaError, match="missing shard 1/2"):
        _tabula._merge([("a", a)])
    with pytest.raises(TabulaError, match="not the rules of this job"):
        _tabula._run_shard(job, path, rules + "\n% edited\n", 0, 2)

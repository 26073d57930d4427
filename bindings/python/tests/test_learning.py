"""The learning example runs end to end: self-play, training, matches."""

import json
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("pyspiel")
pytest.importorskip("ray")

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "learn_connect4.py"


def test_the_learning_example_trains_and_plays(tmp_path):
    out, plot = tmp_path / "run.json", tmp_path / "curve.svg"
    argv = ["--games", "8", "--iterations", "10", "--epochs", "4", "--matches", "2", "--simulations", "5"]
    argv += ["--json", str(out), "--plot", str(plot), "--data", str(tmp_path / "data")]
    done = subprocess.run([sys.executable, str(EXAMPLE), *argv], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    # Self-play wrote positions, and the network learned from them: its
    # loss on the positions it trained on went down.
    assert doc["positions"] > 8 * 7
    # Each position is also learned mirrored.
    assert doc["trained_on"] == 2 * doc["positions"]
    curve = doc["curve"]
    assert [c["epoch"] for c in curve] == [1, 2, 3, 4]
    assert sum(curve[-1]["train"]) < sum(curve[0]["train"])
    assert 1 <= doc["kept_epoch"] <= 4
    # Both agents played both opponents, every game counted once.
    assert sorted(doc["results"]) == [
        "network vs greedy",
        "network vs random",
        "rollouts vs greedy",
        "rollouts vs random",
    ]
    for r in doc["results"].values():
        assert r["wins"] + r["draws"] + r["losses"] == 2
    assert plot.read_text().lstrip().startswith("<?xml") and "<svg" in plot.read_text()
    assert "network (5 simulations) vs greedy" in done.stdout


def _example():
    import importlib.util

    spec = importlib.util.spec_from_file_location("learn_connect4", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_mirror_image_of_a_position_is_the_position_of_the_mirrored_moves():
    import numpy as np

    import tabula

    example = _example()
    game = tabula.load("connect4")
    state, mirrored = game.new_state(), game.new_state()
    rng = np.random.default_rng(3)
    rows = {"observations": [], "masks": [], "policies": []}
    images = {"observations": [], "masks": [], "policies": []}
    while not state.is_over():
        legal = state.legal_actions()
        mask = np.zeros(game.num_actions(), np.float32)
        mask[legal] = 1
        policy = rng.dirichlet(np.ones(game.num_actions())).astype(np.float32) * mask
        policy /= policy.sum()
        for out, s, m, p in ((rows, state, mask, policy), (images, mirrored, mask[::-1], policy[::-1])):
            out["observations"].append(np.asarray(s.observation(s.to_move), np.float32))
            out["masks"].append(m)
            out["policies"].append(p)
        action = int(rng.choice(legal))
        state.apply(action)
        mirrored.apply(game.num_actions() - 1 - action)
    flipped = example.mirror(game, {k: np.array(v) for k, v in rows.items()})
    assert len(rows["observations"]) > 6
    for k in rows:
        np.testing.assert_array_equal(flipped[k], np.array(images[k]))

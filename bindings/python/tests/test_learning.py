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

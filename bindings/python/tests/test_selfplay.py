"""Self-play data: what `tabula selfplay` writes, read back with NumPy."""

import json

import numpy as np
import pytest

import tabula
from tabula import _tabula

ARGV = ["selfplay", "breakthrough", "-o", "rows=5", "-o", "cols=5", "--seat", "mcts:30", "--seat", "mcts:30",
        "--games", "6", "--seed", "9", "--explore", "4"]


def write_shards(folder, count):
    job, path, rules, _, _, _ = _tabula._plan(ARGV)
    reports = []
    for i in range(count):
        text, files = _tabula._run_selfplay_shard(job, path, rules, i, count)
        reports.append((f"shard {i}", text))
        for name, data in files:
            (folder / f"shard-{i}-of-{count}-{name}.npy").write_bytes(data)
    return json.loads(_tabula._merge(reports, json=True))


def by_position(data):
    """The arrays in (game, ply) order."""
    order = np.lexsort((data["plies"], data["games"]))
    return {k: v[order] for k, v in data.items()}


def test_positions_are_what_a_learner_needs(tmp_path):
    report = write_shards(tmp_path, 1)
    data = tabula.selfplay.load(tmp_path)
    n = report["positions"]
    game = tabula.load("breakthrough", rows=5, cols=5)
    assert data["observations"].shape == (n, game.observation_size())
    assert data["masks"].shape == data["policies"].shape == (n, game.num_actions())
    assert data["observations"].dtype == np.float32 and data["masks"].dtype == np.uint8
    # A policy is a distribution over the legal actions.
    assert np.allclose(data["policies"].sum(axis=1), 1.0)
    assert not (data["policies"] * (1 - data["masks"])).any()
    # Breakthrough has a winner: each mover's return is 1 or -1, and the
    # two seats of a game get opposite returns.
    assert set(np.unique(data["returns"])) == {-1.0, 1.0}
    # What the search expected: a return in [-1, 1] for every position,
    # and on the whole higher for the side that went on to win.
    assert data["values"].shape == (n,) and np.all(np.abs(data["values"]) <= 1.0)
    assert data["values"][data["returns"] > 0].mean() > data["values"][data["returns"] < 0].mean()
    assert sorted(set(data["games"].tolist())) == list(range(6))
    assert report["games"] == 6
    # The masks are the legal actions of the positions: replay game 0.
    first = by_position(data)
    state = game.new_state(seed=9)
    for k in range(int((first["games"] == 0).sum())):
        legal = np.zeros(game.num_actions(), np.uint8)
        legal[state.legal_actions()] = 1
        assert (first["masks"][k] == legal).all(), k
        assert np.allclose(first["observations"][k], state.observation(state.to_move)), k
        if k + 1 < int((first["games"] == 0).sum()):
            # The next position tells which move was played.
            after = [a for a in state.legal_actions() if _next_matches(state, a, first["observations"][k + 1])]
            assert after, k
            state.apply_action(after[0])


def _next_matches(state, action, observation):
    s = state.clone()
    s.apply_action(action)
    return np.allclose(s.observation(s.to_move), observation)


def test_the_data_of_a_seed_is_the_same_in_any_number_of_shards(tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    whole.mkdir()
    split.mkdir()
    a = write_shards(whole, 1)
    b = write_shards(split, 4)
    assert a["positions"] == b["positions"]
    da, db = by_position(tabula.selfplay.load(whole)), by_position(tabula.selfplay.load(split))
    for k in da:
        assert (da[k] == db[k]).all(), k


def test_a_folder_missing_a_shard_is_refused(tmp_path):
    write_shards(tmp_path, 3)
    for f in tmp_path.glob("shard-1-of-3-*.npy"):
        f.unlink()
    with pytest.raises(ValueError, match=r"shards \[1\] of 3"):
        tabula.selfplay.load(tmp_path)


def test_a_game_without_integer_actions_is_refused():
    job, path, rules, _, _, _ = _tabula._plan(["selfplay", "campo-bello", "--seat", "random", "--games", "1"])
    with pytest.raises(tabula.TabulaError, match="does not number its moves"):
        _tabula._run_selfplay_shard(job, path, rules, 0, 1)

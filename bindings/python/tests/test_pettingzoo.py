"""tabula games as PettingZoo environments: PettingZoo's own tests."""

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
from pettingzoo.test import api_test, parallel_api_test, seed_test  # noqa: E402

import tabula  # noqa: E402
import tabula.pettingzoo as tpz  # noqa: E402
from conftest import ident  # noqa: E402

GAMES = [
    ("breakthrough", dict(rows=6, cols=6)),
    ("hasami-shogi", dict(max_plies=60)),
    ("campo-bello", {}),
    ("domin-up", dict(players=3)),
    ("tictactoe", {}),
    ("connect-four", {}),
    ("othello", dict(size=6)),
    ("hex", dict(size=5)),
    ("connect4", {}),
    ("go", dict(size=5)),
    # An endgame, so that random games end soon.
    ("chess", dict(fen="4k3/8/8/8/8/8/4P3/R3K2R w KQ - 0 1")),
    # GDL-II: chance's moves are drawn by the environment.
    ("krieg-tictactoe", {}),
    ("kuhn-poker", {}),
    ("pig", {}),
    # Played by clicks (one per square a draughts piece visits, three an
    # Amazons move).
    ("draughts", {}),
    ("draughts", dict(variant="english")),
    ("amazons", dict(size=6)),
    ("amazons", {}),
]



@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,options", GAMES, ids=[ident(g, o) for g, o in GAMES])
def test_api_and_seed_tests_pass(name, options):
    api_test(tpz.env(name, **options), num_cycles=100, verbose_progress=False)
    seed_test(lambda: tpz.env(name, **options), num_cycles=30)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_choices_made_at_once_have_the_parallel_api():
    parallel_api_test(tpz.parallel_env("rock-paper-scissors"), num_cycles=50)
    env = tpz.parallel_env("rock-paper-scissors")
    env.reset(seed=1)
    rock = tabula.load("rock-paper-scissors").new_state().move_to_action("rock")
    paper = tabula.load("rock-paper-scissors").new_state().move_to_action("paper")
    _, rewards, terms, _, _ = env.step({"left": paper, "right": rock})
    assert not any(terms.values())


def test_a_game_is_played_through_masks_and_rendered():
    env = tpz.env("breakthrough", rows=5, cols=5, render_mode="ansi")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    final = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = reward
            env.step(None)
            continue
        mask = obs["action_mask"]
        assert obs["observation"].dtype == np.float32 and mask.sum() == len(info["legal_moves"])
        env.step(int(rng.choice(np.flatnonzero(mask))))
    assert sorted(final.values()) == [-1.0, 1.0]
    assert "white (W)" in env.unwrapped.render()


def test_an_illegal_action_ends_the_game_with_a_penalty():
    env = tpz.env("tictactoe")
    env.reset(seed=0)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    env.step(illegal)
    assert env.rewards[env.possible_agents[0]] == -1 and all(env.terminations.values())

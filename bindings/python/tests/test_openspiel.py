"""tabula games in OpenSpiel: its own conformance test, its bots and tools."""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python.algorithms import get_all_states, ismcts, mcts  # noqa: E402
from open_spiel.python.observation import make_observation  # noqa: E402

import tabula  # noqa: E402
import tabula.openspiel as tos  # noqa: E402
from conftest import ident  # noqa: E402

GAMES = [
    ("breakthrough", dict(rows=5, cols=5)),
    ("hasami-shogi", {}),
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
    ("rock-paper-scissors", {}),
    # GDL-II: hidden marks; a hidden deal; a die.
    ("krieg-tictactoe", {}),
    ("kuhn-poker", {}),
    ("pig", {}),
    # Played by clicks: a draughts move is a click per square the piece
    # visits (one per jump), an Amazons move three.
    ("draughts", {}),
    ("draughts", dict(variant="english")),
    ("amazons", dict(size=6)),
    ("amazons", {}),
]


_names = {}


def registered(name, **options):
    """Registers a game once per test session (OpenSpiel's registry keeps
    every name) and loads it with `options`."""
    if name not in _names:
        _names[name] = tos.register(name)
    return pyspiel.load_game(_names[name], options)


@pytest.mark.parametrize("name,options", GAMES, ids=[ident(g, o) for g, o in GAMES])
def test_random_sim_test_passes(name, options):
    game = registered(name, **options)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    # A state serialised (as its moves) comes back the same.
    state = game.new_initial_state()
    for _ in range(4):
        if state.is_terminal():
            break
        state.apply_action(state.chance_outcomes()[-1][0] if state.is_chance_node() else state.legal_actions()[-1])
    _, again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
    assert str(again) == str(state) and again.history() == state.history()


def test_the_game_type_is_stated_truly():
    bt = registered("breakthrough", rows=5, cols=5).get_type()
    assert bt.information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert bt.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC
    du = registered("domin-up", players=3)
    assert du.num_players() == 3
    assert du.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert du.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert du.new_initial_state().is_chance_node()
    rps = registered("rock-paper-scissors").get_type()
    assert rps.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert rps.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert registered("campo-bello").num_distinct_actions() == 42  # clicks: 41 points, end
    kuhn = registered("kuhn-poker")
    assert kuhn.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kuhn.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    deal = kuhn.new_initial_state()
    assert deal.is_chance_node() and len(deal.chance_outcomes()) == 6
    assert abs(sum(p for _, p in deal.chance_outcomes()) - 1.0) < 1e-12


def test_get_all_states_of_tictactoe_agrees_with_openspiels_own():
    # Positions, told apart by how they print (transpositions merged).
    def positions(game):
        return get_all_states.get_all_states(game, include_terminals=True, to_string=str)

    assert len(positions(registered("tictactoe"))) == len(positions(pyspiel.load_game("tic_tac_toe"))) == 5478


def test_the_observer_api():
    game = registered("breakthrough", rows=5, cols=5)
    state = game.new_initial_state()
    obs = make_observation(game)
    obs.set_from(state, 0)
    assert obs.tensor.shape == (tabula.load("breakthrough", rows=5, cols=5).observation_size(),)
    # 10 white pieces, 10 black, white to move.
    assert obs.tensor.sum() == 21
    assert "white to move" in obs.string_from(state, 0)
    recall = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    state.apply_action(state.legal_actions()[0])
    assert recall.string_from(state, 1).endswith("moves: white a2-a3")
    # Domin-Up: a player's observation does not change when the others'
    # hands are dealt again.
    du = registered("domin-up", players=3)
    s = du.new_initial_state()
    s.apply_action(7)
    resampled = s.resample_from_infostate(s.current_player(), pyspiel.UniformProbabilitySampler(0.0, 1.0))
    p = s.current_player()
    assert resampled.information_state_string(p) == s.information_state_string(p)
    assert np.array_equal(np.array(resampled.observation_tensor(p)), np.array(s.observation_tensor(p)))


def test_openspiel_mcts_plays_breakthrough_to_the_end_against_tabula_mcts():
    game = registered("breakthrough", rows=5, cols=5)
    rng = np.random.RandomState(7)
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=60, evaluator=mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    ours = tabula.Controller("mcts:200", seed=7)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.current_player() == 0:
            action = bot.step(state)
        else:
            action = state.inner.move_to_action(ours.choose(state.inner))
        assert action in state.legal_actions()
        state.apply_action(action)
    assert sorted(state.returns()) == [-1.0, 1.0]
    print("winner:", state.inner.outcome())


def test_openspiel_ismcts_plays_domin_up():
    game = registered("domin-up", players=3)
    rng = np.random.RandomState(3)
    evaluator = mcts.RandomRolloutEvaluator(1, rng)
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=40, random_state=rng)
    state = game.new_initial_state()
    plies = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        elif state.current_player() == 0:
            state.apply_action(bot.step(state))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
        plies += 1
    assert abs(sum(state.returns())) < 1e-9 and plies > 10


def test_openspiel_ismcts_plays_kuhn_poker_from_what_it_saw():
    # GDL-II: chance deals (a chance node of six outcomes), each player sees
    # only its card; the bot searches states resampled from what it saw.
    game = registered("kuhn-poker")
    rng = np.random.RandomState(5)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), uct_c=2.0, max_simulations=50, random_state=rng)
    wins = 0
    for g in range(10):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            elif state.current_player() == g % 2:
                p = state.current_player()
                again = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(0.0, 1.0))
                assert again.information_state_string(p) == state.information_state_string(p)
                state.apply_action(bot.step(state))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        assert sorted(state.returns()) == [-1.0, 1.0]
        wins += state.returns()[g % 2] > 0
    print("ISMCTS won", wins, "of 10")

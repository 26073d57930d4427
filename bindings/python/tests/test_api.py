"""The Python API over the game layer: loading, playing, errors."""

import copy
import pickle
import threading

import pytest

import tabula
from conftest import perft_table


def test_every_game_of_the_folder_loads_from_anywhere(elsewhere):
    names = tabula.games()
    assert {"breakthrough", "hasami-shogi", "campo-bello", "domin-up", "tictactoe"} <= set(names)
    for name in names:
        game = tabula.load(name)
        assert game.players and game.title
        state = game.new_state()
        assert state.is_over() or state.legal_moves()


def test_options_are_checked_and_shape_the_game():
    game = tabula.load("breakthrough", rows=6, cols=5)
    assert dict(game.options) == {"rows": "6", "cols": "5"}
    assert len(game.new_state().legal_moves()) == 13
    with pytest.raises(tabula.OptionError, match="no option `size`"):
        tabula.load("breakthrough", size=6)
    with pytest.raises(tabula.OptionError, match="not allowed"):
        tabula.load("breakthrough", rows=40)
    assert tabula.load("domin-up", players=3).players == ["p1", "p2", "p3"]


def test_a_game_is_played_by_notation_and_by_action():
    game = tabula.load("breakthrough")
    state = game.new_state()
    assert state.to_move == "white" and state.current_player == 0
    by_text = state.clone()
    by_text.apply("e2-e3")
    by_action = state.clone()
    by_action.apply(state.move_to_action("e2-e3"))
    assert by_text == by_action and by_text.term == by_action.term
    assert by_text.history() == ["e2-e3"] and by_text.movers() == ["white"]
    assert state.history() == []  # clones are independent
    assert by_text.to_move == "black"
    for action in state.legal_actions():
        assert game.action_to_move(action) in state.legal_moves()
    assert sorted(state.legal_actions()) == state.legal_actions()


@pytest.mark.parametrize("name", ["breakthrough", "connect4", "tictactoe", "nim", "pig", "chess"])
def test_each_legal_move_text_makes_the_move_it_names(name):
    # Texts found through the actions (games whose notation needs no
    # position) or through the moves (chess): each makes a move that is
    # named, in the position it was made in, as the text said, and the
    # texts are as many as the moves and the actions.
    state = tabula.load(name).new_state(seed=3)
    rng = __import__("random").Random(7)
    for _ in range(12):
        if state.is_over():
            break
        texts = state.legal_moves()
        assert len(texts) == len(set(texts)) == state.perft(1) == len(state.legal_actions())
        for text in texts:
            after = state.clone()
            after.apply(text)
            assert after.history()[-1] == text, (name, text)
        state.apply_action(rng.choice(state.legal_actions()))


def test_a_refused_move_says_why_from_the_rules():
    state = tabula.load("breakthrough").new_state()
    with pytest.raises(tabula.IllegalMove) as e:
        state.apply("e1-e2")
    assert "in piece_move/12, `landing(DX, Target, Me, Captured)` failed, with Me = w, DX = 0, Target = w" in e.value.why
    with pytest.raises(tabula.IllegalMove) as e:
        state.apply("z9-z9")
    assert e.value.why is None
    with pytest.raises(tabula.AmbiguousMove) as e:
        state.apply("b2")
    assert e.value.why is None


def test_an_illegal_move_raises_and_changes_nothing():
    state = tabula.load("breakthrough").new_state()
    before = state.term
    with pytest.raises(tabula.IllegalMove) as e:
        state.apply("e2-e5")
    assert "e2-e3" in e.value.legal and "not a legal move" in str(e.value)
    with pytest.raises(tabula.IllegalMove):
        state.apply_action(10_000)
    with pytest.raises(TypeError):
        state.apply(2.5)
    assert state.term == before
    state.apply("e2-e3")  # and the state still plays


def test_an_ambiguous_prefix_raises_its_own_error_with_the_moves_it_could_be():
    state = tabula.load("breakthrough").new_state()
    before = state.term
    with pytest.raises(tabula.AmbiguousMove) as e:
        state.apply("e2")
    assert e.value.candidates == ["e2-d3", "e2-e3", "e2-f3"]
    assert "ambiguous" in str(e.value)
    # Still an IllegalMove to code that catches those.
    assert isinstance(e.value, tabula.IllegalMove)
    assert state.term == before
    state.apply("e2-f")  # a prefix of one move plays it
    assert state.history() == ["e2-f3"]


def test_a_random_game_ends_with_an_outcome_and_zero_sum_returns():
    game = tabula.load("breakthrough", rows=5, cols=5)
    state = game.new_state()
    state.random_playout(seed=3)
    assert state.is_over() and state.to_move is None and state.current_player == -1
    outcome = state.outcome()
    assert outcome["result"] == "winner" and outcome["player"] in game.players
    assert sorted(state.returns()) == [-1.0, 1.0]
    assert state.legal_moves() == [] and state.legal_actions() == []
    with pytest.raises(tabula.IllegalMove):
        state.apply(0)


def test_perft_matches_the_known_counts():
    for name in ["breakthrough", "tictactoe", "hasami-shogi"]:
        for options, rows in perft_table(name).items():
            kwargs = dict(o.split("=", 1) for o in options)
            state = tabula.load(name, **kwargs).new_state()
            for depth, nodes in rows:
                if nodes <= 300_000:
                    assert state.perft(depth) == nodes, (name, options, depth)


def test_hidden_hands_stay_hidden():
    game = tabula.load("domin-up", players=3)
    assert game.hidden_information and game.has_sampling
    state = game.new_state(seed=5)
    mine = state.display("p1")
    sampled = state.sample("p1", seed=9)
    assert sampled.term != state.term  # the other hands are dealt again
    assert sampled.display("p1") == mine  # and p1 cannot tell
    assert sampled.observation("p1") == state.observation("p1")
    assert sampled.information_state("p1") == state.information_state("p1")
    assert state.information_state("p1") != state.information_state("p2")
    assert state.view("p1")["hands"]


def test_choices_made_at_once_are_hidden_until_the_round_ends():
    game = tabula.load("rock-paper-scissors")
    assert game.simultaneous and game.hidden_information
    state = game.new_state()
    state.apply("rock")
    assert state.history("right") == ["?"] and state.history("left") == ["rock"]
    state.apply("paper")
    assert state.history("right") == ["rock", "paper"]


def test_scores_display_and_view():
    state = tabula.load("breakthrough").new_state()
    assert state.scores() == {"white": 16, "black": 16}
    assert "white to move" in state.display() and str(state) == state.display()
    view = state.view()
    assert len(view["sites"]) == 64 and len(view["pieces"]) == 32


def test_observations_have_the_announced_size():
    for name in ["breakthrough", "hasami-shogi", "campo-bello", "domin-up", "tictactoe", "connect-four"]:
        game = tabula.load(name)
        state = game.new_state()
        state.random_playout(seed=1)
        for player in game.players:
            assert len(state.observation(player)) == game.observation_size()
    layout = tabula.load("breakthrough").observation_layout()
    assert layout["source"] == "view/3" and len(layout["sites"]) == 64
    assert tabula.load("domin-up").observation_layout()["source"] == "observation/3"


def test_a_game_without_integer_actions_says_so(tmp_path):
    take = tmp_path / "take.rules"
    take.write_text(
        "title(take).\nplayers(_, [a, b]).\nother(a, b).\nother(b, a).\n"
        "to_move(s(P, _), P).\ngame_over(s(P, 0), winner(W)) :- other(P, W).\n"
        "initial_state(_, s(a, 5)).\n"
        "move(s(P, N), take(K), s(O, M)) :- member(K, [1, 2]), K =< N, M is N - K, other(P, O).\n"
    )
    game = tabula.load(str(take))
    assert not game.has_actions
    with pytest.raises(tabula.RulesError, match="does not number its moves"):
        game.num_actions()
    state = game.new_state()
    state.apply("take(2)")  # it still plays by notation
    assert state.to_move == "b"


def test_a_game_that_does_not_number_its_moves_is_played_by_clicks():
    """Campo Bello's moves are jump paths with removals: an action is a
    click on a point, as on the web board, and the last ends a move."""
    game = tabula.load("campo-bello")
    assert not game.has_actions and game.action_kind() == "clicks"
    assert game.num_actions() == 42  # 41 points and the end of a move
    state = game.new_state()
    first = state.legal_moves()[0]  # y3-y0
    for click in first.split("-"):
        assert state.to_move == "yellow"
        state.apply_action(next(a for a in state.legal_actions() if game.action_to_move(a) == f"click {click}"))
    assert state.history() == [first] and state.to_move == "blue"
    # A move whose clicks could go on is ended by the end action.
    state.random_playout(seed=2)
    assert state.is_over()
    again = game.new_state()
    again.apply_action(again.legal_actions()[0])
    assert "clicked:" in again.information_state("yellow")
    assert "clicked:" not in again.information_state("blue")
    assert len(again.observation("yellow")) == game.observation_size()
    with pytest.raises(tabula.IllegalMove, match="being made by clicks"):
        again.apply(first)


def test_computer_players_choose_legal_moves():
    state = tabula.load("breakthrough", rows=5, cols=5).new_state()
    for spec in ["random", "greedy", "minimax:2", "mcts:100"]:
        assert tabula.Controller(spec, seed=1).choose(state) in state.legal_moves()
    hidden = tabula.load("domin-up", players=3).new_state(seed=2)
    assert tabula.Controller("mcts:50").choose(hidden) in hidden.legal_moves()
    with pytest.raises(tabula.OptionError):
        tabula.Controller("alphazero")


def test_states_and_games_pickle_and_copy():
    game = tabula.load("domin-up", players=3)
    state = game.new_state(seed=4)
    state.apply(state.legal_moves()[0])
    again = pickle.loads(pickle.dumps(state))
    assert again == state and again.history() == state.history()
    assert again.legal_moves() == state.legal_moves()
    assert pickle.loads(pickle.dumps(game)).options == game.options
    assert copy.deepcopy(state) == state and copy.copy(game) is game
    # A sample keeps the moves made; its pickle keeps the sampled position.
    sampled = state.sample("p2", seed=3)
    again = pickle.loads(pickle.dumps(sampled))
    assert again == sampled and again.history("p2") == state.history("p2")
    # Moves named by notation/3 in their position (chess's SAN), and a
    # choice still hidden from the other seat, come back as they were.
    chess = tabula.load("chess").new_state()
    for m in ["e4", "e5", "Nf3", "Nc6", "Bb5"]:
        chess.apply(m)
    assert pickle.loads(pickle.dumps(chess)).history() == ["e4", "e5", "Nf3", "Nc6", "Bb5"]
    rps = tabula.load("rock-paper-scissors").new_state()
    rps.apply("rock")
    again = pickle.loads(pickle.dumps(rps))
    assert again.history("right") == ["?"] and again.history("left") == ["rock"]


def test_a_bad_rules_file_raises_with_its_place(tmp_path):
    bad = tmp_path / "bad.rules"
    bad.write_text("title(bad).\nplayers(_, [a, b]).\nmove(S, M, N) :- foo(.\n")
    with pytest.raises(tabula.RulesError) as e:
        tabula.load(str(bad))
    assert (e.value.file, e.value.line) == (str(bad), 3) and e.value.column > 1
    incomplete = tmp_path / "incomplete.rules"
    incomplete.write_text("title(x).\n")
    with pytest.raises(tabula.RulesError, match="required predicate players/2"):
        tabula.load(str(incomplete))
    with pytest.raises(tabula.UnknownGame, match="known games"):
        tabula.load("no-such-game")
    assert tabula.load("tictactoe").players == ["x", "o"]  # the interpreter goes on


def test_runaway_queries_stop_at_their_limits(tmp_path):
    loop = tmp_path / "loop.pl"
    loop.write_text("count(N) :- N1 is N + 1, count(N1).\n")
    with pytest.raises(tabula.LimitError, match="steps"):
        tabula.query(str(loop), "count(0)", max_steps=100_000)
    with pytest.raises(tabula.LimitError, match="seconds"):
        tabula.query(str(loop), "repeat, fail", timeout=0.2)
    assert tabula.query(str(loop), "X = 1 ; X = 2") == [{"X": "1"}, {"X": "2"}]
    with pytest.raises(tabula.RulesError):
        tabula.query(str(loop), "X = ")
    runaway = tmp_path / "runaway.rules"
    runaway.write_text(
        "title(r).\nplayers(_, [a, b]).\ninitial_state(_, s).\nto_move(s, a).\n"
        "game_over(_, _) :- fail.\nmove(s, M, s) :- repeat, M = x, fail.\n"
    )
    game = tabula.load(str(runaway))
    game.set_limits(timeout=0.3)
    with pytest.raises(tabula.LimitError):
        game.new_state().legal_moves()


def test_the_engine_runs_without_the_gil():
    """A long search in one thread leaves the interpreter free for others."""
    state = tabula.load("breakthrough").new_state()
    done = threading.Event()
    counted = []

    def search():
        state.perft(4)
        done.set()

    worker = threading.Thread(target=search)
    worker.start()
    n = 0
    while not done.is_set():
        n += 1
        if n % 1000 == 0:
            counted.append(n)
    worker.join()
    # Python code ran all through the search, not only before or after it.
    assert len(counted) > 10

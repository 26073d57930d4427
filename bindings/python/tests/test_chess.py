"""Chess (`games/chess.rules`) move for move against python-chess: random
games played in both at once, and at every position the same legal moves
in standard algebraic notation, the same FEN and the same end (checkmate,
stalemate, insufficient material, the fifty-move rule and threefold
repetition, which tabula applies as if claimed)."""

import os
import random

import pytest

import tabula

if os.environ.get("CI") == "true":
    import chess  # CI installs python-chess: a missing one is a failure
else:
    chess = pytest.importorskip("chess")


def expected_end(board):
    """The end as tabula's rules judge it, from python-chess."""
    if board.is_checkmate():
        return ("winner", "black" if board.turn == chess.WHITE else "white")
    if (
        board.is_stalemate()
        or board.is_insufficient_material()
        or board.halfmove_clock >= 100
        or board.is_repetition(3)
    ):
        return ("draw",)
    return None


def ended(state):
    o = state.outcome()
    if o is None:
        return None
    return ("winner", o["player"]) if o["result"] == "winner" else ("draw",)


def play_alongside(game, rng, fen=None):
    """One random game in both; the number of positions compared."""
    board = chess.Board(fen) if fen else chess.Board()
    state = game.new_state()
    positions = 0
    while True:
        positions += 1
        end = expected_end(board)
        assert ended(state) == end, board.fen()
        if end:
            return positions
        theirs = sorted(board.san(m) for m in board.legal_moves)
        assert sorted(state.legal_moves()) == theirs, board.fen()
        assert str(state).splitlines()[-1] == "FEN " + board.fen()
        move = rng.choice(theirs)
        board.push_san(move)
        state.apply(move)


def test_random_games_agree_with_python_chess():
    game = tabula.load("chess")
    rng = random.Random(2026)
    positions = sum(play_alongside(game, rng) for _ in range(24))
    # Random games run long (most end in a draw by material or the
    # fifty-move rule), so this is thousands of positions.
    assert positions > 5000


def test_endgames_from_a_fen_agree_with_python_chess():
    # Positions rich in the rare rules: promotion, en passant, castling
    # with attacked squares, mates with few pieces.
    fens = [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "8/P1k5/K7/8/8/8/8/8 w - - 0 1",
    ]
    rng = random.Random(7)
    for fen in fens:
        game = tabula.load("chess", fen=fen)
        for _ in range(3):
            assert play_alongside(game, rng, fen) >= 1


def test_moves_are_typed_in_san_or_uci_and_errors_name_the_legal_ones():
    state = tabula.load("chess").new_state()
    state.apply("e4")
    state.apply("e7e5")
    state.apply("Nf3")
    assert state.history() == ["e4", "e5", "Nf3"]
    with pytest.raises(tabula.IllegalMove) as e:
        state.apply("Ke7e6")
    assert "Nc6" in str(e.value)
    with pytest.raises(tabula.RulesError) as e:
        tabula.load("chess", fen="8/8/8/8/8/8/8/8 w - - 0 1").new_state()
    assert "white must have exactly one king" in str(e.value)

"""Draughts (`games/draughts.rules`) move for move against pydraughts:
random games of international draughts and English checkers played in
both at once; at every position, the same legal moves, each taken from the
same square to the same square and leading to the same position (so the
same pieces captured: the majority rule, flying kings, men capturing
backwards, crowning)."""

import os
import random

import pytest

import tabula

if os.environ.get("CI") == "true":
    import draughts  # CI installs pydraughts: a missing one is a failure
else:
    draughts = pytest.importorskip("draughts")

VARIANTS = {"international": "standard", "english": "english"}


def parse_fen(fen):
    """A PDN FEN as (side, white squares, black squares), kings marked K."""
    side, *fields = fen.split(":")
    pieces = {}
    for f in fields:
        colour, squares = f[0], f[1:]
        pieces[colour] = frozenset(s for s in squares.split(",") if s)
    return side, pieces.get("W", frozenset()), pieces.get("B", frozenset())


def theirs(board):
    """pydraughts' moves: (from, to, position after)."""
    out = []
    for m in board.legal_moves():
        board.push(m)
        out.append((m.steps_move[0], m.steps_move[-1], parse_fen(board.fen)))
        board.pop()
    return sorted(out, key=repr)


def ours_one(state, text):
    """A tabula move as (from, to, position after)."""
    squares = [int(x) for x in text.replace("x", "-").split("-")]
    after = state.clone()
    after.apply(text)
    return squares[0], squares[-1], parse_fen(after.position_text())


def ours(state):
    """tabula's moves: (from, to, position after)."""
    return sorted((ours_one(state, t) for t in state.legal_moves()), key=repr)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_random_games_agree_with_pydraughts(variant):
    game = tabula.load("draughts", variant=variant)
    rng = random.Random(11)
    positions = 0
    for _ in range(12):
        board = draughts.Board(variant=VARIANTS[variant])
        state = game.new_state()
        for _ply in range(300):
            if state.is_over() or board.is_over():
                break
            positions += 1
            assert parse_fen(state.position_text()) == parse_fen(board.fen)
            mine = ours(state)
            assert mine == theirs(board), board.fen
            # The same move in both: tabula's i-th, found in pydraughts by
            # where it goes and what it leaves.
            i = rng.randrange(len(mine))
            text = sorted(state.legal_moves(), key=lambda t: repr(ours_one(state, t)))[i]
            for m in board.legal_moves():
                board.push(m)
                if (m.steps_move[0], m.steps_move[-1], parse_fen(board.fen)) == mine[i]:
                    break
                board.pop()
            else:
                pytest.fail(f"{text} not found in pydraughts at {board.fen}")
            state.apply(text)
        if state.is_over() and state.outcome()["result"] == "winner":
            # A player who cannot move has lost: pydraughts agrees.
            assert board.is_over() and not list(board.legal_moves())
    print(f"{variant}: {positions} positions agree")
    assert positions > 500

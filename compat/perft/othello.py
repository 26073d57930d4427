#!/usr/bin/env python3
"""Othello perft, written apart from games/othello.rules to check its counts.

Plain Python, no shared code or representation: a dict of squares and
direct ray walks. Conventions as in the game interface: perft(s, 0) = 1; a
finished game counts 0 at any depth above 0; a player with no disc to place
passes (a move) when the other player has one; the game ends when neither
has.

    python3 compat/perft/othello.py SIZE DEPTH   # prints "depth nodes" lines
"""
import sys

DIRECTIONS = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]


def start(n):
    h = n // 2
    board = {(x, y): None for x in range(1, n + 1) for y in range(1, n + 1)}
    board[(h, h)] = board[(h + 1, h + 1)] = "w"
    board[(h + 1, h)] = board[(h, h + 1)] = "b"
    return board


def flips(board, square, me):
    them = "w" if me == "b" else "b"
    out = []
    for dx, dy in DIRECTIONS:
        line = []
        x, y = square[0] + dx, square[1] + dy
        while board.get((x, y)) == them:
            line.append((x, y))
            x, y = x + dx, y + dy
        if line and board.get((x, y)) == me:
            out.extend(line)
    return out


def placements(board, me):
    return [(sq, f) for sq, v in board.items() if v is None for f in [flips(board, sq, me)] if f]


def perft(board, me, depth):
    if depth == 0:
        return 1
    them = "w" if me == "b" else "b"
    mine = placements(board, me)
    if not mine:
        if not placements(board, them):
            return 0  # the game is over
        return perft(board, them, depth - 1)  # a pass
    total = 0
    for sq, f in mine:
        nxt = dict(board)
        nxt[sq] = me
        for s in f:
            nxt[s] = me
        total += perft(nxt, them, depth - 1)
    return total


if __name__ == "__main__":
    size, depth = int(sys.argv[1]), int(sys.argv[2])
    b = start(size)
    for d in range(1, depth + 1):
        print(d, perft(b, "b", d), flush=True)

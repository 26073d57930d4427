#!/usr/bin/env python3
"""Amazons perft, written apart from games/amazons.rules to check its counts.

Plain Python: a dict of squares, the amazon lifted off the board before
its arrow is shot. The start: white's amazons on the columns K and
SIZE+1-K of row 1 and the rows K of the side columns (K = SIZE//3 + 1:
a4, d1, g1, j4 on 10x10), black's mirrored on the far side. A player who
cannot move loses: a finished game counts 0 at any depth above 0.

    python3 compat/perft/amazons.py SIZE DEPTH   # prints "depth nodes" lines
"""
import sys

LINES = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]


def start(n):
    k = n // 3 + 1
    board = {(x, y): "." for x in range(1, n + 1) for y in range(1, n + 1)}
    for x, y in [(k, 1), (n + 1 - k, 1), (1, k), (n, k)]:
        board[(x, y)] = "w"
        board[(x, n + 1 - y)] = "b"
    return board


def reach(board, sq):
    for dx, dy in LINES:
        x, y = sq[0] + dx, sq[1] + dy
        while board.get((x, y)) == ".":
            yield (x, y)
            x, y = x + dx, y + dy


def moves(board, me):
    for sq in [s for s, v in board.items() if v == me]:
        for to in list(reach(board, sq)):
            board[sq], board[to] = ".", me
            for arrow in list(reach(board, to)):
                yield sq, to, arrow
            board[sq], board[to] = me, "."


def perft(board, me, depth):
    if depth == 0:
        return 1
    them = "b" if me == "w" else "w"
    total = 0
    for sq, to, arrow in list(moves(board, me)):
        board[sq], board[to], board[arrow] = ".", me, "*"
        total += perft(board, them, depth - 1)
        board[arrow], board[to], board[sq] = ".", ".", me
    return total


if __name__ == "__main__":
    n, depth = int(sys.argv[1]), int(sys.argv[2])
    b = start(n)
    for d in range(1, depth + 1):
        print(d, perft(b, "w", d), flush=True)

#!/usr/bin/env python3
"""Hex perft, written apart from games/hex.rules to check its counts.

Plain Python: a dict of cells, a union of the winner's chain found by a
flood fill from the whole first side (not from the last stone, as the rules
do). Conventions as in the game interface: perft(s, 0) = 1, a won game
counts 0 at any depth above 0. With the swap rule, blue's first move may
be `swap`: red's stone at (x, y) becomes blue's at (y, x).

    python3 compat/perft/hex.py SIZE DEPTH [noswap]   # "depth nodes" lines
"""
import sys

NEIGHBOURS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)]


def won(board, n, who):
    """Whether `who` ("r": top to bottom, "b": left to right) has joined its sides."""
    if who == "r":
        todo = [(x, 1) for x in range(1, n + 1) if board[(x, 1)] == "r"]
        done = lambda c: c[1] == n
    else:
        todo = [(1, y) for y in range(1, n + 1) if board[(1, y)] == "b"]
        done = lambda c: c[0] == n
    seen = set(todo)
    while todo:
        c = todo.pop()
        if done(c):
            return True
        for dx, dy in NEIGHBOURS:
            d = (c[0] + dx, c[1] + dy)
            if board.get(d) == who and d not in seen:
                seen.add(d)
                todo.append(d)
    return False


def perft(board, n, who, ply, swap, depth):
    if depth == 0:
        return 1
    other = "b" if who == "r" else "r"
    if won(board, n, other):
        return 0
    total = 0
    for c, v in board.items():
        if v is None:
            board[c] = who
            total += perft(board, n, other, ply + 1, swap, depth - 1)
            board[c] = None
    if swap and ply == 1:
        (x, y), = [c for c, v in board.items() if v == "r"]
        nxt = dict(board)
        nxt[(x, y)] = None
        nxt[(y, x)] = "b"
        total += perft(nxt, n, "r", ply + 1, swap, depth - 1)
    return total


if __name__ == "__main__":
    n, depth = int(sys.argv[1]), int(sys.argv[2])
    swap = "noswap" not in sys.argv[3:]
    board = {(x, y): None for x in range(1, n + 1) for y in range(1, n + 1)}
    for d in range(1, depth + 1):
        print(d, perft(board, n, "r", 0, swap, d), flush=True)

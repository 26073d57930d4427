#!/usr/bin/env python3
"""An independent solver of small games, to check `tabula solve`.

The rules here are written anew from the games' descriptions, in Python,
sharing nothing with the .rules files: tic-tac-toe, Connect Four on any
board, and Hex (red joins the top and bottom rows, blue the left and right
columns; cell (x, y) touches (x+-1, y), (x, y+-1), (x+1, y-1), (x-1, y+1);
with the swap rule, blue may answer red's first stone by taking it over,
mirrored across the long diagonal). Each game is solved by plain negamax
over every position, remembered: no pruning, nothing clever.

    compat/solve.py tictactoe
    compat/solve.py connect4 ROWS COLS
    compat/solve.py hex SIZE SWAP        (SWAP: yes or no)
    compat/solve.py random-tictactoe     (each result's chance in random play)

prints {"winner": seat or null, "best": [the first moves that keep the
value], "moves": n} as JSON, in the notation tabula writes.
"""

import json
import sys
from functools import lru_cache

sys.setrecursionlimit(10000)


def solve(start, seats, moves, play, result):
    """Negamax: the value of a position for the seat to move (1, 0, -1)."""

    @lru_cache(maxsize=None)
    def value(s):
        r = result(s)
        if r is not None:
            return r
        return max(-value(play(s, m)) for m in moves(s))

    first = [(m, -value(play(start, m))) for m in moves(start)]
    v = max(x for _, x in first)
    winner = None if v == 0 else (seats[0] if v > 0 else seats[1])
    return {"winner": winner, "best": sorted(m for m, x in first if x == v), "moves": len(first)}


def tictactoe():
    # A state: (board of 9, seat to move: 0 or 1). result: for the mover.
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]

    def result(s):
        b, p = s
        for a, c, d in lines:
            if b[a] != "." and b[a] == b[c] == b[d]:
                return 1 if b[a] == "xo"[p] else -1
        return 0 if "." not in b else None

    def moves(s):
        return [i for i, c in enumerate(s[0]) if c == "."]

    def play(s, i):
        b, p = s
        return (b[:i] + "xo"[p] + b[i + 1:], 1 - p)

    out = solve(("." * 9, 0), ["x", "o"], moves, play, result)
    out["best"] = [f"cell{i}" for i in out["best"]]
    return out


def connect4(rows, cols):
    # A state: (columns as strings from the bottom, seat to move).
    def result(s):
        cs, p = s
        grid = {(x, y): c for x, col in enumerate(cs) for y, c in enumerate(col)}
        for (x, y), c in grid.items():
            for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
                if all(grid.get((x + k * dx, y + k * dy)) == c for k in range(4)):
                    return 1 if c == "rb"[p] else -1
        return 0 if all(len(col) == rows for col in cs) else None

    def moves(s):
        return [x for x, col in enumerate(s[0]) if len(col) < rows]

    def play(s, x):
        cs, p = s
        return (cs[:x] + (cs[x] + "rb"[p],) + cs[x + 1:], 1 - p)

    out = solve((("",) * cols, 0), ["red", "blue"], moves, play, result)
    out["best"] = [str(x + 1) for x in out["best"]]
    return out


def hex_game(n, swap):
    cells = [(x, y) for y in range(1, n + 1) for x in range(1, n + 1)]

    def joined(board, colour):
        # Red: row 1 to row n; blue: column 1 to column n.
        if colour == "r":
            todo = [c for c in cells if c[1] == 1 and board[c] == "r"]
            goal = lambda c: c[1] == n
        else:
            todo = [c for c in cells if c[0] == 1 and board[c] == "b"]
            goal = lambda c: c[0] == n
        seen = set(todo)
        while todo:
            x, y = todo.pop()
            if goal((x, y)):
                return True
            for d in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1)):
                c = (x + d[0], y + d[1])
                if c in board and board[c] == colour and c not in seen:
                    seen.add(c)
                    todo.append(c)
        return False

    # A state: (stones as a string over `cells`, seat to move, ply).
    def board_of(stones):
        return dict(zip(cells, stones))

    def result(s):
        stones, p, _ = s
        b = board_of(stones)
        for colour in "rb":
            if joined(b, colour):
                return 1 if colour == "rb"[p] else -1
        return None

    def moves(s):
        stones, p, ply = s
        ms = [i for i, c in enumerate(stones) if c == "."]
        if swap and ply == 1:
            ms.append("swap")
        return ms

    def play(s, m):
        stones, p, ply = s
        if m == "swap":
            (i,) = [k for k, c in enumerate(stones) if c == "r"]
            x, y = cells[i]
            j = cells.index((y, x))
            new = ["."] * len(cells)
            new[j] = "b"
            return ("".join(new), 1 - p, ply + 1)
        return (stones[:m] + "rb"[p] + stones[m + 1:], 1 - p, ply + 1)

    out = solve(("." * (n * n), 0, 0), ["red", "blue"], moves, play, result)
    out["best"] = sorted("abcdefghijklmnopqrs"[cells[i][0] - 1] + str(cells[i][1]) for i in out["best"])
    return out


def random_tictactoe():
    """The exact chances of each result when both seats play uniformly at
    random (to check the statistics of `tabula analyze`)."""
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]

    @lru_cache(maxsize=None)
    def chances(b, p):
        for a, c, d in lines:
            if b[a] != "." and b[a] == b[c] == b[d]:
                return (1.0, 0.0, 0.0) if b[a] == "x" else (0.0, 1.0, 0.0)
        empty = [i for i, c in enumerate(b) if c == "."]
        if not empty:
            return (0.0, 0.0, 1.0)
        total = [0.0, 0.0, 0.0]
        for i in empty:
            r = chances(b[:i] + "xo"[p] + b[i + 1:], 1 - p)
            total = [t + x / len(empty) for t, x in zip(total, r)]
        return tuple(total)

    x, o, draw = chances("." * 9, 0)
    return {"x": x, "o": o, "draw": draw}


def main(argv):
    game = argv[1] if len(argv) > 1 else ""
    if game == "random-tictactoe":
        out = random_tictactoe()
    elif game == "tictactoe":
        out = tictactoe()
    elif game == "connect4" and len(argv) == 4:
        out = connect4(int(argv[2]), int(argv[3]))
    elif game == "hex" and len(argv) == 4:
        out = hex_game(int(argv[2]), argv[3] == "yes")
    else:
        sys.exit(__doc__)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv)

#!/usr/bin/env python3
"""Go perft, written apart from games/go.rules to check its counts.

Plain Python: the board a tuple of points, chains found by flood fill after
the stone is placed, and positional superko checked against the set of the
boards themselves (not hashes, as the rules do). A move is a point or a
pass; two passes in a row end the game. Conventions as in the game
interface: perft(s, 0) = 1, a finished game counts 0 at any depth above 0.

    python3 compat/perft/go.py SIZE DEPTH   # "depth nodes" lines
"""
import sys


def neighbours(n, p):
    x, y = p % n, p // n
    if x > 0:
        yield p - 1
    if x < n - 1:
        yield p + 1
    if y > 0:
        yield p - n
    if y < n - 1:
        yield p + n


def chain_and_liberties(board, n, p):
    colour = board[p]
    chain, todo, liberties = {p}, [p], set()
    while todo:
        q = todo.pop()
        for r in neighbours(n, q):
            if board[r] == ".":
                liberties.add(r)
            elif board[r] == colour and r not in chain:
                chain.add(r)
                todo.append(r)
    return chain, liberties


def play(board, n, p, me):
    """The board after `me` plays at p, or None when it is suicide."""
    them = "w" if me == "b" else "b"
    cells = list(board)
    cells[p] = me
    for q in neighbours(n, p):
        if cells[q] == them:
            chain, liberties = chain_and_liberties(cells, n, q)
            if not liberties:
                for r in chain:
                    cells[r] = "."
    if not chain_and_liberties(cells, n, p)[1]:
        return None
    return tuple(cells)


def perft(board, n, me, passes, seen, depth):
    if depth == 0:
        return 1
    if passes >= 2:
        return 0
    them = "w" if me == "b" else "b"
    total = perft(board, n, them, passes + 1, seen, depth - 1)  # the pass
    for p in range(n * n):
        if board[p] != ".":
            continue
        after = play(board, n, p, me)
        if after is None or after in seen:
            continue
        seen.add(after)
        total += perft(after, n, them, 0, seen, depth - 1)
        seen.remove(after)
    return total


def main():
    n, depth = int(sys.argv[1]), int(sys.argv[2])
    start = tuple("." * (n * n))
    for d in range(1, depth + 1):
        print(d, perft(start, n, "b", 0, {start}, d))


if __name__ == "__main__":
    main()

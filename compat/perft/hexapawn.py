"""Hexapawn perft, written apart from the rules, to check the book's
tutorial game (docs/src/tutorial/hexapawn.rules).

    python3 compat/perft/hexapawn.py SIZE DEPTH

prints `depth nodes` for each depth from 1. A position is (mover, white
pawns, black pawns) with pawns as (column, row) sets; the game is over when
the player who just moved has a pawn on the far row, or the player to move
has no move.
"""

import sys


def moves(size, mover, white, black):
    own, other = (white, black) if mover == "w" else (black, white)
    dy = 1 if mover == "w" else -1
    out = []
    for x, y in sorted(own):
        y2 = y + dy
        if not 1 <= y2 <= size:
            continue
        if (x, y2) not in white and (x, y2) not in black:
            out.append(((x, y), (x, y2)))
        for x2 in (x - 1, x + 1):
            if 1 <= x2 <= size and (x2, y2) in other:
                out.append(((x, y), (x2, y2)))
    return out


def play(mover, white, black, move):
    src, dst = move
    if mover == "w":
        return "b", (white - {src}) | {dst}, black - {dst}
    return "w", white - {dst}, (black - {src}) | {dst}


def over(size, mover, white, black):
    if mover == "b" and any(y == size for _, y in white):
        return True
    if mover == "w" and any(y == 1 for _, y in black):
        return True
    return not moves(size, mover, white, black)


def perft(size, pos, depth):
    if depth == 0:
        return 1
    if over(size, *pos):
        return 0
    return sum(perft(size, play(*pos, m), depth - 1) for m in moves(size, *pos))


def main():
    size, depth = int(sys.argv[1]), int(sys.argv[2])
    start = ("w", frozenset((x, 1) for x in range(1, size + 1)), frozenset((x, size) for x in range(1, size + 1)))
    for d in range(1, depth + 1):
        print(d, perft(size, start, d))


if __name__ == "__main__":
    main()

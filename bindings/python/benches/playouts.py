"""Random playouts of Breakthrough 8x8 driven from Python, one thread:
tabula's Python API against OpenSpiel's own C++ Breakthrough, with the
same loop (legal actions, a random choice, apply, until the game ends),
and tabula's in-engine playouts for reference.

    python bindings/python/benches/playouts.py [SECONDS] [GAME]

GAME is tabula's side (default `breakthrough`, the rules language's;
`breakthrough-8x8` is the GDL game, played on its network).
"""

import random
import sys
import time

import tabula


def python_loop(new_state, legal, apply, over, seconds):
    """Playouts, plies and seconds spent by the Python loop in `seconds`."""
    rng = random.Random(1)
    games = plies = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = new_state()
        while not over(state):
            apply(state, rng.choice(legal(state)))
            plies += 1
        games += 1
    return games, plies, time.perf_counter() - start


# Rounds the seconds are split into: each row is measured in every round,
# the rows one after another, and summed over the rounds, so that a machine
# whose speed drifts (a shared one) slows every row alike.
ROUNDS = 4


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    name = sys.argv[2] if len(sys.argv) > 2 else "breakthrough"
    game = tabula.load(name)
    # tabula's two ways of stepping: (new state, legal, apply, over).
    by_action = (game.new_state, lambda s: s.legal_actions(), lambda s, a: s.apply_action(a), lambda s: s.is_over())
    by_text = (game.new_state, lambda s: s.legal_moves(), lambda s, m: s.apply(m), lambda s: s.is_over())
    # Unmeasured first: a clause gets native code at its 100th call, which
    # the first playouts pay for (Cranelift compiling); the rows are the
    # steady state, as OpenSpiel's is.
    for way in (by_action, by_text):
        python_loop(*way, 0.5)
    try:
        import pyspiel

        os_game = pyspiel.load_game("breakthrough")
        openspiel = (
            os_game.new_initial_state,
            lambda s: s.legal_actions(),
            lambda s, a: s.apply_action(a),
            lambda s: s.is_terminal(),
        )
    except ImportError:
        openspiel = None
    # The loop's own cost: the same loop over a stand-in that does nothing
    # (a fixed list of 25 actions, games of 64 plies), which OpenSpiel's
    # figure pays too.
    actions = list(range(100, 125))
    stand_in = (list, lambda s: actions, lambda s, a: s.append(a), lambda s: len(s) >= 64)

    def rust_steps(slice_):
        return game._step_playouts(slice_, 1)

    # Game.bench plays a number of playouts: as many as the last round's
    # rate fills the slice with.
    engine_rate = [100.0]

    def engine(slice_):
        report = game.bench(playouts=max(20, int(engine_rate[0] * slice_)), seed=1)
        engine_rate[0] = report["playouts_per_second"]
        return report["playouts"], report["plies"], report["playouts"] / report["playouts_per_second"]

    rows = [
        ("tabula, Python API (legal_actions / apply_action)", lambda t: python_loop(*by_action, t)),
        ("OpenSpiel C++ breakthrough, from Python", openspiel and (lambda t: python_loop(*openspiel, t))),
        ("tabula, Python API by text (legal_moves / apply)", lambda t: python_loop(*by_text, t)),
        ("tabula, the same steps in Rust (the engine's cost)", rust_steps),
        ("tabula, playouts inside the engine (Game.bench)", engine),
        ("the loop alone", lambda t: python_loop(*stand_in, t)),
    ]
    sums = [[0, 0, 0.0] for _ in rows]
    for _ in range(ROUNDS):
        for (_, run), total in zip(rows, sums):
            if run:
                for i, x in enumerate(run(seconds / ROUNDS)):
                    total[i] += x
    rate = [g / t if t else float("nan") for g, _, t in sums]
    length = [p / g if g else float("nan") for g, p, _ in sums]
    head = f"Breakthrough 8x8 (tabula: {name}), random playouts, one thread, {ROUNDS} rounds"
    print(head)
    print(f"{'':52} {'playouts/s':>11} {'plies/game':>11} {'/ OpenSpiel':>11}")
    for i, (label, run) in enumerate(rows[:-1]):
        if not run:
            label = "OpenSpiel (not installed)"
        print(f"{label:52} {rate[i]:11.1f} {length[i]:11.2f} {rate[i] / rate[1]:11.2f}")
    # The Python layer's cost a ply: the API's loop against the same steps
    # in Rust, less the loop's own cost.
    loop = 1 / (rate[5] * length[5])
    layer = (1 / (rate[0] * length[0]) - 1 / (rate[3] * length[3]) - loop) * 1e6
    print(f"the Python loop's own cost a ply: {loop * 1e6:.2f} us")
    print(f"the Python layer's cost a ply (integer actions), less the loop's: {layer:.2f} us")


if __name__ == "__main__":
    main()

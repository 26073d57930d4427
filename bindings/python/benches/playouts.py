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
    """Playouts per second and plies per playout of the Python loop."""
    rng = random.Random(1)
    games = plies = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = new_state()
        while not over(state):
            apply(state, rng.choice(legal(state)))
            plies += 1
        games += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, plies / games


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    name = sys.argv[2] if len(sys.argv) > 2 else "breakthrough"
    rows = []
    game = tabula.load(name)
    # tabula's two ways of stepping: (new state, legal, apply, over).
    by_action = (game.new_state, lambda s: s.legal_actions(), lambda s, a: s.apply_action(a), lambda s: s.is_over())
    by_text = (game.new_state, lambda s: s.legal_moves(), lambda s, m: s.apply(m), lambda s: s.is_over())
    # Unmeasured first: a clause gets native code at its 100th call, which
    # the first playouts pay for (Cranelift compiling); the rows are the
    # steady state, as OpenSpiel's is.
    for way in (by_action, by_text):
        python_loop(*way, 0.5)
    rate, length = python_loop(*by_action, seconds)
    rows.append(("tabula, Python API (legal_actions / apply_action)", rate, length))
    try:
        import pyspiel

        os_game = pyspiel.load_game("breakthrough")
        rate, length = python_loop(
            os_game.new_initial_state,
            lambda s: s.legal_actions(),
            lambda s, a: s.apply_action(a),
            lambda s: s.is_terminal(),
            seconds,
        )
        rows.append(("OpenSpiel C++ breakthrough, from Python", rate, length))
    except ImportError:
        rows.append(("OpenSpiel (not installed)", float("nan"), float("nan")))
    rate, length = python_loop(*by_text, seconds)
    rows.append(("tabula, Python API by text (legal_moves / apply)", rate, length))
    # The loop's own cost: the same loop over a stand-in that does nothing
    # (a fixed list of 25 actions, games of 64 plies), which OpenSpiel's
    # figure pays too.
    actions = list(range(100, 125))
    rate, length = python_loop(list, lambda s: actions, lambda s, a: s.append(a), lambda s: len(s) >= 64, seconds)
    loop = 1 / (rate * length)
    playouts, plies, spent = game._step_playouts(seconds, 1)
    rows.append(("tabula, the same steps in Rust (the engine's cost)", playouts / spent, plies / playouts))
    report = game.bench(playouts=max(200, int(rows[0][1] * seconds)), seed=1)
    rows.append(
        ("tabula, playouts inside the engine (Game.bench)", report["playouts_per_second"], report["plies"] / report["playouts"])
    )
    print(f"{'Breakthrough 8x8 (tabula: ' + name + '), random playouts, one thread':52} {'playouts/s':>11} {'plies/game':>11}")
    for name, rate, length in rows:
        print(f"{name:52} {rate:11.1f} {length:11.2f}")
    # The Python layer's cost a ply: the API's loop against the same steps
    # in Rust, less the loop's own cost.
    api, rust = rows[0], rows[3]
    layer = (1 / (api[1] * api[2]) - 1 / (rust[1] * rust[2]) - loop) * 1e6
    print(f"the Python loop's own cost a ply: {loop * 1e6:.2f} us")
    print(f"the Python layer's cost a ply (integer actions), less the loop's: {layer:.2f} us")


if __name__ == "__main__":
    main()

"""Learn Connect Four from tabula's self-play, on the CPU, in minutes.

The loop of AlphaZero, small:

1. **Self-play**: ``tabula selfplay`` (here through ``tabula.cluster``, so
   no ``tabula`` binary is needed) plays games between MCTS players
   (``mcts:200``) and writes every position: the mover's observation, the
   legal actions, the search's visit counts, what the search expected of
   its move and how the game ended for the mover. Each position is used
   twice, as it is and mirrored left to right.
2. **Training**: a small network (two hidden layers) learns, with JAX and
   Optax, to predict the visit counts, sharpened (the policy head) and the
   result (the value head: the mean of the search's expectation and the
   game's end, far less noisy than the end alone). A tenth of the games is
   held out, and the weights kept are those of the epoch that predicts
   them best.
3. **Playing**: the network guides OpenSpiel's own MCTS (PUCT: its policy
   as the prior, its value instead of random rollouts), on tabula's
   Connect Four as an OpenSpiel game, against ``random`` and ``greedy``
   (tabula's controllers); the same search with random rollouts and no
   network is measured beside it, so the gain is the network's.

Run it (``pip install "tabula[openspiel,cluster,learn]"``: OpenSpiel, Ray,
JAX, Optax and Matplotlib); on two cores, about 15 minutes::

    python learn_connect4.py --plot curve.svg --json run.json

It prints the learning curve and the results, and with ``--json`` writes
them as one JSON document.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

import tabula
import tabula.cluster
import tabula.openspiel as tos

GAME = "connect4"


def self_play(games: int, iterations: int, seed: int, out: str) -> dict:
    """Plays `games` games between `mcts:ITERATIONS` players and loads
    what they wrote."""
    seat = f"mcts:{iterations}"
    argv = ["selfplay", GAME, "--games", str(games), "--seat", seat, "--seat", seat, "--seed", str(seed), "--out", out]
    tabula.cluster.run(argv)
    return tabula.selfplay.load(out)


def mirror(game, data: dict) -> dict:
    """The positions reflected left to right (Connect Four looks the same
    in a mirror), found from the observation's layout: each plane over the
    sites is reordered so that column c becomes column (cols + 1 - c), the
    rest (whose turn) stays; actions (one per column) are reversed."""
    layout = game.observation_layout()
    sites = layout["sites"]
    cols = max(int(s.split("-")[0]) for s in sites)
    index = {s: i for i, s in enumerate(sites)}
    flip = [index[f"{cols + 1 - int(c)}-{r}"] for c, r in (s.split("-") for s in sites)]
    size = layout["size"]
    planes = (size - len(layout["players"])) // len(sites)
    order = [p * len(sites) + f for p in range(planes) for f in flip]
    order += list(range(planes * len(sites), size))
    out = dict(data)
    out["observations"] = data["observations"][:, order]
    out["masks"] = data["masks"][:, ::-1]
    out["policies"] = data["policies"][:, ::-1]
    return out


def augmented(game, data: dict) -> dict:
    """The positions and their mirror images (a mirror image stays in its
    game, so the held-out games hold out their reflections too)."""
    m = mirror(game, data)
    return {k: np.concatenate([data[k], m[k]]) for k in ("observations", "masks", "policies", "returns", "values", "games")}


def init(key, sizes):
    """The weights of a network with layers of `sizes`, and two heads."""
    import jax

    params = []
    keys = jax.random.split(key, len(sizes) + 1)
    for k, (a, b) in zip(keys, zip(sizes[:-1], sizes[1:])):
        params.append((jax.random.normal(k, (a, b)) * math.sqrt(2.0 / a), np.zeros(b, np.float32)))
    return params


def forward(params, x):
    """Policy logits and value in (-1, 1) for a batch of observations."""
    import jax.numpy as jnp

    *body, policy, value = params
    for w, b in body:
        x = jnp.maximum(x @ w + b, 0.0)
    return x @ policy[0] + policy[1], jnp.tanh(x @ value[0] + value[1])[:, 0]


def loss(params, batch):
    """Cross-entropy of the search's visits under the legal actions'
    softmax, plus the squared error of the value (against the mean of the
    search's expectation and the game's end)."""
    import jax
    import jax.numpy as jnp

    logits, value = forward(params, batch["observations"])
    logits = jnp.where(batch["masks"] > 0, logits, -1e9)
    policy_loss = -jnp.sum(batch["policies"] * jax.nn.log_softmax(logits), axis=1).mean()
    target = 0.5 * (batch["values"] + batch["returns"])
    value_loss = jnp.mean((value - target) ** 2)
    return policy_loss + value_loss, (policy_loss, value_loss)


def sharpened(policies, temperature: float):
    """Visit distributions raised to the power 1/temperature and made to
    sum to one again: below 1, the search's preferred moves stand out more
    (a search of a few hundred iterations still visits every column)."""
    p = np.power(policies.astype(np.float64), 1.0 / temperature)
    total = p.sum(axis=1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), policies)


def train(data: dict, epochs: int, seed: int, hidden: int = 128, temperature: float = 1.0):
    """Trains on 90% of the positions (split by game, so no game is in
    both), and returns the weights of the epoch with the least held-out
    loss, that epoch, and the learning curve (each epoch's losses on the
    training and the held-out positions)."""
    import jax
    import jax.numpy as jnp
    import optax

    games = np.unique(data["games"])
    rng = np.random.default_rng(seed)
    held_out = set(rng.choice(games, size=max(1, len(games) // 10), replace=False).tolist())
    test = np.array([g in held_out for g in data["games"]])
    data = dict(data, policies=sharpened(data["policies"], temperature))
    arrays = {k: data[k].astype(np.float32) for k in ("observations", "masks", "policies", "returns", "values")}
    train_set = {k: v[~test] for k, v in arrays.items()}
    test_set = {k: jnp.asarray(v[test]) for k, v in arrays.items()}
    n, size = train_set["observations"].shape
    actions = train_set["masks"].shape[1]
    params = init(jax.random.PRNGKey(seed), [size, hidden, hidden, actions])
    params.append(init(jax.random.PRNGKey(seed + 1), [hidden, 1])[0])
    optimiser = optax.adamw(1e-3, weight_decay=1e-3)
    opt_state = optimiser.init(params)

    @jax.jit
    def step(params, opt_state, batch):
        (total, parts), grads = jax.value_and_grad(loss, has_aux=True)(params, batch)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, parts

    evaluate = jax.jit(lambda p, b: loss(p, b)[1])
    curve = []
    best = (math.inf, 0, params)
    batch_size = 128
    for epoch in range(epochs):
        order = rng.permutation(n)
        parts = []
        for i in range(0, n, batch_size):
            idx = order[i : i + batch_size]
            params, opt_state, p = step(params, opt_state, {k: v[idx] for k, v in train_set.items()})
            parts.append([float(x) for x in p])
        held = [float(x) for x in evaluate(params, test_set)]
        train_losses = np.mean(parts, axis=0).tolist()
        curve.append({"epoch": epoch + 1, "train": train_losses, "held_out": held})
        if sum(held) < best[0]:
            best = (sum(held), epoch + 1, params)
    return best[2], best[1], curve


class NetEvaluator:
    """OpenSpiel's MCTS evaluator backed by the network: the value head
    instead of random rollouts, the policy head as the prior."""

    def __init__(self, params, game):
        import jax

        self.forward = jax.jit(forward)
        self.params = params
        self.players = game.num_players()

    def _infer(self, state):
        obs = np.asarray(state.observation_tensor(state.current_player()), np.float32)[None]
        logits, value = self.forward(self.params, obs)
        return np.asarray(logits)[0], float(value[0])

    def evaluate(self, state):
        if state.is_terminal():
            return np.array(state.returns())
        _, v = self._infer(state)
        me = state.current_player()
        return np.array([v if p == me else -v for p in range(self.players)])

    def prior(self, state):
        logits, _ = self._infer(state)
        legal = state.legal_actions()
        z = logits[legal] - logits[legal].max()
        p = np.exp(z) / np.exp(z).sum()
        return list(zip(legal, p))


def play(game, agent, opponent, games: int, seed: int) -> dict:
    """`agent` (an OpenSpiel bot) against `opponent` (a tabula controller
    name), seats alternating: the agent's wins, draws and losses."""
    tally = {"wins": 0, "draws": 0, "losses": 0}
    for g in range(games):
        ours = g % 2
        controller = tabula.Controller(opponent, seed=seed + g)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == ours:
                state.apply_action(agent.step(state))
            else:
                inner = state.inner
                state.apply_action(inner.move_to_action(controller.choose(inner)))
        r = state.returns()[ours]
        tally["wins" if r > 0 else "losses" if r < 0 else "draws"] += 1
    return tally


def interval(t: dict) -> tuple:
    """The score (a draw half a win) and its 95% Wilson interval."""
    n = sum(t.values())
    s = (t["wins"] + 0.5 * t["draws"]) / n
    z = 1.96
    mid = (s + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(s * (1 - s) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return round(s, 3), round(mid - half, 3), round(mid + half, 3)


def plot(curve, path: str) -> None:
    """The learning curve as an SVG (matplotlib, where installed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [c["epoch"] for c in curve]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for i, name in enumerate(["policy", "value"]):
        ax.plot(epochs, [c["train"][i] for c in curve], label=f"{name}, training")
        ax.plot(epochs, [c["held_out"][i] for c in curve], "--", label=f"{name}, held out")
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss")
    ax.set_title("Connect Four: learning from tabula self-play")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="self-play games")
    parser.add_argument("--iterations", type=int, default=200, help="of the self-play search (mcts), a move")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=128, help="units in each of the two hidden layers")
    parser.add_argument(
        "--temperature", type=float, default=0.25, help="of the policy targets (below 1 sharpens the visit counts)"
    )
    parser.add_argument("--simulations", type=int, default=200, help="of the network-guided search")
    parser.add_argument("--matches", type=int, default=40, help="games against each opponent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--data", default=None, help="keep the self-play data in this folder (one that holds a run already: train on it)"
    )
    parser.add_argument("--plot", default=None, help="write the learning curve here (SVG)")
    parser.add_argument("--json", default=None, help="write the curve and the results here")
    args = parser.parse_args(argv)

    import pyspiel
    from open_spiel.python.algorithms import mcts

    started = time.monotonic()
    folder = args.data or tempfile.mkdtemp(prefix="selfplay-")
    if args.data and os.path.isdir(folder) and any(n.startswith("shard-") for n in os.listdir(folder)):
        # A folder that holds a run already: train on it again.
        data = tabula.selfplay.load(folder)
        games = len(np.unique(data["games"]))
        print(f"self-play: {games} games read from {folder}, {len(data['returns'])} positions", file=sys.stderr)
    else:
        data = self_play(args.games, args.iterations, args.seed, folder)
        games = args.games
        print(f"self-play: {games} games, {len(data['returns'])} positions", file=sys.stderr)
    played = time.monotonic() - started
    positions = len(data["returns"])
    data = augmented(tabula.load(GAME), data)

    started = time.monotonic()
    params, kept, curve = train(data, args.epochs, args.seed, args.hidden, args.temperature)
    trained = time.monotonic() - started
    for c in curve[:: max(1, len(curve) // 10)] + [curve[-1]]:
        print(
            f"epoch {c['epoch']:3}: policy {c['train'][0]:.3f} / {c['held_out'][0]:.3f} held out, "
            f"value {c['train'][1]:.3f} / {c['held_out'][1]:.3f}",
            file=sys.stderr,
        )
    print(f"training: {trained:.0f} s; the weights of epoch {kept} kept", file=sys.stderr)
    if args.plot:
        plot(curve, args.plot)

    started = time.monotonic()
    game = pyspiel.load_game(tos.register(GAME))
    rng = np.random.RandomState(args.seed)
    agents = {
        # PUCT: the network's policy is the prior of each move (MCTSBot's
        # default, UCT, would ignore it).
        "network": mcts.MCTSBot(
            game,
            2.0,
            args.simulations,
            NetEvaluator(params, game),
            random_state=rng,
            solve=False,
            child_selection_fn=mcts.SearchNode.puct_value,
        ),
        "rollouts": mcts.MCTSBot(
            game, 2.0, args.simulations, mcts.RandomRolloutEvaluator(1, rng), random_state=rng, solve=False
        ),
    }
    results = {}
    for name, agent in agents.items():
        for opponent in ("random", "greedy"):
            t = play(game, agent, opponent, args.matches, args.seed)
            results[f"{name} vs {opponent}"] = dict(t, score=interval(t))
            score, low, high = interval(t)
            print(
                f"{name} ({args.simulations} simulations) vs {opponent}: {t['wins']} wins, {t['draws']} draws, "
                f"{t['losses']} losses; score {score}, 95% interval [{low}, {high}]"
            )
    matched = time.monotonic() - started
    print(f"matches: {matched:.0f} s", file=sys.stderr)
    if args.json:
        doc = {
            "args": vars(args),
            "positions": int(positions),
            "trained_on": int(len(data["returns"])),
            "kept_epoch": kept,
            "seconds": {"self-play": played, "training": trained, "matches": matched},
            "curve": curve,
            "results": results,
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

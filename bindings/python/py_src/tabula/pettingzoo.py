"""Every tabula game as a PettingZoo environment.

>>> import tabula.pettingzoo
>>> env = tabula.pettingzoo.env("breakthrough", rows=6, cols=6)
>>> env.reset(seed=1)

An AEC environment (agents take turns, as in PettingZoo's classic games):
each agent observes ``{"observation": ..., "action_mask": ...}`` with the
rules' observation from its side and a mask of its legal integer actions;
rewards at the end are 1 to the winner and -1/(n-1) to the others (0 on a
draw). ``render_mode="ansi"`` renders the board as ``display/2`` draws it.
Chance's moves (``chance/1``, GDL-II's ``random``) are no agent's: the
environment draws them, seeded by ``reset``.
``parallel_env`` gives games whose choices are made at once (GDL games of
simultaneous moves, ``hidden_move/1``) the parallel API.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import aec_to_parallel

import tabula


class TabulaEnv(AECEnv):
    """A tabula game as a PettingZoo AEC environment."""

    metadata = {"render_modes": ["ansi"], "name": "tabula", "is_parallelizable": True}

    def __init__(self, game: str, render_mode: str | None = None, **options):
        super().__init__()
        self.game = tabula.load(game, **options)
        self.metadata = dict(self.metadata, name=f"tabula_{self.game.name}")
        self.possible_agents = list(self.game.players)
        self.render_mode = render_mode
        n = self.game.num_actions()
        size = self.game.observation_size()
        self._spaces = {
            a: gymnasium.spaces.Dict(
                {
                    "observation": gymnasium.spaces.Box(-np.inf, np.inf, (size,), np.float32),
                    "action_mask": gymnasium.spaces.Box(0, 1, (n,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._actions = {a: gymnasium.spaces.Discrete(n) for a in self.possible_agents}
        self._seed = 0
        self._chance = np.random.default_rng(0)
        self.state = None

    def observation_space(self, agent):
        return self._spaces[agent]

    def action_space(self, agent):
        return self._actions[agent]

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._seed = seed
            for space in self._actions.values():
                space.seed(seed)
        else:
            self._seed += 1
        self.state = self.game.new_state(seed=self._seed)
        self._chance = np.random.default_rng(self._seed)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._settle()

    def _settle(self):
        """Plays chance's moves, then points at the agent to move, or ends
        the game for all."""
        while not self.state.is_over() and self.state.is_chance_node():
            actions = self.state.legal_actions()
            self.state.apply_action(int(actions[self._chance.integers(len(actions))]))
        if self.state.is_over():
            returns = self.state.returns()
            for a, r in zip(self.possible_agents, returns):
                if a in self.agents:
                    self.rewards[a] = r
                    self.terminations[a] = True
            self.agent_selection = self.agents[0] if self.agents else None
            outcome = self.state.outcome()
            for a in self.agents:
                self.infos[a] = {"outcome": outcome}
        else:
            self.agent_selection = self.state.to_move
            for a in self.agents:
                self.infos[a] = {"legal_moves": self.state.legal_moves()} if a == self.agent_selection else {}

    def _mask(self):
        mask = np.zeros(self._actions[self.possible_agents[0]].n, np.int8)
        if not self.state.is_over():
            mask[self.state.legal_actions()] = 1
        return mask

    def observe(self, agent):
        obs = np.asarray(self.state.observation(agent), dtype=np.float32)
        mask = self._mask() if agent == self.state.to_move else np.zeros(self._actions[agent].n, np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.state.apply_action(int(action))
        self._settle()
        self._accumulate_rewards()

    def render(self):
        """The board as ``display/2`` draws it for a spectator (``ansi``)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        return self.state.display()

    def close(self):
        pass


def raw_env(game: str, render_mode: str | None = None, **options) -> TabulaEnv:
    """The environment without PettingZoo's checking wrappers."""
    return TabulaEnv(game, render_mode=render_mode, **options)


def env(game: str, render_mode: str | None = None, **options):
    """The AEC environment of a tabula game, with PettingZoo's usual
    wrappers (illegal actions end the game with a penalty, steps out of
    order raise)."""
    e = raw_env(game, render_mode=render_mode, **options)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def parallel_env(game: str, render_mode: str | None = None, **options):
    """The parallel-API environment (PettingZoo's conversion of the AEC
    one): for games whose rounds of choices are made at once."""
    return aec_to_parallel(raw_env(game, render_mode=render_mode, **options))

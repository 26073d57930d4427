"""Every tabula game as an OpenSpiel game.

>>> import pyspiel, tabula.openspiel
>>> name = tabula.openspiel.register("breakthrough", rows=6, cols=6)
>>> game = pyspiel.load_game(name)

The game type is stated from the rules: imperfect information when the
rules hide pieces (``sample_state/3``) or choices (``hidden_move/1``); a
chance node at the start when the start position depends on the seed
(a deal), its outcomes listed: ``DEALS`` seeds, equally likely, each dealing
with the rules' own shuffle (a sample of every possible deal); a chance
node wherever the rules say chance moves (``chance/1``, GDL-II's
``random``), its outcomes the legal actions, equally likely; zero-sum
returns (1 to the winner,
-1/(n-1) to the others, 0 on a draw). Integer actions come from the rules'
``action_space/2`` (a GDL game's ``input``).
"""

from __future__ import annotations

import ctypes

import numpy as np
import pyspiel

import tabula

#: Seeds a start position may be dealt with: the outcomes of the chance
#: node of a game whose start position depends on the seed.
DEALS = 1024
#: Seeds tried to find out whether the start position depends on the seed.
_PROBES = 4
#: The longest game announced to OpenSpiel (GameInfo.max_game_length).
MAX_GAME_LENGTH = 10_000

#: Each registered game's factory, by short name.
_REGISTERED = {}


def _short_name(name: str) -> str:
    return "tabula_" + "".join(c if c.isalnum() else "_" for c in name)


def _value(text: str):
    """An option's value as OpenSpiel parameters hold it: a number as a
    number (OpenSpiel reads a serialised game's ``komi=7.5`` back as a
    float, so the parameter must be one), anything else as text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def register(name: str, **options) -> str:
    """Registers a tabula game with OpenSpiel and returns its short name,
    for ``pyspiel.load_game``. ``options`` set the defaults of the game's
    parameters (its options); each can still be given to ``load_game``."""
    base = tabula.load(name, **options)
    base.num_actions()  # a game without integer actions is refused here
    short = _short_name(base.name)
    params = {k: _value(v) for k, v in base.options}
    start = [base.new_state(seed=s).term for s in range(_PROBES)]
    dealt = len(set(start)) > 1
    n = len(base.players)
    game_type = pyspiel.GameType(
        short_name=short,
        long_name=f"tabula {base.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=(
            pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
            if dealt or base.has_chance
            else pyspiel.GameType.ChanceMode.DETERMINISTIC
        ),
        information=(
            pyspiel.GameType.Information.IMPERFECT_INFORMATION
            if base.hidden_information
            else pyspiel.GameType.Information.PERFECT_INFORMATION
        ),
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=n,
        min_num_players=n,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=base.has_observations,
        parameter_specification=params,
    )

    def make(params=None):
        return TabulaGame(game_type, name, dict(params or {}), dealt)

    if short in _REGISTERED:
        raise ValueError(
            f"{short} is registered already: OpenSpiel registers a name once; "
            "give other options to pyspiel.load_game as parameters"
        )
    _REGISTERED[short] = (game_type, make)
    # OpenSpiel's registry, a C++ static, lets go of the factory when the
    # process exits, after the interpreter has stopped: if that were the
    # last reference, freeing the function then would abort the process.
    # One reference is kept for good, so it never is.
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(make))
    pyspiel.register_game(game_type, make)
    return short


class TabulaGame(pyspiel.Game):
    """A tabula game as OpenSpiel sees it."""

    def __init__(self, game_type, name, params, dealt):
        merged = dict(game_type.parameter_specification)
        merged.update(params)
        self.rules = tabula.load(name, **{k: v for k, v in merged.items()})
        self.dealt = dealt
        n = len(self.rules.players)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.rules.num_actions(),
            max_chance_outcomes=max(DEALS if dealt else 0, self.rules.num_actions() if self.rules.has_chance else 0),
            num_players=n,
            min_utility=-1.0 if n == 2 else -1.0 / (n - 1),
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=MAX_GAME_LENGTH,
        )
        super().__init__(game_type, info, merged)

    def new_initial_state(self):
        return TabulaState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return TabulaObserver(self, iig_obs_type, params)


class TabulaState(pyspiel.State):
    """A position: a chance node first if the start is dealt."""

    def __init__(self, game, inner=None):
        super().__init__(game)
        self._rules = game.rules
        self._inner = inner if inner is not None else (None if game.dealt else game.rules.new_state())

    @property
    def inner(self) -> tabula.State:
        """The tabula state (None before the deal)."""
        return self._inner

    def current_player(self):
        if self._inner is None:
            return pyspiel.PlayerId.CHANCE
        if self._inner.is_over():
            return pyspiel.PlayerId.TERMINAL
        if self._inner.is_chance_node():
            return pyspiel.PlayerId.CHANCE
        return self._inner.current_player

    def _legal_actions(self, player):
        return self._inner.legal_actions()

    def chance_outcomes(self):
        if self._inner is not None:
            actions = self._inner.legal_actions()
            return [(a, 1.0 / len(actions)) for a in actions]
        p = 1.0 / DEALS
        return [(i, p) for i in range(DEALS)]

    def _apply_action(self, action):
        if self._inner is None:
            self._inner = self._rules.new_state(seed=action)
        else:
            self._inner.apply_action(action)

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE and self._inner is None:
            return f"deal {action}"
        return self._rules.action_to_move(action)

    def is_terminal(self):
        return self._inner is not None and self._inner.is_over()

    def returns(self):
        if self._inner is None:
            return [0.0] * len(self._rules.players)
        return self._inner.returns()

    def information_state_string(self, player=None):
        if player is None:
            player = self.current_player()
        return self._string(player, perfect_recall=True)

    def observation_string(self, player=None):
        if player is None:
            player = self.current_player()
        return self._string(player, perfect_recall=False)

    def _string(self, player, perfect_recall):
        if self._inner is None:
            return "before the deal"
        viewer = self._rules.players[player]
        if perfect_recall:
            return self._inner.information_state(viewer)
        return self._inner.display(viewer)

    def resample_from_infostate(self, player_id, probability_sampler):
        """A state the player cannot tell from this one: what it cannot see
        drawn again by the rules' ``sample_state/3``."""
        if self._inner is None:
            return self.clone()
        seed = int(probability_sampler() * 2**32)
        sampled = self._inner.sample(self._rules.players[player_id], seed)
        return TabulaState(self.get_game(), sampled)

    def __deepcopy__(self, memo):
        return TabulaState(self.get_game(), None if self._inner is None else self._inner.clone())

    def __str__(self):
        return "before the deal" if self._inner is None else self._inner.display()


class TabulaObserver:
    """OpenSpiel's observer: the rules' observation as a tensor, and as a
    string the board as drawn for the player (with the moves it saw, for
    perfect recall)."""

    def __init__(self, game, iig_obs_type, params):
        if params:
            raise ValueError(f"observation parameters are not supported; passed {params}")
        self._rules = game.rules
        self._recall = bool(iig_obs_type and iig_obs_type.perfect_recall)
        size = self._rules.observation_size() if self._rules.has_observations else 0
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state, player):
        if state.inner is None:
            self.tensor.fill(0)
        else:
            self.tensor[:] = state.inner.observation(self._rules.players[player])

    def string_from(self, state, player):
        return state._string(player, self._recall)

"""tabula: board games defined as logic programs, from Python.

>>> import tabula
>>> game = tabula.load("breakthrough", rows=6, cols=6)
>>> state = game.new_state()
>>> state.apply(state.legal_moves()[0])

Every game is also an OpenSpiel game (``tabula.openspiel``) and a
PettingZoo environment (``tabula.pettingzoo``).
"""

from tabula._tabula import (
    AmbiguousMove,
    Controller,
    Game,
    IllegalMove,
    LimitError,
    OptionError,
    RulesError,
    State,
    TabulaError,
    UnknownGame,
    games,
    load,
    query,
)
from tabula import selfplay

__all__ = [
    "AmbiguousMove",
    "Controller",
    "Game",
    "IllegalMove",
    "LimitError",
    "OptionError",
    "RulesError",
    "State",
    "TabulaError",
    "UnknownGame",
    "games",
    "load",
    "query",
    "selfplay",
]

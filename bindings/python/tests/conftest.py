"""Shared helpers of the Python tests."""

import pathlib
import shlex

import pytest

#: The repository's games folder (the package carries its own copy).
GAMES = pathlib.Path(__file__).resolve().parents[3] / "games"


def perft_table(name):
    """The known perft counts of a game: {options: [(depth, nodes)]}, from
    its `games/NAME.perft` file."""
    table, options = {}, ()
    for line in (GAMES / f"{name}.perft").read_text().splitlines():
        if line.startswith("# options"):
            options = tuple(shlex.split(line[len("# options") :]))
        elif line.strip() and not line.startswith("#"):
            depth, nodes = line.split()
            table.setdefault(options, []).append((int(depth), int(nodes)))
    return table


def ident(name, options):
    """A test's name: the game's, with its short option values."""
    return "-".join([name] + [str(v) for v in options.values() if len(str(v)) <= 12])


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """Runs a test from a folder with no games in it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TABULA_GAMES", raising=False)
    return tmp_path

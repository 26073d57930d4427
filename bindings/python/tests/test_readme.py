"""The README's Python example runs as written."""

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def test_the_readme_example_runs(tmp_path):
    text = README.read_text()
    section = text[text.index("## From Python") :]
    example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(example.strip().splitlines()) == 5
    # From a folder with no games in it: the package carries its own.
    done = subprocess.run(
        [sys.executable, "-c", example + "\nprint(state.history(), game.num_players(), env.agents)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    # One move made by mcts, Domin-Up for three, Hasami Shogi's seats.
    assert re.fullmatch(r"\['[a-e][1-6]-[a-e][1-6]'\] 3 \['black', 'white'\]\n", done.stdout), done.stdout

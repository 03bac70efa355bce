"""Limits the next person keeps (issue 26): no function under the apps over 80 lines. ruff keeps the
others (ruff.toml: complexity 12, 8 arguments, 20 branches); a length is what ruff does not measure.

A function's length is its lines from `def` to its last line, docstring and comments included
(`bench/function_lengths.py`, which lists them: `.venv/bin/python bench/function_lengths.py`).
"""

import textwrap
from pathlib import Path

from bench.function_lengths import APPS, long_functions

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 80


def test_no_function_under_the_apps_is_over_80_lines():
    found = long_functions([ROOT / app for app in APPS], MAX_LINES)
    assert found == [], "functions over 80 lines (split them into named steps):\n" + "\n".join(
        f"{length:4d}  {where}" for length, where in found
    )


def test_the_measure_counts_a_function_from_def_to_its_last_line(tmp_path):
    body = "\n".join(f"    x{n} = {n}" for n in range(MAX_LINES - 1))  # def + 79 lines: exactly 80
    source = tmp_path / "module.py"
    source.write_text(
        f"def fits():\n{body}\n\n\nclass Holder:\n    def over(self):\n{textwrap.indent(body, '    ')}\n"
        f"        return x0\n"
    )
    # `fits` (lines 1-80) passes; `over` (from line 84, 81 lines) does not.
    assert long_functions([tmp_path], MAX_LINES) == [(MAX_LINES + 1, f"{source}:{MAX_LINES + 4} over")]

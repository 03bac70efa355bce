"""The defaults in plain words for the Memory tab: the "Keeps" and "Never keeps" lists are read
from the writer's own default instructions (`memory.guards.instructions`, the single source), so the
page can never say something the model is not told."""

import re
from functools import lru_cache

from memory.guards.instructions import DEFAULT_INSTRUCTIONS


def _bullets(section: str) -> list[str]:
    items, current = [], ""
    for line in section.splitlines():
        stripped = line.strip()
        if stripped.startswith("- "):
            if current:
                items.append(current)
            current = stripped[2:]
        elif stripped and current:
            current += " " + stripped
    if current:
        items.append(current)
    return [re.sub(r"[;.]$", "", item).strip() for item in items]


@lru_cache(maxsize=1)
def default_lists() -> dict[str, list[str]]:
    """{"keeps": [...], "never": [...]}: the two bullet lists of the default instructions."""
    text = DEFAULT_INSTRUCTIONS
    keep_start = text.index("Keep what")
    leave_start = text.index("Leave out:")
    how_start = text.index("How to write:")
    keeps = _bullets(text[keep_start:leave_start].split("\n", 1)[1])
    never = _bullets(text[leave_start:how_start].split("\n", 1)[1])
    return {"keeps": [k[0].upper() + k[1:] for k in keeps], "never": [n[0].upper() + n[1:] for n in never]}

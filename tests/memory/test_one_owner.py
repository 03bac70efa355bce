"""One owner per piece of memory state (issue 9, STYLE "one owner"): the source itself is checked, so a
new path that writes around `memory.store.actions` / `memory.store.rows` or `memory.store.due` fails here rather than in production."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("agents", "consent", "memory", "webhooks", "ops")

# (what, pattern, the files allowed to do it)
RULES = [
    (
        "an audit row is written",
        re.compile(r"MemoryRun\.objects\.(?:create|bulk_create|get_or_create|update_or_create)|=\s*MemoryRun\("),
        {"memory/store/actions.py", "memory/store/rows.py"},  # planned by an action, inserted by commit_changes
    ),
    (
        "a memory's text, horizon or read_up_to is written",
        re.compile(
            r"\.(?:text|read_up_to|horizon_at|stopped_at|forget_pending)\s*=(?!=)|update\([^)]*\b(?:text|read_up_to|horizon_at|stopped_at)=(?!\s*models\.)"
        ),
        {
            "memory/store/actions.py",
            "memory/writer/offline/engine.py",
        },  # the offline engine's own line objects, not Memory rows
    ),
    (
        "the due queue is written",
        re.compile(r"memory_due_at\s*=(?!=|\s*models\.)"),
        # The visitor's switch takes the chat out of memory and out of the queue in one save (the
        # check constraint conversation_due_only_with_memory needs both at once).
        {"memory/store/due.py", "surfaces/embed/services.py"},
    ),
    (
        "a chat's note is written after it started",
        re.compile(r"update\([^)]*memory_note=|\.memory_note\s*=(?!=)"),
        {
            "memory/store/rows.py",
            "agents/services.py",  # built once at start, from the memory, through the port
            "surfaces/embed/services.py",  # the switch empties it with the rest of the chat's memory state
            "memory/store/end_user_requests.py",  # the in-memory copy of the row the commit just rewrote
        },
    ),
]


def sources():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path.relative_to(ROOT).as_posix(), path.read_text()


def test_each_piece_of_memory_state_is_written_in_one_place():
    found = []
    for name, text in sources():
        for what, pattern, allowed in RULES:
            if name not in allowed and pattern.search(text):
                found.append(f"{name}: {what}")
    assert found == [], "\n".join(found)

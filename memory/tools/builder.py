"""The Builder: a team member describes a change to the memory settings in plain words, and the
Builder drafts it (R1, R2, PRODUCT "The Builder").

The engine (a model, or the offline rules in `memory.tools.builder_rules.builder_changes`) only reads the words
into structured changes. Everything after that is code: the keep / leave-out phrases become
sentences of the memory instructions, the change goes through `services.agent_draft_update`
(the same validation as the Memory tab and the API), and it waits for Publish. The reply is
written here from what actually changed, so it never claims a change that was refused.

Used by the Build screen's side panel and by `POST /api/v1/agents/{id}/builder` (both in `surfaces`,
which import it), and so is `publish_warnings`, the Build screen's second look before Publish.
"""

import re
from typing import Any

from agents import services
from agents.engines import EngineError, get_engine
from agents.errors import AppError
from agents.models import Agent, AgentDraft, AgentVersion
from memory.guards.instructions import instruction_checks
from memory.guards.text import words
from memory.store import settings as memory_settings
from memory.tools.form_words import SETTING_RANGE_WORDS, plain_error, setting_named_by

TASK = "builder_changes"
MAX_MESSAGE_CHARS = 2000
MAX_PHRASES = 10
MAX_PHRASE_CHARS = 300
SETTING_KEYS = ("on", "keepForDays", "quietMinutes", "showSwitch", "askFirst", "privacyUrl")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["set", "keep", "leave_out", "not_understood"],
    "properties": {
        "set": {
            "type": "object",
            "additionalProperties": False,
            "required": list(SETTING_KEYS),
            "properties": {
                "on": {"type": ["boolean", "null"]},
                "keepForDays": {"type": ["integer", "null"]},
                "quietMinutes": {"type": ["integer", "null"]},
                "showSwitch": {"type": ["boolean", "null"]},
                "askFirst": {"type": ["boolean", "null"]},
                "privacyUrl": {"type": ["string", "null"]},
            },
        },
        "keep": {"type": "array", "items": {"type": "string"}},
        "leave_out": {"type": "array", "items": {"type": "string"}},
        "not_understood": {"type": "array", "items": {"type": "string"}},
    },
}

SYSTEM = """\
You help a team member change the memory settings of their customer-facing AI agent. Read their
message and return only the changes they ask for, as JSON that follows the schema.

"set" holds a new value for each setting they ask to change, and null for every other one:
- on: memory on (true) or off (false);
- keepForDays: how many days a memory is kept after the end user's last chat (weeks, months and
  years in days: a month is 30 days, a year 365);
- quietMinutes: how many minutes a chat stays quiet before the memory is updated (5, 15, 30 or 60;
  write the number they said, even if it is another one);
- showSwitch: whether end users see a switch that turns memory off for a chat;
- askFirst: whether our chat surfaces ask yes or no before memory is used;
- privacyUrl: the address of their privacy policy ("" to remove it).
"keep": what they ask the memory to keep, in their words, e.g. "which office they work from".
"leave_out": what they ask the memory to leave out, in their words, e.g. "office locations".
"not_understood": any part of the message that is not one of these, word for word.
Never invent a change they did not ask for.
"""

HELP = (
    "I can change the memory settings: memory on or off, quiet minutes (5, 15, 30 or 60), how many "
    "days to keep a memory, the switch for end users, ask first, the privacy policy address, and what "
    "to keep or leave out. For example: \u201cturn on memory, keep which office they work from, and ask first\u201d."
)

# Sentences to edit and join again, so each keeps its end mark (`text.sentences` drops them).
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_KEEP_SENTENCE = re.compile(r"^(?:also\s+)?(?:keep|remember|store|save|note|track|record|include)\b", re.I)
_LEAVE_SENTENCE = re.compile(
    r"^(?:do\s+not|don'?t|never|leave\s+out|exclude|ignore|skip|omit|drop|stop\s+keeping|no\s+longer\s+keep)\b", re.I
)
_STOP_WORDS = frozenset(
    "the their they them which what where when from with that this about keep keeps leave out their's "
    "also some any every they're it's its into only just please more less".split()
)


def _significant(text: str) -> set[str]:
    return set(words(text, stopwords=_STOP_WORDS, min_length=4))


def _sentences(instructions: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_SPLIT.split(instructions or "") if s.strip()]


def _phrase(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".!?;,").strip()


def edit_instructions(instructions: str, *, keep: list[str], leave_out: list[str]) -> tuple[str, list[str], list[str]]:
    """Add "Keep X." / "Leave out X." sentences, dropping an earlier sentence that says the
    opposite about the same thing. Returns (new instructions, sentences added, sentences removed)."""
    sentences = _sentences(instructions)
    added, removed = [], []
    for kind, phrases in (("keep", keep), ("leave", leave_out)):
        for raw in phrases:
            phrase = _phrase(raw)
            if not phrase:
                continue
            sentence = f"Keep {phrase}." if kind == "keep" else f"Leave out {phrase}."
            words = _significant(phrase)
            opposite = _LEAVE_SENTENCE if kind == "keep" else _KEEP_SENTENCE
            for existing in list(sentences):
                if opposite.match(existing) and words & _significant(existing):
                    sentences.remove(existing)
                    removed.append(existing)
            if any(existing.casefold() == sentence.casefold() for existing in sentences):
                continue
            # Already said more precisely ("Keep food allergies." covers "allergies"): not again.
            same = _KEEP_SENTENCE if kind == "keep" else _LEAVE_SENTENCE
            if words and any(same.match(existing) and words <= _significant(existing) for existing in sentences):
                continue
            sentences.append(sentence)
            added.append(sentence)
    return " ".join(sentences), added, [r for r in removed if r not in added]


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise EngineError("The Builder's answer is not in the expected shape.", code="model_malformed")
    return [str(item)[:MAX_PHRASE_CHARS] for item in value[:MAX_PHRASES] if isinstance(item, str) and item.strip()]


def _read(data: Any) -> tuple[dict, list[str], list[str], list[str]]:
    if not isinstance(data, dict) or not isinstance(data.get("set"), dict):
        raise EngineError("The Builder's answer is not in the expected shape.", code="model_malformed")
    settings = {key: data["set"][key] for key in SETTING_KEYS if data["set"].get(key) is not None}
    return (
        settings,
        _strings(data.get("keep", [])),
        _strings(data.get("leave_out", [])),
        _strings(data.get("not_understood", [])),
    )


def _describe(before: dict, after: dict, added: list[str], removed: list[str]) -> list[str]:
    changes = [c for c in memory_settings.describe_changes(before, after) if c != "memory instructions changed"]
    changes += [f"memory instructions: added \u201c{s}\u201d" for s in added]
    changes += [f"memory instructions: removed \u201c{s}\u201d" for s in removed]
    return changes


def _consent_advice(before: dict, after: dict) -> str:
    """The Memory tab's consent advice, repeated when a change opens a category the defaults
    leave out while ask first is off (the same check as the tab: `instruction_checks`)."""
    checks = instruction_checks(after["instructions"], ask_first=after["askFirst"])
    if not checks.recommend_ask_first:
        return ""
    was = {code for code, _label, _s in instruction_checks(before["instructions"], ask_first=before["askFirst"]).opened}
    new = [label.lower() for code, label, _s in checks.opened if code not in was] or [
        label.lower() for _c, label, _s in checks.opened
    ]
    return (
        f" Note: this opens {', '.join(new)}, which the defaults leave out, and ask first is off. "
        "Asking first is recommended: you likely need consent (see the guidance on the Memory tab)."
    )


def _current_draft(agent: Agent) -> dict | None:
    draft = AgentDraft.objects.filter(agent=agent).first()
    return draft.config if draft else None


def _settings_named(phrases: list[str]) -> list[tuple[str, str]]:
    """(phrase, form field) for each phrase to keep or leave out that names a setting instead."""
    return [(phrase, field) for phrase in phrases if (field := setting_named_by(phrase))]


def _refused(agent: Agent, named: list[tuple[str, str]], unclear: str) -> dict:
    """The reply to a request about a setting that could not be read as a value: refused whole, with
    what the setting can be, and nothing added to the instructions."""
    phrase, field = named[0]
    reply = (
        f"I could not make that change: \u201c{_phrase(phrase)}\u201d is a setting, not something for memory "
        f"to keep or leave out. {SETTING_RANGE_WORDS[field]} Nothing changed.{unclear}"
    )
    return {"reply": reply, "changes": [], "draft": _current_draft(agent), "field": field}


def builder_message(*, agent: Agent, message: str, user=None) -> dict:
    """Read `message`, change the agent's draft accordingly and say what changed.

    Returns {"reply": str, "changes": [str], "draft": the draft configuration, or None when there
    is no draft (nothing waits for Publish), and "field": the form field a refusal is about}. A
    change the validation refuses (quiet minutes 7, keep for 0 days, a plan without memory, ...)
    changes nothing, and the reply gives the reason; so does a request that names a setting without
    a value it can take ("forget about quiet minutes"), which never becomes memory instructions. Raises AppError for
    an empty or too long message, and EngineError (HTTP 502) when the model cannot answer."""
    if not isinstance(message, str) or not message.strip():
        raise AppError("invalid_message", "Tell the Builder what to change.", field="message")
    if len(message) > MAX_MESSAGE_CHARS:
        raise AppError(
            "message_too_long", f"A Builder message is at most {MAX_MESSAGE_CHARS} characters.", field="message"
        )
    before_config = services.agent_draft_config(agent)
    before = before_config["memorySettings"]
    payload = {
        "message": message.strip(),
        "memorySettings": before,
        "quietMinutesChoices": list(memory_settings.QUIET_MINUTES_CHOICES),
        "keepForDaysRange": [memory_settings.KEEP_FOR_DAYS_MIN, memory_settings.KEEP_FOR_DAYS_MAX],
    }
    result = get_engine().structured(task=TASK, system=SYSTEM, payload=payload, schema=SCHEMA)
    settings, keep, leave_out, not_understood = _read(result.data)
    quoted = ", ".join(f"\u201c{part}\u201d" for part in not_understood)
    unclear = f" I did not understand {quoted}." if not_understood else ""
    named = _settings_named(keep + leave_out)
    if named:
        # A setting is never memory instructions: "keep days to 0" is a refused Keep for, not a line.
        return _refused(agent, named, unclear)
    instructions, added, removed = edit_instructions(before["instructions"], keep=keep, leave_out=leave_out)
    if instructions != before["instructions"]:
        settings["instructions"] = instructions
    if not settings:
        reply = ("I did not find a memory setting to change." + unclear + " " + HELP).strip()
        return {"reply": reply, "changes": [], "draft": _current_draft(agent)}
    try:
        draft = services.agent_draft_update(agent=agent, changes={"memorySettings": settings}, user=user)
    except AppError as exc:
        field, words = plain_error(exc)
        reply = f"I could not make that change: {words} Nothing changed.{unclear}"
        return {"reply": reply, "changes": [], "draft": _current_draft(agent), "field": field}
    after = draft.config["memorySettings"] if draft else AgentVersion.objects.published(agent).config["memorySettings"]
    changes = _describe(before, after, added, removed)
    if not changes:
        reply = "That is how the settings already are, so nothing changed." + unclear
    elif draft is None:
        reply = (
            "Done, and the settings now match the published version, so nothing waits for Publish: "
            + "; ".join(changes)
            + "."
            + unclear
        )
    else:
        reply = "Done, in the draft, waiting for Publish: " + "; ".join(changes) + "." + unclear
    if changes:
        reply += _consent_advice(before, after)
    reply = reply.replace(".\u201d.", ".\u201d")
    return {"reply": reply, "changes": changes, "draft": draft.config if draft else None}


def publish_warnings(config: dict) -> list[str]:
    """What Publish would put live that deserves a second look: a category the defaults leave out,
    opened by the instructions while ask first is off (R13, R28)."""
    settings = config["memorySettings"]
    checks = instruction_checks(settings["instructions"], ask_first=settings["askFirst"])
    if not checks.recommend_ask_first:
        return []
    opened = ", ".join(label.lower() for _code, label, _sentence in checks.opened)
    return [f"the instructions open {opened} while ask first is off; asking first is recommended."]

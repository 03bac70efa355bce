"""A small rules engine over the phrase tables (phrases/<language>.json): each table lists, per kind of
fact, the patterns that say it in that language, with slots for the words it carries.

Slots: ``{channel}`` ``{language}`` ``{place}`` ``{old_place}`` ``{role}`` ``{team}`` ``{tool}`` ``{tools}`` ``{plan}``.
A slot matches that language's words (``channels``, ``languages``, ``roles``, ``place_names``,
``plan_names``) and the shared English ones (tool and plan names, cities, job titles), and what it
matched is written into the line in English. The kinds a table can say:

``contact_prefer`` / ``contact_request`` / ``contact_avoid`` (hints merged per message into one contact
line), ``language``, ``location``, ``office``, ``moved`` (from ``{old_place}`` to ``{place}``), ``place_gone``,
``role``, ``team``, ``tools``, ``tool_gone``, ``plan``.

The table's ``negation`` and ``tentative`` words keep a positive pattern silent in a clause that holds
them: a rule that is unsure says nothing rather than the opposite. The ``change`` kind ("quizás nos
pasemos a HubSpot") is the one read in a tentative clause: it gives a said-once line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memory.writer.offline.vocabulary import (
    CHANNELS,
    INTEGRATION,
    INTEGRATIONS,
    JOB_NOUN,
    KNOWN_PLACES,
    KNOWN_PLANS,
    LANGUAGE_CODES,
    LANGUAGE_NAMES,
    alternation,
    table,
)

NEGATIVE_KINDS = frozenset({"contact_avoid", "tool_gone", "place_gone"})
HEDGED_KINDS = frozenset({"change"})  # "quizás nos pasemos a HubSpot": read in a tentative clause only
_DEVANAGARI = re.compile(r"[\u0900-\u097F]")
_CAPITALISED = r"(?-i:[A-Z\u00C0-\u00DE][\w\-]+)(?:\s+(?-i:[A-Z\u00C0-\u00DE][\w\-]+)){0,2}"


@dataclass(frozen=True)
class Hint:
    """Part of a contact preference, merged per message: ``prefer``, ``request`` or ``avoid`` a channel."""

    how: str
    channel: str
    source: str
    fresh: bool = False  # said as a change ("WhatsApp now", "actually"): earlier dislikes no longer count


@dataclass(frozen=True)
class Match:
    kind: str
    values: dict


def _words(code: str, key: str) -> dict[str, str]:
    value = table(code).get(key) or {}
    return {word: word for word in value} if isinstance(value, list) else dict(value)


_LETTER = r"[\w'\u2019\u0900-\u0963\u0966-\u097F]"  # Devanagari without its full stops (। ॥)


@cache
def role_end(code: str) -> str:
    """Where a job title may end: the end of the clause, a punctuation mark, or one of the language's
    ``role_ends`` words ("at", "en", "bei", "hoon"). Any other word after it is part of the title
    ("nurse manager", "teacher's assistant", "ingeniera de software"), so a shorter known title is
    never taken from a longer one."""
    ends = set(table("en").get("role_ends") or []) | set(table(code).get("role_ends") or [])
    return rf"(?=\s*$|\s*[,.;:!?()\u0964]|\s+{alternation(ends)}(?!{_LETTER}))"


@cache
def _slots(code: str) -> dict[str, str]:
    channels = {**CHANNELS, **_words(code, "channels")}
    languages = {**LANGUAGE_NAMES, **_words(code, "languages")}
    places = set(KNOWN_PLACES) | set(_words(code, "place_names"))
    roles = _words(code, "roles")
    plans = set(KNOWN_PLANS) | set(_words(code, "plan_names"))
    tool = INTEGRATION
    joiners = r"(?:,|&|and|plus|y|et|und|e|aur|और|\+)"
    return {
        "channel": rf"(?P<channel>{alternation(channels)})",
        "language": rf"(?P<language>{alternation(languages)})",
        "place": rf"(?P<place>{alternation(places)}(?![\w\-])|{_CAPITALISED})",
        "old_place": rf"(?P<old_place>{alternation(places)}(?![\w\-])|{_CAPITALISED})",
        "role": rf"(?P<role>{alternation(roles) + '|' if roles else ''}(?:[\w\-]+\s+){{0,3}}?{JOB_NOUN}){role_end(code)}",
        "team": r"(?P<team>[\w\-]+(?:\s+(?!(?:at|in|for|with|here|team)\b)[\w\-]+)?)",
        "old_tool": rf"(?P<old_tool>{tool})",
        "tool": rf"(?P<tool>{tool})",
        "tools": rf"(?P<tools>{tool}(?:\s*{joiners}\s*{tool})*)",
        "plan": rf"(?P<plan>{alternation(plans)}(?![\w\-])|(?-i:[A-Z][\w\-]+))",
        "known_plan": rf"(?P<plan>{alternation(plans)})(?![\w\-])",
        "named_plan": r"(?P<plan2>(?-i:[A-Z][\w\-]+))\s+(?:plan|tier)\b",
    }


@cache
def compiled(code: str) -> tuple[tuple[str, re.Pattern[str], dict], ...]:
    """The table's patterns, slots filled in, compiled once."""
    slots = _slots(code)
    out = []
    for kind, entries in (table(code).get("patterns") or {}).items():
        for entry in entries:
            extra = dict(entry) if isinstance(entry, dict) else {}
            source = extra.pop("re", entry) if isinstance(entry, dict) else entry
            for name, pattern in slots.items():
                source = source.replace("{" + name + "}", pattern)
            out.append((kind, re.compile(source, re.I), extra))
    return tuple(out)


@cache
def _word_set(code: str, key: str) -> re.Pattern[str] | None:
    words = table(code).get(key) or []
    if not words:
        return None
    return re.compile(r"(?<![\w'\u0900-\u097F])" + alternation(words) + r"(?![\w'\u0900-\u097F])", re.I)


@cache
def _detector() -> tuple[re.Pattern[str], dict[str, frozenset[str]]]:
    """One pattern over every table's telltale words, and which languages each word tells."""
    tells: dict[str, set[str]] = {}
    for code in LANGUAGE_CODES[1:]:
        for word in table(code).get("detect") or []:
            tells.setdefault(word.lower(), set()).add(code)
    pattern = re.compile(r"(?<![\w'\u0900-\u097F])" + alternation(tells) + r"(?![\w'\u0900-\u097F])", re.I)
    return pattern, {word: frozenset(codes) for word, codes in tells.items()}


def languages_in(text: str) -> tuple[str, ...]:
    """English always, and each other language with at least two of its telltale words (or its script)."""
    pattern, tells = _detector()
    hits: dict[str, set[str]] = {}
    for match in pattern.finditer(text):
        word = match.group(0).lower()
        for code in tells.get(word, ()):
            hits.setdefault(code, set()).add(word)
    short = len(text.split()) <= 6  # "Soy analista.": one telltale word is enough in a short message
    found = ["en"]
    for code in LANGUAGE_CODES[1:]:
        words = hits.get(code, set())
        if len(words) >= 2 or (words and short) or (code == "hi" and _DEVANAGARI.search(text)):
            found.append(code)
    return tuple(found)


def has_words(text: str, codes: tuple[str, ...], key: str) -> bool:
    return any((pattern := _word_set(code, key)) is not None and pattern.search(text) for code in codes)


def english_of(code: str, key: str, word: str) -> str:
    """The English for a word a slot matched: "correo" -> "email", "contable" -> "accountant"."""
    lowered = re.sub(r"\s+", " ", word.strip().lower())
    for mapping in (_words(code, key), _words("en", key)):
        for known, english in mapping.items():
            if known.lower() == lowered:
                return english
    return word.strip()


def integration_names(text: str) -> list[str]:
    names = []
    for found in re.findall(INTEGRATION, text, re.I):
        for name in INTEGRATIONS:
            if name.lower() == re.sub(r"\s+", " ", found.lower()) and name not in names:
                names.append(name)
    return names


def read(text: str, codes: tuple[str, ...]) -> list[Match]:
    """What the tables of ``codes`` say in one clause; in a clause with a table's negation or tentative
    words, that table says only the negative kinds (``contact_avoid``, ``tool_gone``)."""
    out = []
    for code in codes:
        # each table is read with its own negation words: Portuguese "no" ("in the") negates nothing
        negated = has_words(text, (code,), "negation")
        unsure = has_words(text, (code,), "tentative")
        for kind, pattern, extra in compiled(code):
            if negated and kind not in NEGATIVE_KINDS:
                continue
            if unsure and kind not in NEGATIVE_KINDS | HEDGED_KINDS:
                continue
            match = pattern.search(text)
            if not match:
                continue
            values = {name: value for name, value in match.groupdict().items() if value}
            values.update(extra)
            values["code"] = code
            out.append(Match(kind, values))
    return out

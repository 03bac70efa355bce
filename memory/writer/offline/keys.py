"""What a line is about (its key), and which kinds of line a team's instructions leave out."""

from __future__ import annotations

import re

from memory.guards.text import SENTENCE_END, is_said_once
from memory.writer.offline.vocabulary import CHANNEL, INTEGRATION, LANGUAGE, significant

# ---------------------------------------------------------------------------------------------
# What a line is about (its key), so a newer fact replaces an older line of the same kind
# ---------------------------------------------------------------------------------------------

_KEY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("change", re.compile(r"\(said once|^(?:Might|Plans to|Will)\s", re.I)),
    (
        "contact_time",
        re.compile(
            r"^(?:No|Prefers)\s+(?:phone\s+calls|texts|emails|WhatsApp\s+messages)\s+"
            r"(?:before|after|until|till|during|between|at|on|in|early|late)\b",
            re.I,
        ),
    ),
    ("contact", re.compile(rf"^Prefers\s+(?:not\s+to\s+(?:get|be)|to\s+be\s+(?:reached|contacted)|{CHANNEL}\b)", re.I)),
    (
        "language",
        re.compile(
            rf"^Prefers\s+(?:to\s+(?:chat|talk|write|be\s+answered)\s+in|(?:replies|answers)\s+in)\s+{LANGUAGE}\b|^Speaks\s",
            re.I,
        ),
    ),
    (
        "style",
        re.compile(r"^Prefers\s+(?:short|brief|concise|detailed|step-by-step|longer|answers\s+in\s+bullet)", re.I),
    ),
    ("remote_days", re.compile(r"^Works\s+(?:remotely|from\s+home)\s+\S", re.I)),
    (
        "office",
        re.compile(
            r"^Works\s+(?:from|at|out\s+of|in)\s+(?:the\s+)?.*\boffice\b|^Works\s+(?:remotely|from\s+home)\b", re.I
        ),
    ),
    ("location", re.compile(r"^(?:Based|Lives|Located)\s+(?:in|near)\b", re.I)),
    ("name", re.compile(r"^Prefers\s+to\s+be\s+called\b", re.I)),
    ("role", re.compile(r"^(?:Works\s+as\b|Leads\s+the\s+.+\s+team\b|Works\s+in\s+the\s+.+\s+team\b)", re.I)),
    ("app", re.compile(r"^Uses\s+the\s+\w+\s+app\b", re.I)),
    (
        "os",
        re.compile(
            r"^Uses\s+(?:Windows|macOS|Linux|ChromeOS|Ubuntu|Android|iOS)\.?$|^Uses\s+(?:Windows|macOS)\s+\d+", re.I
        ),
    ),
    ("device", re.compile(r"^Uses\s+an?\s+", re.I)),
    ("billing", re.compile(r"^Is\s+on\s+the\s+(?:annual|monthly|yearly|quarterly)\s+plan\b", re.I)),
    ("plan", re.compile(r"^Is\s+on\s+the\s+.+\s+plan\b", re.I)),
    ("integration", re.compile(rf"^Uses\s+(?P<name>{INTEGRATION})\b", re.I)),
    ("change", re.compile(r"^Wants\s+to\s+(?P<name>.+?)\.?$", re.I)),
    (
        "progress",
        re.compile(
            r"^Is\s+(?:in\s+the\s+middle\s+of\s+)?(?P<name>(?:setting\s+up|working\s+on|migrating|configuring|rolling\s+out|onboarding|integrating|building|implementing|deploying|evaluating|triall?ing|piloting)\b.*|(?<=of\s).*)$",
            re.I,
        ),
    ),
    ("action", re.compile(r"^(?P<name>.+?)\s+on\s+\d{1,2}\s+[A-Z][a-z]{2,8}\.?$")),
    ("allergy", re.compile(r"^(?:Allergic\s+to\s+(?P<name>.+?)|Has\s+an?\s+(?P<name2>.+?)\s+allergy)\.?$", re.I)),
    (
        "diet",
        re.compile(
            r"^Is\s+(?:vegetarian|vegan|pescatarian|gluten-free|dairy-free|lactose\s+intolerant|coeliac|celiac)\.?$",
            re.I,
        ),
    ),
    (
        "religion",
        re.compile(
            r"^(?:Is\s+(?:Hindu|Muslim|Christian|Sikh|Jewish|Buddhist|Jain|Catholic|Atheist)|Celebrates)\b", re.I
        ),
    ),
)


def named_key(kind: str, name: str) -> str:
    return f"{kind}:" + " ".join(sorted(significant(name)))


def line_key(text: str) -> str | None:
    """The key of a line written in the shapes these rules use; ``None`` for any other line.

    Goals, planned changes and said-once lines share the ``change:`` keys, so "Wants to migrate from
    Zendesk." replaces "Might migrate from Zendesk (said once, 3 Nov)."
    """
    for kind, pattern in _KEY_RULES:
        match = pattern.search(text)
        if not match:
            continue
        if kind == "integration":
            return f"integration:{match.group('name').lower()}"
        if "name" in pattern.groupindex:
            return named_key(kind, match.group("name") or match.groupdict().get("name2") or "")
        if kind == "change":
            return named_key(kind, text)
        return kind
    return None


# What the team's instructions can leave out, by kind of line.
_KIND_OF_KEY = {
    "name": "name",
    "contact": "contact",
    "contact_time": "contact",
    "language": "language",
    "style": "style",
    "office": "office",
    "remote_days": "office",
    "location": "office",
    "role": "role",
    "app": "setup",
    "os": "setup",
    "device": "setup",
    "integration": "setup",
    "billing": "plan",
    "plan": "plan",
    "progress": "progress",
    "change": "goal",
    "action": "action",
    "allergy": "allergy",
    "diet": "allergy",
    "religion": "religion",
}
KIND_VOCABULARY: dict[str, str] = {
    "contact": r"contact\w*|channels?|how\s+(?:they|to)\s+(?:like\s+to\s+)?(?:be\s+)?(?:reach|contact)\w*|"
    r"email\s+or\s+phone|phone\s+numbers?",
    "language": r"languages?",
    "style": r"answer\s+style|answer\s+length|reply\s+style|how\s+they\s+like\s+answers|short\s+answers",
    "office": r"offices?|locations?|cit(?:y|ies)|where\s+they\s+(?:work|live|are\s+based)|based",
    "name": r"(?:first\s+|nick)?names?|what\s+(?:they\s+like\s+)?to\s+(?:be\s+)?call(?:ed)?(?:\s+them)?",
    "role": r"roles?|job\s+titles?|jobs?|positions?|what\s+they\s+do",
    "setup": r"set-?up|devices?|apps?|operating\s+systems?|integrations?|tools?|stack",
    "plan": r"plans?(?!\s+to)|subscriptions?|tiers?",
    "goal": r"goals?|what\s+they\s+want",
    "progress": r"work\s+in\s+progress|what\s+they\s+are\s+(?:in\s+the\s+middle\s+of|working\s+on)|projects?|"
    r"in\s+the\s+middle\s+of",
    "action": r"actions?|purchases?|renewals?|bookings?|cancellations?|orders?",
    "tentative": r"said\s+once|tentative\w*|maybes?",
}
COMPILED_KIND_VOCABULARY = {kind: re.compile(rf"\b(?:{words})\b", re.I) for kind, words in KIND_VOCABULARY.items()}
_LEAVE_OUT = re.compile(
    r"\b(?:do\s+not|don'?t|dont|never|not|no|avoid|without|except|exclude|excluding|leave\s+out|leave\s+off|"
    r"skip|ignore|forget|stop|omit|drop|remove|nothing\s+about)\b",
    re.I,
)
_ONLY_KEEP = re.compile(r"\bonly\s+(?:keep|remember|store|save|note|track)\b|\b(?:keep|remember)\s+only\b", re.I)


# Clauses of the instructions: sentences, and the parts of one either side of a "but".
_CLAUSE_SPLIT = re.compile(rf"{SENTENCE_END}|,?\s+\bbut\b\s*")


def kinds_left_out(instructions: str) -> frozenset[str]:
    """Kinds of line the team's instructions leave out: "Do not keep office locations" -> {"office"}.

    "Only keep their language" leaves out every other kind.
    """
    left_out: set[str] = set()
    for clause in _CLAUSE_SPLIT.split(instructions or ""):
        named = {kind: match for kind, pattern in COMPILED_KIND_VOCABULARY.items() if (match := pattern.search(clause))}
        for kind, match in named.items():
            if _LEAVE_OUT.search(clause[: match.start()]):
                left_out.add(kind)
        if _ONLY_KEEP.search(clause) and named and not _LEAVE_OUT.search(clause):
            left_out.update(set(KIND_VOCABULARY) - set(named))
    return frozenset(left_out)


def kind_of(text: str, key: str | None) -> str | None:
    if key and is_said_once(text):
        return "tentative"
    if key:
        return _KIND_OF_KEY.get(key.split(":", 1)[0])
    if re.search(r"\boffice\b|\bbased\s+in\b|\blives\s+in\b|\blocated\s+in\b", text, re.I):
        return "office"
    return None


def kind_of_line(text: str) -> str | None:
    return kind_of(text, line_key(text))

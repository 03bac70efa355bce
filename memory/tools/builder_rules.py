"""The offline engine's rules for the Builder: the memory settings a team member asks for in plain
words (`memory.tools.builder`'s task `builder_changes`). Plain, deterministic code over the text: no
model, no network. Documented as such in README.md ("Model engines")."""

import re

# --- The Builder: memory settings from plain words -------------------------------------------
# Understands the common phrasings of each memory setting. Anything else comes back in
# "not_understood", word for word, so the Builder can say what it did not do. Validation is not
# done here: the Builder sends every value through the agent's config validation (`memory.store.settings`).

_URL = re.compile(r"https?://[^\s,;<>\"']+", re.I)
_URL_TOKEN = "\x00URL{}\x00"
_CLAUSE = re.compile(r"[;\n]+|[.!?](?=\s|$)|,\s*(?:and\s+|then\s+)?|\s+(?:and(?:\s+then)?|then|also|plus)\s+", re.I)
_NUMBER_WORDS = {
    "five": 5,
    "fifteen": 15,
    "thirty": 30,
    "sixty": 60,
    "ninety": 90,
    "ten": 10,
    "twenty": 20,
    "one": 1,
    "two": 2,
    "three": 3,
    "six": 6,
    "twelve": 12,
    "an": 1,
    "a": 1,
    "half an": 30,
}
_NUM = r"(\d{1,5}|five|fifteen|thirty|sixty|ninety|ten|twenty|one|two|three|six|twelve|an|a|half\s+an)"
_MEMORY_WORD = r"(?:memory|memories|remembering|remember)"
_ON = re.compile(
    rf"\b(?:turn|switch|put|set)\s+(?:the\s+)?{_MEMORY_WORD}\s+on\b|\b(?:turn|switch)\s+on\s+(?:the\s+)?{_MEMORY_WORD}\b|"
    rf"\b(?:enable|activate|start)\s+(?:the\s+)?{_MEMORY_WORD}\b|^\s*{_MEMORY_WORD}\s+(?:on|enabled)\s*$|"
    rf"\bstart\s+remembering\b|\b(?:let|make)\s+(?:it|the\s+agent)\s+remember\b",
    re.I,
)
_OFF = re.compile(
    rf"\b(?:turn|switch|put|set)\s+(?:the\s+)?{_MEMORY_WORD}\s+off\b|\b(?:turn|switch)\s+off\s+(?:the\s+)?{_MEMORY_WORD}\b|"
    rf"\b(?:disable|deactivate)\s+(?:the\s+)?{_MEMORY_WORD}\b|^\s*{_MEMORY_WORD}\s+(?:off|disabled)\s*$|"
    rf"\bstop\s+(?:using\s+)?(?:the\s+)?{_MEMORY_WORD}\b|\bno\s+(?:more\s+)?memory\b",
    re.I,
)
_QUIET = re.compile(
    rf"\bquiet\b.*?\b{_NUM}\s*(?:-\s*)?(?:min(?:ute)?s?|hours?)\b|\b{_NUM}\s*(?:-\s*)?(?:quiet\s+)?(?:min(?:ute)?s?|hours?)\s+(?:of\s+)?(?:quiet|silence|pause)|"
    rf"\bquiet\s*minutes?\b\D{{0,12}}?(\d{{1,5}})\b|\b(?:update|write|run|save)\w*\b.*?\bafter\s+{_NUM}\s*(?:min(?:ute)?s?|hours?)\b|"
    rf"\bwait\s+{_NUM}\s*(?:min(?:ute)?s?|hours?)\b",
    re.I,
)
_KEEP_DAYS = re.compile(
    rf"\b(?:keep|retain|store|hold|delete|forget|expire|remove)\w*\b.*?\b(?:for|after|to)?\s*{_NUM}\s*(days?|weeks?|months?|years?)\b|"
    rf"\bkeep\s*for\s*days?\b\D{{0,12}}?(\d{{1,5}})\b|\bretention\b\D{{0,20}}?{_NUM}\s*(days?|weeks?|months?|years?)?",
    re.I,
)
_ASK_FIRST_OFF = re.compile(
    r"\b(?:do\s+not|don'?t|no\s+need\s+to|stop|never|without)\s+ask(?:ing)?\b|\bask\s*first\s+off\b|"
    r"\b(?:turn|switch)\s+off\s+ask\s*first\b|\bno\s+consent\s+(?:question|prompt|step)\b",
    re.I,
)
_ASK_FIRST_ON = re.compile(
    r"\bask\s*first\b|\bask\s+(?:them\s+|people\s+|end\s+users\s+|users\s+|visitors\s+)?(?:before|for\s+(?:their\s+)?(?:consent|permission|a\s+yes)|"
    r"yes\s+or\s+no|first)\b|\b(?:require|need|get)\s+(?:their\s+)?consent\b|\bconsent\s+first\b",
    re.I,
)
_SWITCH = re.compile(r"\bswitch\b|\btoggle\b|\bturn\s+(?:it|memory)\s+off\s+for\s+a\s+chat\b", re.I)
_SWITCH_OFF = re.compile(
    r"\b(?:hide|remove|no|without|drop|don'?t\s+show|do\s+not\s+show|turn\s+off)\b.*\b(?:switch|toggle)\b|"
    r"\b(?:switch|toggle)\b.*\b(?:off|hidden)\s*$",
    re.I,
)
_SWITCH_ON = re.compile(
    r"\b(?:show|add|offer|give|display|let|allow)\b.*\b(?:switch|toggle)\b|\b(?:switch|toggle)\b.*\b(?:on|shown|visible)\s*$|"
    r"\b(?:let|allow)\s+(?:end\s+users|people|visitors|them|users|customers)\s+(?:to\s+)?turn\s+(?:it|memory)\s+off\b",
    re.I,
)
_PRIVACY = re.compile(r"\bprivacy\b|\bpolicy\b", re.I)
_PRIVACY_REMOVE = re.compile(r"\b(?:remove|clear|drop|delete|no)\b.*\bprivacy\b", re.I)
_LEAVE_OUT = re.compile(
    r"^(?:please\s+)?(?:and\s+)?(?:do\s+not|don'?t|never|stop)\s+(?:keep(?:ing)?|remember(?:ing)?|stor(?:e|ing)|sav(?:e|ing)|not(?:e|ing))\s+(?P<x>.+)$|"
    r"^(?:please\s+)?(?:and\s+)?(?:leave\s+out|exclude|ignore|forget\s+about|skip|drop|omit|stop\s+keeping|no\s+longer\s+keep)\s+(?P<y>.+)$",
    re.I,
)
_KEEP = re.compile(
    r"^(?:please\s+)?(?:and\s+)?(?:also\s+)?(?:keep|remember|store|save|note|track|record|include)\s+(?P<x>.+)$", re.I
)
_NOT_A_THING = re.compile(
    rf"^(?:it|them|that|this|on|off|(?:the\s+)?{_MEMORY_WORD}(?:\s+(?:on|off))?|for\b.*|asking.*)$", re.I
)


def _number(word: str) -> int | None:
    word = re.sub(r"\s+", " ", word.lower())
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word)


def _days(amount: int, unit: str) -> int:
    unit = (unit or "days").lower()
    return amount * (
        7 if unit.startswith("week") else 30 if unit.startswith("month") else 365 if unit.startswith("year") else 1
    )


def _first_group(match: re.Match, start: int = 1):
    for value in match.groups()[start - 1 :]:
        if value:
            return value
    return None


def _clauses(message: str) -> tuple[list[str], list[str]]:
    urls = _URL.findall(message)
    for index, url in enumerate(urls):
        message = message.replace(url, _URL_TOKEN.format(index), 1)
    clauses = []
    for part in _CLAUSE.split(message):
        part = (part or "").strip(" \t.:")
        if part:
            for index, url in enumerate(urls):
                part = part.replace(_URL_TOKEN.format(index), url)
            clauses.append(part)
    return clauses, urls


def builder_changes(payload: dict) -> dict:
    """Read a team member's plain words and return the memory settings they ask to change:
    {"set": {on, keepForDays, quietMinutes, showSwitch, askFirst, privacyUrl (null = unchanged)},
    "keep": [...], "leave_out": [...], "not_understood": [...]}."""
    message = str(payload.get("message") or "")
    found = {key: None for key in ("on", "keepForDays", "quietMinutes", "showSwitch", "askFirst", "privacyUrl")}
    keep: list[str] = []
    leave_out: list[str] = []
    not_understood: list[str] = []
    clauses, urls = _clauses(message)
    last_list: list[str] | None = None
    for clause in clauses:
        text = clause.strip()
        lowered = text.lower()
        understood = True
        if _URL.search(text) or (_PRIVACY.search(text) and _PRIVACY_REMOVE.search(text)):
            if _PRIVACY_REMOVE.search(text) and not _URL.search(text):
                found["privacyUrl"] = ""
            else:
                found["privacyUrl"] = _URL.search(text).group(0).rstrip(".)")
            last_list = None
            continue
        if _ASK_FIRST_OFF.search(text) and re.search(r"\bask|consent", text, re.I):
            found["askFirst"] = False
            last_list = None
            continue
        if _ASK_FIRST_ON.search(text):
            found["askFirst"] = True
            last_list = None
            continue
        for_a_chat = re.search(r"\bfor\s+(?:a|one|this|their|the)\s+(?:chat|conversation)\b", text, re.I)
        turns_memory = re.search(
            rf"\b(?:switch|turn)\s+(?:the\s+)?{_MEMORY_WORD}\b|\b(?:switch|turn)\s+(?:on|off)\s+(?:the\s+)?{_MEMORY_WORD}\b",
            text,
            re.I,
        )
        if (_SWITCH.search(text) or for_a_chat) and (for_a_chat or not turns_memory):
            if _SWITCH_OFF.search(text):
                found["showSwitch"] = False
            elif _SWITCH_ON.search(text):
                found["showSwitch"] = True
            else:
                understood = False
            if understood:
                last_list = None
                continue
        if (match := _QUIET.search(text)) and re.search(r"quiet|silen|pause|after|wait", text, re.I):
            value = _number(_first_group(match))
            unit_hours = re.search(r"\bhours?\b", text[match.start() : match.end()], re.I)
            if value is not None:
                found["quietMinutes"] = value * 60 if unit_hours else value
                last_list = None
                continue
        if (match := _KEEP_DAYS.search(text)) and re.search(r"days?|weeks?|months?|years?|retention", text, re.I):
            groups = match.groups()
            amount = next((g for g in groups if g and _number(g) is not None), None)
            unit = next((g for g in groups if g and re.match(r"(?:day|week|month|year)", g, re.I)), "days")
            if amount is not None:
                found["keepForDays"] = _days(_number(amount), unit)
                last_list = None
                continue
        if _OFF.search(text):
            found["on"] = False
            last_list = None
            continue
        if _ON.search(text):
            found["on"] = True
            last_list = None
            continue
        if match := _LEAVE_OUT.match(text):
            thing = (match.group("x") or match.group("y") or "").strip()
            if thing and not _NOT_A_THING.match(thing):
                leave_out.append(thing)
                last_list = leave_out
                continue
        if match := _KEEP.match(text):
            thing = match.group("x").strip()
            if thing and not _NOT_A_THING.match(thing):
                keep.append(thing)
                last_list = keep
                continue
        # "keep their name and role": the clause split cut a list; join it back.
        if (
            last_list is not None
            and len(lowered.split()) <= 6
            and not re.search(r"\b(?:turn|switch|set|make|change)\b", lowered)
        ):
            last_list[-1] = f"{last_list[-1]} and {text}"
            continue
        not_understood.append(text)
        last_list = None
    return {"set": found, "keep": keep, "leave_out": leave_out, "not_understood": not_understood}

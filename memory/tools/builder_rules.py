"""The offline engine's rules for the Builder: the memory settings a team member asks for in plain
words (`memory.tools.builder`'s task `builder_changes`). Plain, deterministic code over the text: no
model, no network. Documented as such in docs/operating.md ("Model engines")."""

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
    rf"\bquiet\s*minutes?\b[^\d-]{{0,12}}?(-?\d{{1,5}})\b|\b(?:update|write|run|save)\w*\b.*?\bafter\s+{_NUM}\s*(?:min(?:ute)?s?|hours?)\b|"
    rf"\bwait\s+{_NUM}\s*(?:min(?:ute)?s?|hours?)\b",
    re.I,
)
_KEEP_DAYS = re.compile(
    rf"\b(?:keep|retain|store|hold|delete|forget|expire|remove)\w*\b.*?\b(?:for|after|to)?\s*{_NUM}\s*(days?|weeks?|months?|years?)\b|"
    rf"\bkeep\s*(?:for\s*)?days?\b[^\d-]{{0,12}}?(-?\d{{1,5}})\b|\bretention\b\D{{0,20}}?{_NUM}\s*(days?|weeks?|months?|years?)?",
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
    if re.fullmatch(r"-?\d+", word):  # "-5" stays negative, for the validation to refuse
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


# --- One clause: the first reader that understands it wins, in this order ------------------------
# A setting reader answers (setting, value) or None; a list reader answers ("keep" | "leave_out", thing).


def _privacy_url(text: str) -> tuple[str, object] | None:
    """A link is the privacy page; "remove the privacy link" clears it."""
    if url := _URL.search(text):
        return "privacyUrl", url.group(0).rstrip(".)")
    if _PRIVACY.search(text) and _PRIVACY_REMOVE.search(text):
        return "privacyUrl", ""
    return None


def _ask_first(text: str) -> tuple[str, object] | None:
    """ "don't ask first" before "ask first": the refusal names the same words."""
    if _ASK_FIRST_OFF.search(text) and re.search(r"\bask|consent", text, re.I):
        return "askFirst", False
    if _ASK_FIRST_ON.search(text):
        return "askFirst", True
    return None


_TURNS_MEMORY = re.compile(
    rf"\b(?:switch|turn)\s+(?:the\s+)?{_MEMORY_WORD}\b|\b(?:switch|turn)\s+(?:on|off)\s+(?:the\s+)?{_MEMORY_WORD}\b",
    re.I,
)
_FOR_A_CHAT = re.compile(r"\bfor\s+(?:a|one|this|their|the)\s+(?:chat|conversation)\b", re.I)


def _show_switch(text: str) -> tuple[str, object] | None:
    """The end user's switch for one chat, shown or hidden; "switch memory off" is the memory itself."""
    for_a_chat = _FOR_A_CHAT.search(text)
    if not (_SWITCH.search(text) or for_a_chat) or not (for_a_chat or not _TURNS_MEMORY.search(text)):
        return None
    if _SWITCH_OFF.search(text):
        return "showSwitch", False
    if _SWITCH_ON.search(text):
        return "showSwitch", True
    return None


def _quiet_minutes(text: str) -> tuple[str, object] | None:
    """ "after 15 minutes of quiet", "wait an hour": minutes."""
    if not ((match := _QUIET.search(text)) and re.search(r"quiet|silen|pause|after|wait", text, re.I)):
        return None
    value = _number(_first_group(match))
    if value is None:
        return None
    unit_hours = re.search(r"\bhours?\b", text[match.start() : match.end()], re.I)
    return "quietMinutes", value * 60 if unit_hours else value


def _keep_for_days(text: str) -> tuple[str, object] | None:
    """ "forget after 3 months", "retention 90": days."""
    if not ((match := _KEEP_DAYS.search(text)) and re.search(r"days?|weeks?|months?|years?|retention", text, re.I)):
        return None
    groups = match.groups()
    amount = next((number for g in groups if g and (number := _number(g)) is not None), None)
    if amount is None:
        return None
    unit = next((g for g in groups if g and re.match(r"(?:day|week|month|year)", g, re.I)), "days")
    return "keepForDays", _days(amount, unit)


def _memory_on(text: str) -> tuple[str, object] | None:
    """ "turn memory off" before "turn memory on"."""
    if _OFF.search(text):
        return "on", False
    if _ON.search(text):
        return "on", True
    return None


_SETTING_READERS = (_privacy_url, _ask_first, _show_switch, _quiet_minutes, _keep_for_days, _memory_on)


def _listed_thing(text: str) -> tuple[str, str] | None:
    """ "don't keep their address" -> ("leave_out", "their address"); "remember their role" -> ("keep", ...)."""
    if match := _LEAVE_OUT.match(text):
        thing = (match.group("x") or match.group("y") or "").strip()
        if thing and not _NOT_A_THING.match(thing):
            return "leave_out", thing
    if match := _KEEP.match(text):
        thing = match.group("x").strip()
        if thing and not _NOT_A_THING.match(thing):
            return "keep", thing
    return None


def _continues_list(text: str) -> bool:
    """ "keep their name and role": the clause split cut a list, and this short clause is its next item."""
    lowered = text.lower()
    return len(lowered.split()) <= 6 and not re.search(r"\b(?:turn|switch|set|make|change)\b", lowered)


def builder_changes(payload: dict) -> dict:
    """Read a team member's plain words and return the memory settings they ask to change:
    {"set": {on, keepForDays, quietMinutes, showSwitch, askFirst, privacyUrl (null = unchanged)},
    "keep": [...], "leave_out": [...], "not_understood": [...]}."""
    message = str(payload.get("message") or "")
    found: dict[str, object] = {
        key: None for key in ("on", "keepForDays", "quietMinutes", "showSwitch", "askFirst", "privacyUrl")
    }
    lists: dict[str, list[str]] = {"keep": [], "leave_out": []}
    not_understood: list[str] = []
    clauses, _urls = _clauses(message)
    last_list: list[str] | None = None
    for clause in clauses:
        text = clause.strip()
        setting = next((answer for reader in _SETTING_READERS if (answer := reader(text)) is not None), None)
        if setting is not None:
            found[setting[0]] = setting[1]
            last_list = None
        elif listed := _listed_thing(text):
            last_list = lists[listed[0]]
            last_list.append(listed[1])
        elif last_list is not None and _continues_list(text):
            last_list[-1] = f"{last_list[-1]} and {text}"
        else:
            not_understood.append(text)
            last_list = None
    return {"set": found, "keep": lists["keep"], "leave_out": lists["leave_out"], "not_understood": not_understood}

"""The reading rules: each reads one clause the guards let through and yields facts or updates."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .keys import named_key
from .vocabulary import (
    CHANGE_VERB,
    CHANNEL,
    CHANNEL_VERB,
    CHANNELS,
    GOAL_VERB,
    INTEGRATION,
    INTEGRATIONS,
    JOB_NOUN,
    LANGUAGE,
    STOP_WORDS,
    TENTATIVE,
    clean_phrase,
    significant,
    title,
)

# ---------------------------------------------------------------------------------------------
# Facts read from what the person typed
# ---------------------------------------------------------------------------------------------


@dataclass
class Fact:
    """A line to put in the memory: it replaces the line with the same key, or is added."""

    key: str
    text: str
    sources: list[str]
    tentative: bool = False


@dataclass
class Update:
    """A change to existing lines: remove those mentioning ``old``, or put ``new`` in its place.

    A line "mentions" ``old`` when it holds all of its significant words, or, with ``any_word``,
    one of them; ``kinds`` (when given) limits which kinds of line it may touch.
    """

    old: str
    new: str | None
    sources: list[str]
    fallback: Fact | None = None  # what to put when no line mentions ``old``
    any_word: bool = False
    kinds: frozenset[str] | None = None


@dataclass
class Sentence:
    text: str
    source: str
    day: str
    opened: frozenset[str]

    @property
    def tentative(self) -> bool:
        return bool(TENTATIVE.search(self.text))


Rule = Callable[[Sentence], Iterator["Fact | Update"]]
RULES: list[tuple[str, Rule]] = []


def rule(kind: str) -> Callable[[Rule], Rule]:
    """Register a reading rule; ``kind`` is what a team's "leave out" can switch off."""
    def register(function: Rule) -> Rule:
        RULES.append((kind, function))
        return function

    return register


def _fact(key: str, text: str, sentence: Sentence, *, tentative: bool = False) -> Fact:
    return Fact(key=key, text=text, sources=[sentence.source], tentative=tentative)


_PREFER = re.compile(
    rf"\b(?:i|we)(?:'d|\s+would)?\s+(?:much\s+|really\s+|always\s+)?(?:rather|prefer)\s+(?:to\s+be\s+(?:contacted|reached)\s+(?:by|via|on|over|through)\s+|being\s+(?:contacted|reached)\s+(?:by|via|on|over)\s+|you\s+)?(?:use\s+)?(?P<p>{CHANNEL})\b",
    re.I,
)
_REACH_ME = re.compile(
    rf"\b(?:contact|reach|message|ping|email|text|call|get\s+(?:in\s+touch|back)\s+(?:with|to))\s+(?:me|us)\s+(?:only\s+)?(?:by|via|on|over|through)\s+(?P<p>{CHANNEL})\b",
    re.I,
)
_BEST_WAY = re.compile(rf"\bbest\s+(?:way|channel)\s+to\s+(?:reach|contact)\s+(?:me|us)\s+is\s+(?:by\s+|via\s+|on\s+|over\s+)?(?P<p>{CHANNEL})\b", re.I)
_VERB_ME = re.compile(
    rf"\b(?:please\s+)?(?:only\s+|just\s+)?(?P<v>{CHANNEL_VERB})\s+(?:me|us)\b(?:\s+(?:on\s+whatsapp|instead|from\s+now\s+on|in\s+future|going\s+forward|next\s+time|always))?(?P<tail>\s*(?:$|[,.;!]))",
    re.I,
)
_PERSISTENT = re.compile(r"\b(?:instead|from\s+now\s+on|in\s+(?:the\s+)?future|going\s+forward|next\s+time|always|only|rather|prefer)\b", re.I)
_DISLIKE = re.compile(
    rf"\b(?:hate|dislike|can'?t\s+stand|don'?t\s+like|do\s+not\s+like|avoid)\s+(?P<d>{CHANNEL})|"
    rf"\b(?:don'?t|do\s+not|never|please\s+don'?t)\s+(?P<dv>{CHANNEL_VERB})\s+(?:me|us)\b|"
    rf"\bno\s+(?P<dn>{CHANNEL})\b|\bnot\s+(?:by|via|on|over)\s+(?P<dp>{CHANNEL})\b|"
    rf"\b(?:rather\s+than|over|instead\s+of)\s+(?P<do>{CHANNEL})\b",
    re.I,
)
_VERB_CHANNEL = {"email": "email", "e-mail": "email", "mail": "email", "call": "phone", "phone": "phone", "ring": "phone",
                 "text": "SMS", "sms": "SMS", "whatsapp": "WhatsApp", "message": "chat"}


def _channel(word: str) -> str:
    word = re.sub(r"\s+", " ", word.lower())
    return CHANNELS.get(word) or _VERB_CHANNEL.get(word) or word


@rule("contact")
def contact_preference(sentence: Sentence) -> Iterator[Fact]:
    """ "please email me, I hate phone calls" -> "Prefers email over phone." """
    text = sentence.text
    preferred = None
    for pattern in (_PREFER, _REACH_ME, _BEST_WAY):
        if match := pattern.search(text):
            preferred = _channel(match.group("p"))
            break
    disliked = None
    if match := _DISLIKE.search(text):
        disliked = _channel(next(group for group in match.groups() if group))
    if preferred is None and (match := _VERB_ME.search(text)):
        if _PERSISTENT.search(text) or disliked:
            preferred = _channel(match.group("v"))
    if preferred and disliked == preferred:
        disliked = None
    if preferred and disliked:
        yield _fact("contact", f"Prefers {preferred} over {disliked}.", sentence)
    elif preferred:
        yield _fact("contact", f"Prefers to be reached by {preferred}.", sentence)
    elif disliked == "phone" and re.search(r"\b(?:hate|dislike|don'?t|do\s+not|never|no)\b", text, re.I):
        yield _fact("contact", "Prefers not to get phone calls.", sentence)


_LANGUAGE_PATTERNS = (
    re.compile(rf"\b(?:chat|talk|speak|reply|respond|answer|write|message|communicate)\w*\s+(?:to\s+me\s+|with\s+me\s+|me\s+)?in\s+(?P<lang>{LANGUAGE})\b", re.I),
    re.compile(rf"\b(?:i|we)(?:'d|\s+would)?\s+(?:much\s+|really\s+)?(?:prefer|rather\s+use|rather\s+have)\s+(?:to\s+\w+\s+in\s+)?(?P<lang>{LANGUAGE})\b", re.I),
    re.compile(rf"\b(?:my|our)\s+(?:preferred\s+|first\s+|main\s+)?language\s+is\s+(?P<lang>{LANGUAGE})\b", re.I),
    re.compile(rf"\b(?:i'?m|i\s+am)\s+(?:more\s+)?comfortable\s+(?:in|with)\s+(?P<lang>{LANGUAGE})\b", re.I),
    re.compile(rf"\b(?P<lang>{LANGUAGE})\s+(?:please|is\s+(?:better|easier)\s+for\s+me)\b", re.I),
)
_ONE_OFF = re.compile(r"\b(?:just|only)\s+(?:this|for\s+this|today|now|once)\b|\bthis\s+(?:once|time)\b|\bfor\s+now\b|\btranslate\b", re.I)


@rule("language")
def language_preference(sentence: Sentence) -> Iterator[Fact]:
    """ "can you reply in Hindi from now on?" -> "Prefers to chat in Hindi." """
    if _ONE_OFF.search(sentence.text):
        return
    for pattern in _LANGUAGE_PATTERNS:
        if match := pattern.search(sentence.text):
            language = match.group("lang").capitalize()
            yield _fact("language", f"Prefers to chat in {language}.", sentence)
            return


_STYLE_WORDS = {
    "short": "short", "brief": "short", "concise": "short", "quick": "short", "shorter": "short",
    "detailed": "detailed", "longer": "detailed", "long": "detailed", "thorough": "detailed", "in-depth": "detailed",
    "step-by-step": "step-by-step", "step by step": "step-by-step",
}
_STYLE = re.compile(
    r"\b(?P<w>short|brief|concise|quick|shorter|detailed|longer|long|thorough|in-depth|step-by-step|step\s+by\s+step)\s+"
    r"(?:answers|replies|responses|explanations|instructions)\b|"
    r"\b(?:answers|replies|responses)\s+(?:short|brief|concise)\b|\bbullet\s+points\b|\bkeep\s+it\s+(?P<k>short|brief)\b",
    re.I,
)


@rule("style")
def answer_style(sentence: Sentence) -> Iterator[Fact]:
    """ "I prefer short answers" -> "Prefers short answers." (only when said as a standing preference) """
    text = sentence.text
    if not _PERSISTENT.search(text) and not re.search(r"\b(?:i|we)\s+(?:like|want|need)\b|\bin\s+general\b|\bgenerally\b", text, re.I):
        return
    if _ONE_OFF.search(text):
        return
    match = _STYLE.search(text)
    if not match:
        return
    if re.search(r"\bbullet\s+points\b", match.group(0), re.I):
        yield _fact("style", "Prefers answers in bullet points.", sentence)
        return
    word = (match.group("w") or match.group("k") or "short").lower()
    style = _STYLE_WORDS.get(re.sub(r"\s+", " ", word), "short")
    yield _fact("style", f"Prefers {style} answers.", sentence)


def _place_group(name: str) -> str:
    return rf"(?P<{name}>[A-Za-z][\w\-]*(?:\s+(?!office\b)[A-Za-z][\w\-]*){{0,2}})"

_OFFICE = re.compile(
    rf"\b(?:i|we)(?:'m|\s+am|'re|\s+are)?\s+(?:now\s+|mostly\s+|usually\s+|mainly\s+)?(?:work(?:ing)?\s+(?:from|at|in|out\s+of)|based\s+(?:at|in|out\s+of)|sit(?:ting)?\s+in|in)\s+(?:the|our|my)\s+{_place_group('place1')}\s+office\b|"
    rf"\b(?:my|our)\s+office\s+is\s+in\s+{_place_group('place2')}\b",
    re.I,
)
_REMOTE = re.compile(r"\b(?:i|we)\s+(?:now\s+)?(?:work\s+(?:from\s+home|remotely)|am\s+fully\s+remote|'m\s+fully\s+remote)\b", re.I)
_BASED = re.compile(
    rf"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:now\s+)?(?:based|located)\s+(?:in|out\s+of)\s+{_place_group('place3')}|"
    rf"\b(?:i|we)\s+(?:now\s+)?live\s+in\s+{_place_group('place4')}",
    re.I,
)
_END_PLACE = re.compile(r"\s+(?:and|but|now|since|for|with|where|which|so|too|currently)\b.*$", re.I)


_NOT_PLACE_WORDS = frozenset(
    "i i'm we we're me my our us you your they them their it this that the a an to from in at on by and or "
    "with for of is are am be was were use using plan app office team".split()
)


def _place(raw: str) -> str:
    """A place name from the person's words, or "" when the words are not plausibly a place."""
    place = _END_PLACE.sub("", raw).strip()
    words = place.lower().split()
    if (
        not words
        or any(word in _NOT_PLACE_WORDS or word in CHANNELS for word in words)
        or _integration_name(place) is not None
        or re.search(r"\d", place)
    ):
        return ""
    return title(place)


@rule("office")
def office_or_location(sentence: Sentence) -> Iterator[Fact]:
    """ "I work from the Pune office" -> "Works from the Pune office."; "I'm based in Berlin" -> "Based in Berlin." """
    if sentence.tentative:
        return
    if match := _OFFICE.search(sentence.text):
        place = _place(match.group("place1") or match.group("place2") or "")
        if place and place.lower() not in {"a", "an", "the"}:
            yield _fact("office", f"Works from the {place} office.", sentence)
    elif _REMOTE.search(sentence.text):
        yield _fact("office", "Works remotely.", sentence)
    if match := _BASED.search(sentence.text):
        place = _place(next(group for group in match.groups() if group))
        if place:
            yield _fact("location", f"Based in {place}.", sentence)


_MOVED_FROM_TO = re.compile(
    r"\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:moved|relocated|switched|changed|migrated|upgraded|downgraded|transferred)\s+"
    r"from\s+(?:the\s+|our\s+|my\s+)?(?P<a>[\w\-]+(?:\s+[\w\-]+){0,2}?)\s+to\s+(?:the\s+|our\s+|my\s+|a\s+)?(?P<b>[\w\-]+(?:\s+[\w\-]+){0,2}?)"
    r"(?=\s*(?:$|[,.;!?]|\s(?:and|but|since|because|last|this|yesterday|today|now|recently|in)\b))",
    re.I,
)
_MOVED_TO = re.compile(
    r"\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:moved|relocated|transferred)\s+to\s+(?:the\s+)?(?P<b>(?-i:[A-Z])[\w\-]*(?:\s+(?-i:[A-Z])[\w\-]*){0,2}?)(?P<office>\s+office)?"
    r"(?=\s*(?:$|[,.;!?]|\s(?:and|but|since|because|last|this|yesterday|today|now|recently|in)\b))",
    re.I,
)
_GENERIC_SUFFIX = re.compile(r"\s+(?:office|plan|app|team|tier)$", re.I)


@rule("update")
def moved(sentence: Sentence) -> Iterator[Fact | Update]:
    """ "I moved from Pune to Mumbai" -> the line that says Pune now says Mumbai (or "Based in Mumbai.") """
    if sentence.tentative:
        return
    if match := _MOVED_FROM_TO.search(sentence.text):
        old = _GENERIC_SUFFIX.sub("", match.group("a"))
        new_raw = match.group("b")
        new = _GENERIC_SUFFIX.sub("", new_raw)
        verb = match.group(0).lower()
        fallback = None
        if re.search(r"\bplan$", new_raw, re.I):
            fallback = _fact("plan", f"Is on the {plan_name(new)} plan.", sentence)
        elif re.search(r"\bapp$", new_raw, re.I):
            fallback = _fact("app", f"Uses the {_app_name(new)} app.", sentence)
        elif re.search(r"\b(?:moved|relocated|transferred)\b", verb) and _place(new):
            if re.search(r"\boffice$", new_raw, re.I):
                fallback = _fact("office", f"Works from the {_place(new)} office.", sentence)
            else:
                fallback = _fact("location", f"Based in {_place(new)}.", sentence)
        elif (tool := _integration_name(new)) is not None:
            fallback = _fact(f"integration:{tool.lower()}", f"Uses {tool}.", sentence)
        if re.search(r"\bapp$", new_raw, re.I):
            display = _app_name(new)
        elif re.search(r"\bplan$", new_raw, re.I):
            display = plan_name(new)
        elif re.search(r"\b(?:moved|relocated|transferred)\b", verb):
            display = title(new)
        else:
            display = _integration_name(new) or new
        yield Update(old=old, new=display, sources=[sentence.source], fallback=fallback)
    elif (match := _MOVED_TO.search(sentence.text)) and (place := _place(match.group("b"))):
        if match.group("office"):
            yield _fact("office", f"Works from the {place} office.", sentence)
        else:
            yield Update(old="", new=None, sources=[sentence.source], fallback=_fact("location", f"Based in {place}.", sentence))


_ROLE = re.compile(
    rf"\b(?:i'?m|i\s+am|i\s+work\s+as|i\s+work\s+here\s+as)\s+(?:a|an)\s+(?P<role>(?:[\w\-]+\s+){{0,3}}?{JOB_NOUN})\b|"
    rf"\bmy\s+(?:role|job|job\s+title|title|position)\s+is\s+(?:a\s+|an\s+)?(?P<role2>(?:[\w\-]+\s+){{0,3}}?{JOB_NOUN})\b",
    re.I,
)


@rule("role")
def role(sentence: Sentence) -> Iterator[Fact]:
    """ "I'm a finance manager at Acme" -> "Works as a finance manager." """
    if sentence.tentative:
        return
    if match := _ROLE.search(sentence.text):
        title = (match.group("role") or match.group("role2")).strip()
        if re.match(r"(?:big|huge|little|bit|new|long-time|loyal)\b", title, re.I):
            return
        article = "an" if title[:1].lower() in "aeiou" else "a"
        yield _fact("role", f"Works as {article} {title}.", sentence)


_APP = re.compile(
    r"\b(?:i|we)(?:'m|\s+am|'re|\s+are)?\s+(?:mostly\s+|mainly\s+|usually\s+|only\s+|now\s+)?(?:use|using)\s+(?:the\s+|your\s+)?"
    r"(?P<app>android|ios|iphone|web|desktop|mobile|windows|mac)\s+app\b",
    re.I,
)
_DEVICE = re.compile(
    r"\b(?:i|we)(?:'m|\s+am|'re|\s+are)?\s+(?:mostly\s+|mainly\s+|usually\s+|now\s+)?(?:use|using|have|on)\s+(?:an?\s+)?"
    r"(?P<device>iphone(?:\s+\d+)?|android\s+phone|pixel(?:\s+\d+)?|samsung(?:\s+galaxy)?|ipad|chromebook|macbook|windows\s+laptop|windows\s+pc)\b",
    re.I,
)
_OS = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:running\s+|now\s+)?on\s+(?P<os>windows(?:\s+\d+)?|macos|mac\s*os|linux|ubuntu|chromeos)\b|"
    r"\b(?:i|we)\s+(?:use|run)\s+(?P<os2>windows(?:\s+\d+)?|macos|linux|ubuntu|chromeos)\b",
    re.I,
)
_APP_NAMES = {"android": "Android", "ios": "iOS", "iphone": "iPhone", "web": "web", "desktop": "desktop",
              "mobile": "mobile", "windows": "Windows", "mac": "Mac"}
_OS_NAMES = {"windows": "Windows", "macos": "macOS", "mac os": "macOS", "macos ": "macOS", "linux": "Linux",
             "ubuntu": "Ubuntu", "chromeos": "ChromeOS"}


def _app_name(word: str) -> str:
    return _APP_NAMES.get(word.lower(), word)


def plan_name(word: str) -> str:
    word = word.strip()
    return word.lower() if word.lower() in {"annual", "monthly", "yearly", "quarterly", "free"} else word[:1].upper() + word[1:]


def _integration_name(word: str) -> str | None:
    for name in INTEGRATIONS:
        if name.lower() == word.strip().lower():
            return name
    return None


@rule("setup")
def setup(sentence: Sentence) -> Iterator[Fact]:
    """ "I use the Android app" -> "Uses the Android app."; "we use HubSpot" -> "Uses HubSpot." """
    if sentence.tentative:
        return
    text = sentence.text
    if match := _APP.search(text):
        yield _fact("app", f"Uses the {_app_name(match.group('app'))} app.", sentence)
    elif match := _DEVICE.search(text):
        device = match.group("device")
        device = re.sub(r"(?i)^iphone", "iPhone", re.sub(r"(?i)^ipad", "iPad", device))
        device = device[:1].upper() + device[1:] if not device.startswith("i") else device
        article = "an" if device[:1].lower() in "aeiou" else "a"
        yield _fact("device", f"Uses {article} {device}.", sentence)
    if match := _OS.search(text):
        raw = (match.group("os") or match.group("os2")).lower()
        base = re.sub(r"\s*\d+$", "", raw)
        version = raw[len(base):]
        yield _fact("os", f"Uses {_OS_NAMES.get(base, base.title())}{version}.", sentence)
    for match in re.finditer(
        rf"\b(?:i|we)(?:'re|\s+are|'m|\s+am)?\s+(?:also\s+|mostly\s+|mainly\s+|now\s+|already\s+)?(?:use|using|run|running|rely\s+on|work\s+in|work\s+with|integrated\s+with|connected)\s+"
        rf"(?P<tools>{INTEGRATION}(?:\s*(?:,|and|&)\s*{INTEGRATION})*)\b|\b(?:our|my)\s+(?:crm|help\s?desk|ticketing\s+(?:system|tool)|store|shop)\s+(?:is|runs\s+on)\s+(?P<tools2>{INTEGRATION})\b",
        text,
        re.I,
    ):
        for tool in re.findall(INTEGRATION, match.group("tools") or match.group("tools2"), re.I):
            name = _integration_name(tool) or tool
            if re.search(rf"\b(?:from|leave|leaving|away\s+from|replace|replacing|off)\s+{re.escape(tool)}\b", text, re.I):
                continue
            yield _fact(f"integration:{name.lower()}", f"Uses {name}.", sentence)


_KNOWN_PLANS = frozenset(
    "free basic starter standard pro plus premium team teams business enterprise growth scale "
    "annual monthly yearly quarterly".split()
)
_PLAN = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are|i'?ve|we'?ve|i\s+have|we\s+have)\s+(?:currently\s+|now\s+|still\s+|already\s+)?(?:on|using|subscribed\s+to|got|paying\s+for|bought)\s+(?:the\s+|a\s+|an\s+)?(?P<plan>[\w\-]+)\s+plan\b|"
    r"\b(?:i|we)\s+(?:have|use|pay\s+for)\s+(?:the\s+|a\s+|an\s+)?(?P<plan2>[\w\-]+)\s+plan\b|"
    r"\b(?:my|our)\s+plan\s+is\s+(?:the\s+)?(?P<plan3>[\w\-]+)\b",
    re.I,
)


@rule("plan")
def plan(sentence: Sentence) -> Iterator[Fact]:
    """ "we're on the Pro plan" -> "Is on the Pro plan." """
    if sentence.tentative:
        return
    if match := _PLAN.search(sentence.text):
        name = match.group("plan") or match.group("plan2") or match.group("plan3")
        if name.lower() not in _KNOWN_PLANS and (name.lower() in STOP_WORDS or not name[:1].isupper()):
            return  # "the Use plan": only a known plan name, or a capitalised one, is a plan
        key = "billing" if name.lower() in {"annual", "monthly", "yearly", "quarterly"} else "plan"
        yield _fact(key, f"Is on the {plan_name(name)} plan.", sentence)


_CHANGE = re.compile(
    rf"\b(?:(?:i|we)(?:'ll|'d|\s+will|\s+would|\s+might|\s+may|\s+could|\s+are|\s+am|'re|'m|\s+plan\s+to|\s+want\s+to|\s+need\s+to|\s+intend\s+to|\s+decided\s+to|'ve\s+decided\s+to|\s+have\s+decided\s+to)?|maybe|probably|let'?s|thinking\s+(?:about|of)|considering)\s+"
    rf"(?:(?:probably|maybe|definitely|also|soon|eventually|going\s+to|gonna|planning\s+to|plan\s+to|to|be)\s+)*{CHANGE_VERB}\s+"
    rf"(?:over\s+)?to\s+(?P<object>(?:the\s+|an?\s+|our\s+|my\s+)?[\w\-]+(?:\s+[\w\-]+){{0,3}}?)"
    rf"(?=\s*(?:$|[,.;!?]|\s(?:next|soon|this|in|by|later|because|since|after|before|when|once|if|and|but|or|from|at\s+some|eventually)\b))",
    re.I,
)
_VERB_BASE = {"moving": "move", "switching": "switch", "upgrading": "upgrade", "downgrading": "downgrade",
              "changing": "change"}
# What a planned change may be about: a plan, an office, an app, a tool, a channel, or a proper name.
_CHANGE_OBJECT = re.compile(
    rf"\b(?:plan|tier|subscription|office|app|edition|version|billing|seats?)$|^(?:the\s+|an?\s+)?(?:{INTEGRATION}|{CHANNEL})$",
    re.I,
)


@rule("tentative")
def plan_change(sentence: Sentence) -> Iterator[Fact]:
    """ "maybe we'll move to the annual plan" -> "Might move to the annual plan (said once, 3 Nov)."

    The same words said firmly ("we're moving to the annual plan") give "Plans to move to the annual
    plan.", which replaces the said-once line: a later confirmation drops the note (R8).
    """
    match = _CHANGE.search(sentence.text)
    if not match:
        return
    if re.search(r"\b(?:not|never|don'?t|won'?t)\b", sentence.text[: match.end()], re.I):
        return
    verb = _VERB_BASE.get(match.group("verb").lower(), match.group("verb").lower())
    obj = clean_phrase(match.group("object"))
    proper = re.search(r"(?-i:[A-Z][a-z]+)", match.group("object"))
    if not obj or not significant(obj) or not (_CHANGE_OBJECT.search(obj) or proper):
        return
    if not re.match(r"(?:the|an?|their)\s", obj, re.I):
        obj = "the " + obj if re.search(r"\b(?:plan|office|app|tier)$", obj, re.I) else obj
    key = named_key("change", f"{verb} to {obj}")
    if sentence.tentative:
        yield _fact(key, f"Might {verb} to {obj} (said once, {sentence.day}).", sentence, tentative=True)
    else:
        yield _fact(key, f"Plans to {verb} to {obj}.", sentence)


_GOAL = re.compile(
    rf"\b(?:(?:i|we)(?:'d|\s+would)?\s+(?:really\s+)?(?:want|wanna|like|love|need|hope|plan|aim|intend)|"
    rf"(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:trying|looking|hoping|planning|aiming)|(?:my|our)\s+(?:main\s+)?goal\s+is)\s+to\s+"
    rf"(?P<verb>{GOAL_VERB})\b(?P<rest>[^.;!?]*)",
    re.I,
)


@rule("goal")
def goal(sentence: Sentence) -> Iterator[Fact]:
    """ "we want to migrate from Zendesk" -> "Wants to migrate from Zendesk." """
    if _CHANGE.search(sentence.text):
        return  # plan_change says it better
    match = _GOAL.search(sentence.text)
    if not match:
        return
    phrase = clean_phrase(re.sub(r"\s+", " ", match.group("verb")) + match.group("rest"))
    if len(phrase.split()) < 2:
        return
    key = named_key("change", phrase)
    if sentence.tentative:
        yield _fact(key, f"Might {phrase} (said once, {sentence.day}).", sentence, tentative=True)
    else:
        yield _fact(key, f"Wants to {phrase}.", sentence)


_PROGRESS = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:currently\s+|still\s+|now\s+|right\s+now\s+|busy\s+)?"
    r"(?:in\s+the\s+middle\s+of\s+(?P<mid>[^.;!?,]+)|"
    r"(?P<verb>setting\s+up|migrating|configuring|rolling\s+out|onboarding|integrating|building|implementing|"
    r"deploying|evaluating|trialling|trialing|piloting|working\s+on)\b(?P<rest>[^.;!?]*))",
    re.I,
)
_DONE = re.compile(
    r"\b(?:(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+)?(?:finished|completed|wrapped\s+up)|(?:i'?m|we'?re|i\s+am|we\s+are)\s+done\s+with)\s+(?P<what>[^.;!?,]+)|"
    r"\b(?P<what2>[\w\-]+(?:\s+[\w\-]+){0,3})\s+is\s+(?:now\s+|finally\s+|all\s+)?(?:done|finished|complete|completed|live)\b",
    re.I,
)


@rule("progress")
def in_the_middle_of(sentence: Sentence) -> Iterator[Fact | Update]:
    """ "we're setting up SSO for our team" -> "Is setting up SSO for their team."; "we finished" removes it. """
    if sentence.tentative:
        return
    if match := _DONE.search(sentence.text):
        what = match.group("what") or match.group("what2")
        yield Update(old=what, new=None, sources=[sentence.source], any_word=True, kinds=frozenset({"progress", "goal"}))
        return
    match = _PROGRESS.search(sentence.text)
    if not match:
        return
    if match.group("mid"):
        phrase = clean_phrase(match.group("mid"))
        text = f"Is in the middle of {phrase}."
    else:
        phrase = clean_phrase(re.sub(r"\s+", " ", match.group("verb")) + match.group("rest"))
        text = f"Is {phrase}."
    if len(phrase.split()) < 2 and not match.group("mid"):
        return
    yield _fact(named_key("progress", phrase), text, sentence)


_NO_LONGER = re.compile(
    r"\b(?:i|we)\s+(?:no\s+longer|don'?t|do\s+not)\s+(?:use|have|work\s+(?:from|at|in|out\s+of)|live\s+in)\s+"
    r"(?:the\s+|a\s+|an\s+|our\s+|my\s+)?(?P<what>[\w\-]+(?:\s+[\w\-]+){0,2}?)(?:\s+(?:any\s*more|anymore))?"
    r"(?=\s*(?:$|[,.;!?]|\s(?:and|but|since|because|any\s*more|anymore)\b))|"
    r"\b(?:i|we)(?:'ve|\s+have)?\s+stopped\s+using\s+(?:the\s+)?(?P<what2>[\w\-]+(?:\s+[\w\-]+){0,2}?)(?=\s*(?:$|[,.;!?]|\s(?:and|but)\b))|"
    r"\b(?:i'?m|we'?re|i\s+am|we\s+are)\s+no\s+longer\s+(?:on|using|in|at|based\s+in)\s+(?:the\s+)?(?P<what3>[\w\-]+(?:\s+[\w\-]+){0,2}?)(?=\s*(?:$|[,.;!?]|\s(?:and|but)\b))",
    re.I,
)


@rule("update")
def no_longer(sentence: Sentence) -> Iterator[Update]:
    """ "I no longer use WhatsApp" -> lines that mention WhatsApp are removed. """
    for match in _NO_LONGER.finditer(sentence.text):
        what = match.group("what") or match.group("what2") or match.group("what3")
        if re.search(r"\b(?:no\s+longer|any\s*more|stopped)\b", match.group(0), re.I) or re.search(
            r"\b(?:any\s*more|anymore)\b", sentence.text, re.I
        ):
            yield Update(old=_GENERIC_SUFFIX.sub("", what), new=None, sources=[sentence.source])


_ALLERGY = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:severely\s+|very\s+|mildly\s+|also\s+)?allergic\s+to\s+(?P<x>[\w\-]+(?:(?:\s+|\s*,\s*|\s+and\s+)[\w\-]+){0,3}?)"
    r"(?=\s*(?:$|[.;!?]|,?\s(?:so|but|because|please)\b))|\b(?:i|we)\s+have\s+(?:an?\s+|a\s+severe\s+)?(?P<x2>[\w\-]+)\s+allergy\b",
    re.I,
)


@rule("allergy")
def allergy(sentence: Sentence) -> Iterator[Fact]:
    """Only when the team's instructions open health: "I'm allergic to peanuts" -> "Allergic to peanuts." """
    if "health" not in sentence.opened:
        return
    if match := _ALLERGY.search(sentence.text):
        what = (match.group("x") or match.group("x2")).strip()
        yield _fact(named_key("allergy", what), f"Allergic to {what}.", sentence)


_RELIGION = re.compile(
    r"\bi\s+(?:celebrate|observe)\s+(?P<f>diwali|eid|christmas|hanukkah|easter|navratri|holi|ramadan|passover|vaisakhi|onam|pongal|lohri)\b|"
    r"\b(?:i'?m|i\s+am)\s+(?:a\s+)?(?P<r>hindu|muslim|christian|sikh|jewish|buddhist|jain|catholic)\b",
    re.I,
)


@rule("religion")
def religion(sentence: Sentence) -> Iterator[Fact]:
    """Only when the team's instructions open religion: "I celebrate Diwali" -> "Celebrates Diwali." """
    if "religion" not in sentence.opened:
        return
    if match := _RELIGION.search(sentence.text):
        if match.group("f"):
            yield _fact("religion", f"Celebrates {match.group('f').capitalize()}.", sentence)
        else:
            yield _fact("religion", f"Is {match.group('r').capitalize()}.", sentence)



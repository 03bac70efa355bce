"""The offline engine: the memory writer's rules as plain, deterministic code (no network, no model).

``memory_operations(payload)`` takes exactly what the OpenAI engine is sent and answers in the same
shape (``OUTPUT_SCHEMA``): one operation per existing line (keep, replace or remove) plus any adds,
each add or replace citing the ids of the messages or actions it came from.

What it reads, and what it never reads (R11, R12):

* ``messages``: what the person typed. Each sentence (or ", but" clause) is first held against the
  privacy guards in ``memory.policy``: one that holds a secret, or belongs to an excluded category
  the team's instructions did not open, is skipped whole. A message with an injection attempt
  ("ignore your instructions", "remember that I am an admin", "always recommend X") is skipped whole.
* ``actions``: only those with status ``succeeded`` give a dated line (R9).
* ``context`` (the agent's replies) is never read, so it can never be a source.

The rules are written in English, first person only ("I work from...", "we're on..."), so a sentence
about someone else does not match them. Every line they produce is checked once more with
``policy.line_refusal`` before it is proposed; the caller checks again after us, as after any model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from . import policy

__all__ = ["OUTPUT_SCHEMA", "memory_operations"]

OUTPUT_SCHEMA: dict = {
    "type": "object",
    "additionalProperties": False,
    "required": ["operations"],
    "properties": {
        "operations": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["op", "line", "text", "sources"],
                "properties": {
                    "op": {"type": "string", "enum": ["keep", "add", "replace", "remove"]},
                    "line": {"type": ["integer", "null"]},
                    "text": {"type": ["string", "null"]},
                    "sources": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}

# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

CHANNELS: dict[str, str] = {
    "email": "email", "e-mail": "email", "mail": "email", "emails": "email",
    "phone": "phone", "call": "phone", "calls": "phone", "phone calls": "phone", "a call": "phone",
    "whatsapp": "WhatsApp", "sms": "SMS", "text": "SMS", "texts": "SMS", "text messages": "SMS",
    "chat": "chat", "live chat": "chat", "telegram": "Telegram",
}
_CHANNEL = r"(?:e-mail|emails?|mail|phone\s+calls|phone|calls?|a\s+call|whatsapp|sms|text\s+messages|texts?|live\s+chat|chat|telegram)"
_CHANNEL_VERB = r"(?:e-?mail|mail|call|phone|ring|text|sms|whatsapp|message)"

LANGUAGES = (
    "English", "Hindi", "Marathi", "Tamil", "Telugu", "Kannada", "Malayalam", "Bengali", "Bangla",
    "Gujarati", "Punjabi", "Urdu", "Odia", "Assamese", "Spanish", "French", "German", "Portuguese",
    "Italian", "Dutch", "Japanese", "Chinese", "Mandarin", "Cantonese", "Korean", "Arabic", "Russian",
    "Turkish", "Polish", "Indonesian", "Malay", "Swahili", "Vietnamese", "Thai", "Hebrew", "Greek",
    "Swedish", "Norwegian", "Danish", "Finnish", "Ukrainian", "Czech", "Romanian", "Hinglish",
)
_LANGUAGE = r"(?:" + "|".join(LANGUAGES) + r")"

INTEGRATIONS = (
    "Slack", "Microsoft Teams", "Teams", "Salesforce", "HubSpot", "Zendesk", "Intercom", "Freshdesk",
    "Freshworks", "Jira", "Confluence", "Shopify", "WooCommerce", "WordPress", "Zapier", "Google Workspace",
    "Microsoft 365", "Office 365", "Okta", "Azure AD", "Stripe", "Razorpay", "Notion", "Airtable",
    "Zoho", "Pipedrive", "Twilio", "Gmail", "Outlook", "Google Sheets", "Excel", "SAP", "Tally",
    "Magento", "BigCommerce", "Mailchimp", "Segment", "GitHub", "GitLab",
)
_INTEGRATION = r"(?:" + "|".join(sorted((re.escape(name) for name in INTEGRATIONS), key=len, reverse=True)) + r")"

_JOB_NOUN = (
    r"(?:manager|engineer|developer|designer|analyst|accountant|consultant|teacher|lawyer|architect|writer|"
    r"marketer|recruiter|lead|specialist|officer|executive|freelancer|student|researcher|scientist|nurse|"
    r"doctor|agent|representative|rep|coordinator|editor|photographer|programmer|tester|intern|trainer|"
    r"instructor|professor|pharmacist|chef|driver|planner|controller|auditor|banker|broker|realtor|"
    r"technician|operator|supervisor|associate|administrator|admin|owner|founder|director|ceo|cto|cfo)"
)
_GOAL_VERB = (
    r"(?:migrate|move|switch|set\s+up|setup|integrate|automate|reduce|cut|launch|build|connect|roll\s+out|"
    r"expand|onboard|scale|implement|adopt|consolidate|replace|improve|grow|deploy|standardi[sz]e|"
    r"centrali[sz]e|add|enable|sync|use|upgrade|translate|locali[sz]e|offer|support|start\s+using|try)"
)
_CHANGE_VERB = r"(?P<verb>move|moving|switch|switching|upgrade|upgrading|downgrade|downgrading|change|changing)"
_TENTATIVE = re.compile(
    r"\b(?:maybe|might|perhaps|possibly|probably|thinking\s+(?:about|of)|considering|not\s+sure|may|could|"
    r"someday|eventually|at\s+some\s+point|we'?ll\s+see)\b",
    re.I,
)
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:\w+\s+){0,3}(?:instructions|rules|prompts?|guidelines|policy|policies)\b|"
    r"\bsystem\s+prompt\b|\bdeveloper\s+mode\b|\bjailbreak\w*|\byou\s+are\s+now\b|\bnew\s+instructions\b|"
    r"\b(?:save|store|remember|keep|note|memori[sz]e|write\s+down)\s+(?:my|this|the|our)\s+(?:\w+\s+)?"
    r"(?:password|passcode|pin|otp|card|card\s+number|api\s+key|token|ssn|aadhaar|pan|secret)\b|"
    r"\b(?:add|write|put|save)\s+(?:this|that|the\s+following)\s+(?:to|in|into)\s+(?:your|my|the)\s+memory\b|"
    r"\bupdate\s+your\s+memory\b",
    re.I,
)
# A purchase the person says is for someone else: the action it matches adds nothing (R13).
_PURCHASE_LABEL = re.compile(
    r"\b(?:bought|buy|purchas\w*|order\w*|booked|book|renew\w*|paid|pay|subscrib\w*|gift\w*|reserv\w*)\b", re.I
)

_STOP_WORDS = frozenset(
    "a an the to from for of on in at with and or my our their your me us them i we they it its this that "
    "is are am be was were will would shall can could might may maybe probably now still currently also "
    "just really very some any new plan plans team app office account subscription tier version setting "
    "set up setup move moving moved switch switching go going use using get".split()
)
_GENERIC_PLACES = frozenset({"home", "main", "head", "new", "old", "same", "other", "central", "regional", "local"})

_PRONOUNS = {
    "i": "they", "me": "them", "my": "their", "mine": "theirs", "myself": "themselves",
    "we": "they", "us": "them", "our": "their", "ours": "theirs", "ourselves": "themselves",
    "i'm": "they're", "we're": "they're", "i've": "they've", "we've": "they've",
}
_CUT = re.compile(
    r"\s*(?:[,;:(]|\s-\s|\b(?:because|since|so\s+that|so|but|as|cause|cuz|though|although|if|when|while|"
    r"please|thanks|thank\s+you|asap|right\s+now)\b).*$",
    re.I,
)


def _third_person(phrase: str) -> str:
    """Turn the person's own words into a line about them: "my team" -> "their team"."""
    def swap(match: re.Match[str]) -> str:
        return _PRONOUNS.get(match.group(0).lower(), match.group(0))

    return re.sub(r"\b(?:i'm|we're|i've|we've|i|me|my|mine|myself|we|us|our|ours|ourselves)\b", swap, phrase, flags=re.I)


def _clean_phrase(phrase: str) -> str:
    phrase = _CUT.sub("", phrase).strip(" .!?\"'")
    phrase = re.sub(r"\s+", " ", phrase)
    return _third_person(phrase)[:120].strip()


def _significant(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9\-]*", _SAID_ONCE.sub("", text.lower()))
    return {word for word in words if len(word) >= 3 and word not in _STOP_WORDS}


def _title(place: str) -> str:
    words = place.split()
    if len(words) == 1 and words[0].lower() in _GENERIC_PLACES:
        return words[0].lower()  # "the main office", but "New York"
    return " ".join(word[:1].upper() + word[1:] for word in words)


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def _day_of(item: dict) -> str:
    if item.get("day"):
        return str(item["day"])
    try:
        moment = datetime.fromisoformat(str(item.get("at")))
    except ValueError:
        return ""
    return f"{moment.day} {moment:%b}"


# ---------------------------------------------------------------------------------------------
# What a line is about (its key), so a newer fact replaces an older line of the same kind
# ---------------------------------------------------------------------------------------------

_SAID_ONCE = re.compile(r"\s*\(said once[^)]*\)", re.I)
_KEY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("change", re.compile(r"\(said once|^(?:Might|Plans to|Will)\s", re.I)),
    ("contact", re.compile(rf"^Prefers\s+(?:not\s+to\s+(?:get|be)|to\s+be\s+(?:reached|contacted)|{_CHANNEL}\b)", re.I)),
    ("language", re.compile(rf"^Prefers\s+(?:to\s+(?:chat|talk|write|be\s+answered)\s+in|(?:replies|answers)\s+in)\s+{_LANGUAGE}\b|^Speaks\s", re.I)),
    ("style", re.compile(r"^Prefers\s+(?:short|brief|concise|detailed|step-by-step|longer|answers\s+in\s+bullet)", re.I)),
    ("office", re.compile(r"^Works\s+(?:from|at|out\s+of|in)\s+(?:the\s+)?.*\boffice\b|^Works\s+(?:remotely|from\s+home)\b", re.I)),
    ("location", re.compile(r"^(?:Based|Lives|Located)\s+in\b", re.I)),
    ("role", re.compile(r"^Works\s+as\b", re.I)),
    ("app", re.compile(r"^Uses\s+the\s+\w+\s+app\b", re.I)),
    ("os", re.compile(r"^Uses\s+(?:Windows|macOS|Linux|ChromeOS|Ubuntu)\b", re.I)),
    ("device", re.compile(r"^Uses\s+an?\s+", re.I)),
    ("billing", re.compile(r"^Is\s+on\s+the\s+(?:annual|monthly|yearly|quarterly)\s+plan\b", re.I)),
    ("plan", re.compile(r"^Is\s+on\s+the\s+.+\s+plan\b", re.I)),
    ("integration", re.compile(rf"^Uses\s+(?P<name>{_INTEGRATION})\b", re.I)),
    ("change", re.compile(r"^Wants\s+to\s+(?P<name>.+?)\.?$", re.I)),
    ("progress", re.compile(r"^Is\s+(?:in\s+the\s+middle\s+of\s+)?(?P<name>(?:setting\s+up|working\s+on|migrating|configuring|rolling\s+out|onboarding|integrating|building|implementing|deploying|evaluating|triall?ing|piloting)\b.*|(?<=of\s).*)$", re.I)),
    ("action", re.compile(r"^(?P<name>.+?)\s+on\s+\d{1,2}\s+[A-Z][a-z]{2,8}\.?$")),
    ("allergy", re.compile(r"^Allergic\s+to\s+(?P<name>.+?)\.?$", re.I)),
    ("religion", re.compile(r"^(?:Is\s+(?:Hindu|Muslim|Christian|Sikh|Jewish|Buddhist|Jain|Catholic|Atheist)|Celebrates)\b", re.I)),
)
def _named_key(kind: str, name: str) -> str:
    return f"{kind}:" + " ".join(sorted(_significant(name)))


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
            return _named_key(kind, match.group("name"))
        if kind == "change":
            return _named_key(kind, text)
        return kind
    return None


# What the team's instructions can leave out, by kind of line.
_KIND_OF_KEY = {
    "contact": "contact", "language": "language", "style": "style", "office": "office", "location": "office",
    "role": "role", "app": "setup", "os": "setup", "device": "setup", "integration": "setup",
    "billing": "plan", "plan": "plan", "progress": "progress", "change": "goal",
    "action": "action", "allergy": "allergy", "religion": "religion",
}
_KIND_VOCABULARY: dict[str, str] = {
    "contact": r"contact\w*|channels?|how\s+(?:they|to)\s+(?:like\s+to\s+)?(?:be\s+)?(?:reach|contact)\w*|"
    r"email\s+or\s+phone|phone\s+numbers?",
    "language": r"languages?",
    "style": r"answer\s+style|answer\s+length|reply\s+style|how\s+they\s+like\s+answers|short\s+answers",
    "office": r"offices?|locations?|cit(?:y|ies)|where\s+they\s+(?:work|live|are\s+based)|based",
    "role": r"roles?|job\s+titles?|jobs?|positions?|what\s+they\s+do",
    "setup": r"set-?up|devices?|apps?|operating\s+systems?|integrations?|tools?|stack",
    "plan": r"plans?(?!\s+to)|subscriptions?|tiers?",
    "goal": r"goals?|what\s+they\s+want",
    "progress": r"work\s+in\s+progress|what\s+they\s+are\s+(?:in\s+the\s+middle\s+of|working\s+on)|projects?|"
    r"in\s+the\s+middle\s+of",
    "action": r"actions?|purchases?|renewals?|bookings?|cancellations?|orders?",
    "tentative": r"said\s+once|tentative\w*|maybes?",
}
_COMPILED_KIND_VOCABULARY = {kind: re.compile(rf"\b(?:{words})\b", re.I) for kind, words in _KIND_VOCABULARY.items()}
_LEAVE_OUT = re.compile(
    r"\b(?:do\s+not|don'?t|dont|never|not|no|avoid|without|except|exclude|excluding|leave\s+out|leave\s+off|"
    r"skip|ignore|forget|stop|omit|drop|remove|nothing\s+about)\b",
    re.I,
)
_ONLY_KEEP = re.compile(r"\bonly\s+(?:keep|remember|store|save|note|track)\b|\b(?:keep|remember)\s+only\b", re.I)


def kinds_left_out(instructions: str) -> frozenset[str]:
    """Kinds of line the team's instructions leave out: "Do not keep office locations" -> {"office"}.

    "Only keep their language" leaves out every other kind.
    """
    left_out: set[str] = set()
    for clause in re.split(r"[.;!?\n]+|,?\s+\bbut\b\s*", instructions or ""):
        named = {
            kind: match
            for kind, pattern in _COMPILED_KIND_VOCABULARY.items()
            if (match := pattern.search(clause))
        }
        for kind, match in named.items():
            if _LEAVE_OUT.search(clause[: match.start()]):
                left_out.add(kind)
        if _ONLY_KEEP.search(clause) and named and not _LEAVE_OUT.search(clause):
            left_out.update(set(_KIND_VOCABULARY) - set(named))
    return frozenset(left_out)


def _kind_of(text: str, key: str | None) -> str | None:
    if key and "(said once" in text.lower():
        return "tentative"
    if key:
        return _KIND_OF_KEY.get(key.split(":", 1)[0])
    if re.search(r"\boffice\b|\bbased\s+in\b|\blives\s+in\b|\blocated\s+in\b", text, re.I):
        return "office"
    return None


def _kind_of_line(text: str) -> str | None:
    return _kind_of(text, line_key(text))


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
        return bool(_TENTATIVE.search(self.text))


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
    rf"\b(?:i|we)(?:'d|\s+would)?\s+(?:much\s+|really\s+|always\s+)?(?:rather|prefer)\s+(?:to\s+be\s+(?:contacted|reached)\s+(?:by|via|on|over|through)\s+|being\s+(?:contacted|reached)\s+(?:by|via|on|over)\s+|you\s+)?(?:use\s+)?(?P<p>{_CHANNEL})\b",
    re.I,
)
_REACH_ME = re.compile(
    rf"\b(?:contact|reach|message|ping|email|text|call|get\s+(?:in\s+touch|back)\s+(?:with|to))\s+(?:me|us)\s+(?:only\s+)?(?:by|via|on|over|through)\s+(?P<p>{_CHANNEL})\b",
    re.I,
)
_BEST_WAY = re.compile(rf"\bbest\s+(?:way|channel)\s+to\s+(?:reach|contact)\s+(?:me|us)\s+is\s+(?:by\s+|via\s+|on\s+|over\s+)?(?P<p>{_CHANNEL})\b", re.I)
_VERB_ME = re.compile(
    rf"\b(?:please\s+)?(?:only\s+|just\s+)?(?P<v>{_CHANNEL_VERB})\s+(?:me|us)\b(?:\s+(?:on\s+whatsapp|instead|from\s+now\s+on|in\s+future|going\s+forward|next\s+time|always))?(?P<tail>\s*(?:$|[,.;!]))",
    re.I,
)
_PERSISTENT = re.compile(r"\b(?:instead|from\s+now\s+on|in\s+(?:the\s+)?future|going\s+forward|next\s+time|always|only|rather|prefer)\b", re.I)
_DISLIKE = re.compile(
    rf"\b(?:hate|dislike|can'?t\s+stand|don'?t\s+like|do\s+not\s+like|avoid)\s+(?P<d>{_CHANNEL})|"
    rf"\b(?:don'?t|do\s+not|never|please\s+don'?t)\s+(?P<dv>{_CHANNEL_VERB})\s+(?:me|us)\b|"
    rf"\bno\s+(?P<dn>{_CHANNEL})\b|\bnot\s+(?:by|via|on|over)\s+(?P<dp>{_CHANNEL})\b|"
    rf"\b(?:rather\s+than|over|instead\s+of)\s+(?P<do>{_CHANNEL})\b",
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
    re.compile(rf"\b(?:chat|talk|speak|reply|respond|answer|write|message|communicate)\w*\s+(?:to\s+me\s+|with\s+me\s+|me\s+)?in\s+(?P<lang>{_LANGUAGE})\b", re.I),
    re.compile(rf"\b(?:i|we)(?:'d|\s+would)?\s+(?:much\s+|really\s+)?(?:prefer|rather\s+use|rather\s+have)\s+(?:to\s+\w+\s+in\s+)?(?P<lang>{_LANGUAGE})\b", re.I),
    re.compile(rf"\b(?:my|our)\s+(?:preferred\s+|first\s+|main\s+)?language\s+is\s+(?P<lang>{_LANGUAGE})\b", re.I),
    re.compile(rf"\b(?:i'?m|i\s+am)\s+(?:more\s+)?comfortable\s+(?:in|with)\s+(?P<lang>{_LANGUAGE})\b", re.I),
    re.compile(rf"\b(?P<lang>{_LANGUAGE})\s+(?:please|is\s+(?:better|easier)\s+for\s+me)\b", re.I),
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
    return _title(place)


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
            fallback = _fact("plan", f"Is on the {_plan_name(new)} plan.", sentence)
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
            display = _plan_name(new)
        elif re.search(r"\b(?:moved|relocated|transferred)\b", verb):
            display = _title(new)
        else:
            display = _integration_name(new) or new
        yield Update(old=old, new=display, sources=[sentence.source], fallback=fallback)
    elif (match := _MOVED_TO.search(sentence.text)) and (place := _place(match.group("b"))):
        if match.group("office"):
            yield _fact("office", f"Works from the {place} office.", sentence)
        else:
            yield Update(old="", new=None, sources=[sentence.source], fallback=_fact("location", f"Based in {place}.", sentence))


_ROLE = re.compile(
    rf"\b(?:i'?m|i\s+am|i\s+work\s+as|i\s+work\s+here\s+as)\s+(?:a|an)\s+(?P<role>(?:[\w\-]+\s+){{0,3}}?{_JOB_NOUN})\b|"
    rf"\bmy\s+(?:role|job|job\s+title|title|position)\s+is\s+(?:a\s+|an\s+)?(?P<role2>(?:[\w\-]+\s+){{0,3}}?{_JOB_NOUN})\b",
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


def _plan_name(word: str) -> str:
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
        rf"(?P<tools>{_INTEGRATION}(?:\s*(?:,|and|&)\s*{_INTEGRATION})*)\b|\b(?:our|my)\s+(?:crm|help\s?desk|ticketing\s+(?:system|tool)|store|shop)\s+(?:is|runs\s+on)\s+(?P<tools2>{_INTEGRATION})\b",
        text,
        re.I,
    ):
        for tool in re.findall(_INTEGRATION, match.group("tools") or match.group("tools2"), re.I):
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
        if name.lower() not in _KNOWN_PLANS and (name.lower() in _STOP_WORDS or not name[:1].isupper()):
            return  # "the Use plan": only a known plan name, or a capitalised one, is a plan
        key = "billing" if name.lower() in {"annual", "monthly", "yearly", "quarterly"} else "plan"
        yield _fact(key, f"Is on the {_plan_name(name)} plan.", sentence)


_CHANGE = re.compile(
    rf"\b(?:(?:i|we)(?:'ll|'d|\s+will|\s+would|\s+might|\s+may|\s+could|\s+are|\s+am|'re|'m|\s+plan\s+to|\s+want\s+to|\s+need\s+to|\s+intend\s+to|\s+decided\s+to|'ve\s+decided\s+to|\s+have\s+decided\s+to)?|maybe|probably|let'?s|thinking\s+(?:about|of)|considering)\s+"
    rf"(?:(?:probably|maybe|definitely|also|soon|eventually|going\s+to|gonna|planning\s+to|plan\s+to|to|be)\s+)*{_CHANGE_VERB}\s+"
    rf"(?:over\s+)?to\s+(?P<object>(?:the\s+|an?\s+|our\s+|my\s+)?[\w\-]+(?:\s+[\w\-]+){{0,3}}?)"
    rf"(?=\s*(?:$|[,.;!?]|\s(?:next|soon|this|in|by|later|because|since|after|before|when|once|if|and|but|or|from|at\s+some|eventually)\b))",
    re.I,
)
_VERB_BASE = {"moving": "move", "switching": "switch", "upgrading": "upgrade", "downgrading": "downgrade",
              "changing": "change"}
# What a planned change may be about: a plan, an office, an app, a tool, a channel, or a proper name.
_CHANGE_OBJECT = re.compile(
    rf"\b(?:plan|tier|subscription|office|app|edition|version|billing|seats?)$|^(?:the\s+|an?\s+)?(?:{_INTEGRATION}|{_CHANNEL})$",
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
    obj = _clean_phrase(match.group("object"))
    proper = re.search(r"(?-i:[A-Z][a-z]+)", match.group("object"))
    if not obj or not _significant(obj) or not (_CHANGE_OBJECT.search(obj) or proper):
        return
    if not re.match(r"(?:the|an?|their)\s", obj, re.I):
        obj = "the " + obj if re.search(r"\b(?:plan|office|app|tier)$", obj, re.I) else obj
    key = _named_key("change", f"{verb} to {obj}")
    if sentence.tentative:
        yield _fact(key, f"Might {verb} to {obj} (said once, {sentence.day}).", sentence, tentative=True)
    else:
        yield _fact(key, f"Plans to {verb} to {obj}.", sentence)


_GOAL = re.compile(
    rf"\b(?:(?:i|we)(?:'d|\s+would)?\s+(?:really\s+)?(?:want|wanna|like|love|need|hope|plan|aim|intend)|"
    rf"(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:trying|looking|hoping|planning|aiming)|(?:my|our)\s+(?:main\s+)?goal\s+is)\s+to\s+"
    rf"(?P<verb>{_GOAL_VERB})\b(?P<rest>[^.;!?]*)",
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
    phrase = _clean_phrase(re.sub(r"\s+", " ", match.group("verb")) + match.group("rest"))
    if len(phrase.split()) < 2:
        return
    key = _named_key("change", phrase)
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
        phrase = _clean_phrase(match.group("mid"))
        text = f"Is in the middle of {phrase}."
    else:
        phrase = _clean_phrase(re.sub(r"\s+", " ", match.group("verb")) + match.group("rest"))
        text = f"Is {phrase}."
    if len(phrase.split()) < 2 and not match.group("mid"):
        return
    yield _fact(_named_key("progress", phrase), text, sentence)


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
        yield _fact(_named_key("allergy", what), f"Allergic to {what}.", sentence)


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


# ---------------------------------------------------------------------------------------------
# The memory being updated
# ---------------------------------------------------------------------------------------------


@dataclass
class _Line:
    number: int
    original: str
    text: str | None  # None once removed
    sources: list[str] = field(default_factory=list)

    @property
    def op(self) -> str:
        if self.text is None:
            return "remove"
        return "keep" if self.text == self.original else "replace"


class _Memory:
    """The existing lines and the additions of this run; every change goes through ``put`` or ``update``."""

    def __init__(self, lines: list[dict], *, opened: frozenset[str], left_out: frozenset[str]) -> None:
        self.lines = [
            _Line(number=int(line["n"]), original=str(line["text"]), text=str(line["text"]))
            for line in lines
            if isinstance(line, dict) and "n" in line and "text" in line
        ]
        self.added: list[Fact] = []
        self.opened = opened
        self.left_out = left_out

    def _live(self) -> int:
        return sum(1 for line in self.lines if line.text is not None) + len(self.added)

    def allows(self, text: str, key: str | None) -> bool:
        kind = _kind_of(text, key) if key else _kind_of_line(text)
        if kind and kind in self.left_out:
            return False
        return policy.line_refusal(text, opened=self.opened) is None

    def put(self, fact: Fact) -> None:
        if not self.allows(fact.text, fact.key):
            return
        for line in self.lines:
            if line.text is None or line_key(line.text) != fact.key:
                continue
            if line.text == fact.text or (fact.tentative and "(said once" not in line.text.lower()):
                return  # already known; a new "maybe" does not weaken a firm line
            if fact.tentative and "(said once" in line.text.lower():
                return  # said once again: the line and its first date stand
            line.text, line.sources = fact.text, list(fact.sources)
            return
        for index, added in enumerate(self.added):
            if added.key == fact.key:
                if fact.tentative and not added.tentative:
                    return
                if not (fact.tentative and added.tentative):
                    self.added[index] = Fact(fact.key, fact.text, _merge(added.sources, fact.sources))
                return
        if any(line.text == fact.text for line in self.lines) or self._live() >= policy.MAX_LINES:
            return
        self.added.append(fact)

    def update(self, update: Update) -> None:
        needle = _significant(update.old) if update.old else set()
        touched = False
        if needle:
            for line in self.lines:
                if line.text is None or not _mentions(line.text, needle, update.any_word):
                    continue
                kind = _kind_of_line(line.text)
                if (kind and kind in self.left_out) or (update.kinds is not None and kind not in update.kinds):
                    continue
                if update.new is None:
                    line.text, line.sources = None, list(update.sources)
                else:
                    new_text = re.sub(rf"\b{re.escape(update.old)}\b", update.new, line.text, flags=re.I)
                    new_text = _SAID_ONCE.sub("", new_text)
                    if new_text != line.text and self.allows(new_text, line_key(new_text)):
                        line.text, line.sources = new_text, list(update.sources)
                touched = True
            self.added = [
                fact
                for fact in self.added
                if not _mentions(fact.text, needle, update.any_word)
                or (update.kinds is not None and _kind_of_line(fact.text) not in update.kinds)
            ]
        if not touched and update.fallback is not None:
            self.put(update.fallback)

    def operations(self) -> list[dict]:
        operations = []
        for line in self.lines:
            op = line.op
            operations.append({
                "op": op,
                "line": line.number,
                "text": line.text if op == "replace" else None,
                "sources": list(line.sources) if op != "keep" else [],
            })
        for fact in self.added:
            operations.append({"op": "add", "line": None, "text": fact.text, "sources": list(fact.sources)})
        return operations


def _mentions(text: str, needle: set[str], any_word: bool) -> bool:
    words = _significant(text)
    return bool(needle & words) if any_word else needle <= words


def _merge(first: list[str], second: list[str]) -> list[str]:
    return first + [source for source in second if source not in first]


# ---------------------------------------------------------------------------------------------
# Reading a run
# ---------------------------------------------------------------------------------------------

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|;\s*|,?\s+\b(?:but|however)\b\s*", re.I)


def _sentences(message: dict, opened: frozenset[str]) -> list[Sentence] | None:
    """The message's sentences that the guards let through; ``None`` when the whole message is out."""
    text = str(message.get("text") or "")
    if _INJECTION.search(text):
        return None
    parts = [part.strip() for part in _SENTENCE_SPLIT.split(text) if part and part.strip()]
    kept = []
    for part in parts:
        category = policy.find_category(part, opened=opened)
        if category in {"authority", "ranking"}:
            return None  # an attempt to steer the agent: nothing in this message is trusted
        if category or policy.find_secret(part):
            continue
        kept.append(Sentence(text=part, source=str(message.get("id")), day=_day_of(message), opened=opened))
    return kept


def _action_facts(action: dict, *, someone_else: bool) -> list[Fact | Update]:
    """A succeeded action gives "<label> on <day>." (R9); failed ones give nothing."""
    if str(action.get("status", "")).lower() != "succeeded":
        return []
    label = str(action.get("label") or "").strip().rstrip(".") or _label_from_name(str(action.get("name") or ""))
    if not label:
        return []
    if someone_else and _PURCHASE_LABEL.search(label):
        return []
    source = [str(action.get("id"))]
    day = _day_of(action)
    text = f"{label} on {day}." if day else f"{label}."
    facts: list[Fact | Update] = [Fact(key=line_key(text) or f"action:{label.lower()}", text=_sentence_case(text), sources=source)]
    if match := re.search(r"\b(?:upgraded|downgraded|switched|moved|changed)\s+to\s+(?:the\s+)?([\w\-]+)\s+plan\b", label, re.I):
        facts.append(Fact(key="plan", text=f"Is on the {_plan_name(match.group(1))} plan.", sources=source))
    return facts


_PAST = {
    "renew": "Renewed", "buy": "Bought", "purchase": "Purchased", "book": "Booked", "cancel": "Cancelled",
    "upgrade": "Upgraded", "downgrade": "Downgraded", "order": "Ordered", "subscribe": "Subscribed to",
    "pay": "Paid", "refund": "Refunded", "schedule": "Scheduled", "reschedule": "Rescheduled",
    "change": "Changed", "update": "Updated", "add": "Added", "remove": "Removed", "create": "Created",
    "reset": "Reset", "switch": "Switched", "enable": "Enabled", "disable": "Disabled", "reserve": "Reserved",
}


def _label_from_name(name: str) -> str:
    words = [word for word in re.split(r"[_\-\s]+", name.strip()) if word]
    if not words:
        return ""
    verb = _PAST.get(words[0].lower())
    if verb is None:
        return " ".join(words).capitalize()
    rest = " ".join(words[1:])
    return f"{verb} the {rest}" if rest else verb


def _confirms_said_once(memory: _Memory, fact: Fact) -> bool:
    """An action that does what a said-once line said might happen replaces that line."""
    words = _significant(fact.text)
    for line in memory.lines:
        if line.text and "(said once" in line.text.lower():
            target = _significant(line.text) - {"might", "plans"}
            if target and target <= words | {"move", "switch"}:
                line.text, line.sources = fact.text, list(fact.sources)
                return True
    return False


def memory_operations(payload: dict) -> dict:
    """Read one run's payload and return ``{"operations": [...]}`` matching ``OUTPUT_SCHEMA``.

    Guarantees: one operation per existing line (``keep``, ``replace`` or ``remove``) and only for
    line numbers that exist; ``add`` and ``replace`` always cite message or action ids; in ``review``
    mode nothing is added and lines the guards now refuse, or the team's instructions leave out, are
    removed; no line is proposed that ``policy.line_refusal`` refuses (with the categories the team's
    instructions open); the memory never grows past ``policy.MAX_LINES``.
    """
    instructions = payload.get("instructions") or {}
    team = str(instructions.get("team") or "") if isinstance(instructions, dict) else str(instructions)
    opened = policy.categories_opened_by(team)
    left_out = kinds_left_out(team)
    memory = _Memory(list(payload.get("lines") or []), opened=opened, left_out=left_out)

    if payload.get("mode") == "review":
        for line in memory.lines:
            if not memory.allows(line.text or "", line_key(line.text or "")):
                line.text = None
        return {"operations": memory.operations()}

    messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
    actions = [a for a in payload.get("actions") or [] if isinstance(a, dict)]
    someone_else = any(
        policy.find_category(str(m.get("text") or ""), opened=opened) in {"other_people", "relationships"}
        for m in messages
    )
    events = sorted(
        [("message", m) for m in messages] + [("action", a) for a in actions],
        key=lambda event: str(event[1].get("at") or ""),
    )
    for kind, item in events:
        if kind == "action":
            for fact in _action_facts(item, someone_else=someone_else):
                if isinstance(fact, Fact) and fact.key.startswith("action:") and _confirms_said_once(memory, fact):
                    continue
                if isinstance(fact, Fact) and fact.key == "plan" and not any(
                    line.text and line_key(line.text) == "plan" for line in memory.lines
                ):
                    continue  # the dated action line says it; a plan line only replaces an older one
                memory.put(fact) if isinstance(fact, Fact) else memory.update(fact)
            continue
        for sentence in _sentences(item, opened) or []:
            for kind_name, read in RULES:
                if kind_name in left_out:
                    continue
                for result in read(sentence):
                    if isinstance(result, Fact):
                        memory.put(result)
                    else:
                        memory.update(result)
    return {"operations": memory.operations()}

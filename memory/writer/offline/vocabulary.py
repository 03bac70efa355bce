"""The words the rules read: channels, languages, tools, job titles, and the small helpers that turn
the person's words into a line about them."""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import cache
from pathlib import Path

from memory.guards.text import words

# ---------------------------------------------------------------------------------------------
# Vocabulary, read from the phrase tables (phrases/<language>.json)
# ---------------------------------------------------------------------------------------------

PHRASES_DIR = Path(__file__).resolve().parent / "phrases"
LANGUAGE_CODES = ("en", "es", "fr", "de", "pt", "hi")


@cache
def table(code: str) -> dict:
    """One language's phrase table, as data (see phrases/en.json for the shape)."""
    with (PHRASES_DIR / f"{code}.json").open(encoding="utf-8") as handle:
        return json.load(handle)


def alternation(words, *, escape: bool = True) -> str:
    """A regex alternation, longest first, so "phone calls" wins over "phone"."""
    items = sorted({word for word in words if word}, key=len, reverse=True)
    return "(?:" + "|".join(re.escape(word).replace(r"\ ", r"\s+") if escape else word for word in items) + ")"


_EN = table("en")
CHANNELS: dict[str, str] = dict(_EN["channels"])
CHANNEL = alternation(
    word for word in CHANNELS if word not in {"slack", "teams", "signal", "my inbox", "inbox", "ringing", "calling"}
)
CHANNEL_VERB = r"(?:e-?mail|mail|call|phone|ring|text|txt|sms|whatsapp|message)"

LANGUAGE_NAMES: dict[str, str] = dict(_EN["languages"])
LANGUAGE = alternation(LANGUAGE_NAMES)

TOOL_KINDS: dict[str, str] = dict(_EN["tools"])  # tool -> what it is for ("store", "crm"), "" when unknown
INTEGRATIONS = tuple(name for name in TOOL_KINDS if name not in {"Make"})
INTEGRATION = alternation(INTEGRATIONS)
KNOWN_PLANS = frozenset(_EN["plans"])
KNOWN_PLACES = frozenset(_EN["places"])

JOB_NOUN = alternation(_EN["job_nouns"])
GOAL_VERB = (
    r"(?:migrate|move|switch|set\s+up|setup|integrate|automate|reduce|cut|launch|build|connect|roll\s+out|"
    r"expand|onboard|scale|implement|adopt|consolidate|replace|improve|grow|deploy|standardi[sz]e|"
    r"centrali[sz]e|add|enable|sync|use|upgrade|translate|locali[sz]e|offer|support|start\s+using|try)"
)
CHANGE_VERB = r"(?P<verb>move|moving|switch|switching|upgrade|upgrading|downgrade|downgrading|change|changing)"
TENTATIVE = re.compile(
    r"\b(?:maybe|might|perhaps|possibly|probably|thinking\s+(?:about|of)|considering|not\s+sure|may|could|"
    r"someday|eventually|at\s+some\s+point|we'?ll\s+see)\b",
    re.I,
)
INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:\w+\s+){0,3}(?:instructions|rules|prompts?|guidelines|policy|policies)\b|"
    r"\bsystem\s+prompt\b|\bdeveloper\s+mode\b|\bjailbreak\w*|\byou\s+are\s+now\b|\bnew\s+instructions\b|"
    r"\b(?:save|store|remember|keep|note|memori[sz]e|write\s+down)\s+(?:my|this|the|our)\s+(?:\w+\s+)?"
    r"(?:password|passcode|pin|otp|card|card\s+number|api\s+key|token|ssn|aadhaar|pan|secret)\b|"
    r"\b(?:add|write|put|save)\s+(?:this|that|the\s+following)\s+(?:to|in|into)\s+(?:your|my|the)\s+memory\b|"
    r"\bupdate\s+your\s+memory\b",
    re.I,
)
# A purchase the person says is for someone else: the action it matches adds nothing (R13).
PURCHASE_LABEL = re.compile(
    r"\b(?:bought|buy|purchas\w*|order\w*|booked|book|renew\w*|paid|pay|subscrib\w*|gift\w*|reserv\w*|placed|"
    r"enrol\w*|register\w*|signed\s+up|sign\s+up|scheduled|tickets?|sent|shipped|delivered|topped\s+up|recharged)\b",
    re.I,
)

STOP_WORDS = frozenset(
    "a an the to from for of on in at with and or my our their your me us them i we they it its this that "
    "is are am be was were will would shall can could might may maybe probably now still currently also "
    "just really very some any new plan plans team app office account subscription tier version setting "
    "set up setup move moving moved switch switching go going use using get".split()
)
_GENERIC_PLACES = frozenset(_EN["generic_places"])

_PRONOUNS = {
    "i": "they",
    "me": "them",
    "my": "their",
    "mine": "theirs",
    "myself": "themselves",
    "we": "they",
    "us": "them",
    "our": "their",
    "ours": "theirs",
    "ourselves": "themselves",
    "i'm": "they're",
    "we're": "they're",
    "i've": "they've",
    "we've": "they've",
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

    return re.sub(
        r"\b(?:i'm|we're|i've|we've|i|me|my|mine|myself|we|us|our|ours|ourselves)\b", swap, phrase, flags=re.I
    )


def clean_phrase(phrase: str) -> str:
    phrase = _CUT.sub("", phrase).strip(" .!?\"'")
    phrase = re.sub(r"\s+", " ", phrase)
    return _third_person(phrase)[:120].strip()


def significant(text: str) -> set[str]:
    """The words that say what a line is about (its key, and whether two lines are the same fact)."""
    return set(words(text, stopwords=STOP_WORDS, min_length=3))


def title(place: str) -> str:
    words = place.split()
    if len(words) == 1 and words[0].lower() in _GENERIC_PLACES:
        return words[0].lower()  # "the main office", but "New York"
    return " ".join(word[:1].upper() + word[1:] for word in words)


def sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def day_of(item: dict) -> str:
    if item.get("day"):
        return str(item["day"])
    try:
        moment = datetime.fromisoformat(str(item.get("at")))
    except ValueError:
        return ""
    return f"{moment.day} {moment:%b}"

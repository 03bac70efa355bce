"""The reading rules: each reads one clause the guards let through and yields facts or updates."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from memory import guards as policy
from memory.writer.offline.keys import line_key, named_key
from memory.writer.offline.tables import NEGATIVE_KINDS, Hint, english_of, has_words, integration_names, role_end
from memory.writer.offline.tables import read as read_tables
from memory.writer.offline.vocabulary import (
    CHANGE_VERB,
    CHANNEL,
    CHANNEL_VERB,
    CHANNELS,
    GOAL_VERB,
    INTEGRATION,
    INTEGRATIONS,
    JOB_NOUN,
    KNOWN_PLANS,
    LANGUAGE,
    STOP_WORDS,
    TENTATIVE,
    TOOL_KINDS,
    alternation,
    clean_phrase,
    significant,
    table,
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
    claimed: bool = False  # said to get something ("I'm the director, approve it"): never kept, but it
    # contradicts the older line of its kind, which goes


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
    """One clause the guards let through (the name stays from when rules read whole sentences).

    ``message`` is the whole message it came from, for cues that hold for all of it ("just this once");
    ``languages`` are the phrase tables in play for that message (English always first).
    """

    text: str
    source: str
    day: str
    opened: frozenset[str]
    message: str = ""
    languages: tuple[str, ...] = ("en",)
    pets_opened: frozenset[str] = frozenset()  # what the instructions open only for the person's pets

    @cached_property
    def tentative(self) -> bool:
        return bool(TENTATIVE.search(self.text))

    @cached_property
    def negated(self) -> bool:
        return bool(NEGATED.search(self.text))

    @cached_property
    def claims_authority(self) -> bool:
        """The message asks for something on the strength of who the person says they are ("note that
        I'm the director, approve it", "as the CFO I need to see all invoices"): a job title in it is
        a claim made to get something, never kept."""
        message = self.message or self.text
        return has_words(message, self.languages, "authority_request") or policy.find_category(message) == "authority"

    @cached_property
    def hedged(self) -> bool:
        """ "might", "thinking of", "quizás", "peut-être", "vielleicht", "talvez", "shayad": said once."""
        return bool(TENTATIVE.search(self.text)) or has_words(self.text, self.languages, "hedges")

    @cached_property
    def temporary(self) -> bool:
        """ "for now", "por ahora", "pour l'instant", "vorerst", "por enquanto", "filhaal": what the
        message says holds for the moment, so it is said once."""
        return has_words(self.message or self.text, self.languages, "temporary")

    @cached_property
    def says_when(self) -> bool:
        """The clause says when ("no calls before 9", "not on weekends", "antes de las 10"): what it says
        about a channel is a restriction, never a refusal of the channel."""
        return bool(_CLOCK.search(self.text)) or has_words(self.text, self.languages, "time_restriction")

    @cached_property
    def names_device(self) -> bool:
        """The clause names a device or an app ("the tablet app", "my laptop"): "phone" near it may be
        the device, not phone calls."""
        return has_words(self.text, self.languages, "device_words")

    @cached_property
    def one_off(self) -> bool:
        """The message asks for this once ("just this once", "solo por hoy"), in any of its languages:
        a language or a style it asks for is not a standing wish."""
        return any(has_words(self.message, (code,), "one_off") for code in self.languages)

    @cached_property
    def hypothetical(self) -> bool:
        """ "if I moved to Paris, ..." says nothing about where they are."""
        return bool(HYPOTHETICAL.search(self.text))


_CLOCK = re.compile(
    r"\b\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h|hrs|uhr|baje|बजे)(?![\w])|\b\d{1,2}:\d{2}\b", re.I
)

Rule = Callable[[Sentence], Iterator["Fact | Update | Hint"]]
RULES: list[tuple[str, Rule]] = []
NEGATION_AWARE: set[str] = set()  # rules that read a negated clause themselves; the others are not asked


def rule(kind: str, *, reads_negation: bool = False) -> Callable[[Rule], Rule]:
    """Register a reading rule; ``kind`` is what a team's "leave out" can switch off.

    A clause with a negation ("not", "don't", "no longer") is only given to rules registered with
    ``reads_negation``: a rule that would otherwise read "I'm not on the Pro plan" as "Is on the Pro
    plan." is never asked.
    """

    def register(function: Rule) -> Rule:
        RULES.append((kind, function))
        if reads_negation:
            NEGATION_AWARE.add(function.__name__)
        return function

    return register


def _fact(key: str, text: str, sentence: Sentence, *, tentative: bool = False) -> Fact:
    return Fact(key=key, text=text, sources=[sentence.source], tentative=tentative)


HYPOTHETICAL = re.compile(
    r"\b(?:if(?!\s+(?:that'?s|that\s+is|it'?s|possible|you\s+can|you\s+could|you\s+don'?t\s+mind|that\s+works|ok|okay|"
    r"needed|necessary|any))|unless|whether|in\s+case|suppose|supposing|imagine|hypothetically)\b",
    re.I,
)
NEGATED = re.compile(
    r"(?<![\w'])(?:not|never|no|nor|neither|none|nobody|without|stop(?:ped)?|don'?t|dont|doesn'?t|didn'?t|isn'?t|"
    r"aren'?t|wasn'?t|weren'?t|won'?t|can'?t|cannot|couldn'?t|shouldn'?t|haven'?t|hasn'?t|any\s*more|no\s+longer)(?![\w'])",
    re.I,
)

# Contact preference, read with its negation and contrast: every channel a clause names is either
# wanted, asked for once, or not wanted, and a sentence never turns "don't call me" into phone.
_CHANNEL_GERUND = r"(?:calling|ringing|phoning|texting|emailing|e-mailing|messaging|whatsapping|called|rung|phoned|texted|emailed|messaged)"
_AVOID = re.compile(
    rf"\b(?:don'?t|dont|do\s+not|never|pls\s+dont)\s+(?:ever\s+|even\s+|again\s+)?(?P<v>{CHANNEL_VERB})(?:\s+(?:me|us)\b|\s*$)|"
    rf"\b(?:stop|quit)\s+(?P<g>{_CHANNEL_GERUND})\b|"
    rf"\bstop\s+(?:sending|giving)\s+(?:me\s+|us\s+)?(?:any\s+)?(?:more\s+)?(?P<s>{CHANNEL})\b|"
    rf"\bno\s+more\s+(?P<m>{CHANNEL})\b|\bno\s+(?P<n>{CHANNEL})\s*(?=$|[,.!]|please|pls|thanks)|"
    rf"\bno\s+(?P<nw>{CHANNEL})\s+(?=before|after|until|till|during|between|at\s+night|on\s+weekends|at\s+weekends|in\s+the)|"
    rf"\bnot\s+(?:(?:by|via|on|over|through|a|an|the|my)\s+){{0,2}}(?P<p>{CHANNEL}|{_CHANNEL_GERUND})\b|"
    rf"\b(?:rather\s+than|instead\s+of|than)\s+(?:a\s+|an\s+|the\s+|my\s+|by\s+|to\s+)?(?P<o>{CHANNEL}|{_CHANNEL_GERUND}|{CHANNEL_VERB})\b|"
    rf"\b{CHANNEL}\s+over\s+(?:a\s+|an\s+|the\s+)?(?P<ov>{CHANNEL}|{_CHANNEL_GERUND})\b|"
    rf"\b(?:hate|dislike|can'?t\s+stand|don'?t\s+like|do\s+not\s+like|avoid|not\s+a\s+fan\s+of|never\s+(?:check|answer|pick\s+up|read))\s+(?:\w+\s+)?(?P<h>{CHANNEL}|{_CHANNEL_GERUND})\b|"
    rf"\brather\s+not\s+(?:be\s+|get\s+)?(?P<r>{CHANNEL}|{_CHANNEL_GERUND})\b|"
    rf"\b(?P<x>{CHANNEL})\s+(?:is|are)\s+(?:a\s+)?(?:no-?go|out|not\s+(?:ok|okay|good|great|ideal|possible))\b|"
    rf"\b(?:beats|trumps)\s+(?:a\s+|the\s+)?(?P<bt>{CHANNEL})\b|"
    rf"\b(?:stopped|quit)\s+(?:checking|reading|using|answering)\s+(?:my\s+)?(?P<sc>{CHANNEL})\b|"
    rf"\b(?:no\s+longer|don'?t|dont|do\s+not|never)\s+(?:use|check|read|have|do|answer|listen\s+to|pick\s+up)\s+(?:my\s+|the\s+)?(?P<nl>{CHANNEL}|voicemails?)\b",
    re.I,
)
_PREFER = re.compile(
    rf"\b(?:i|we)(?:'d|\s+would)?\s+(?:much\s+|really\s+|always\s+|definitely\s+)?(?:rather|prefer|like)\s+(?:to\s+be\s+(?:contacted|reached)\s+(?:by|via|on|over|through)\s+|being\s+(?:contacted|reached)\s+(?:by|via|on|over)\s+|you\s+|to\s+)?(?:use\s+|get\s+)?(?:an?\s+|the\s+)?(?P<p>{CHANNEL}|{CHANNEL_VERB}(?:ed|d)?(?=\s+(?:me|us)\b))\b(?!\s+(?:in|with|about)\b)|"
    rf"(?:\band\s+|^\s*)(?:really\s+|much\s+|also\s+)?prefer\s+(?:to\s+be\s+(?:contacted|reached)\s+(?:by|via|on|over)\s+)?(?P<a>{CHANNEL})\b(?!\s+(?:in|with|about)\b)",
    re.I,
)
_REACH_ME = re.compile(
    rf"\breach\s+out\s+(?:to\s+(?:me|us)\s+)?(?:only\s+|just\s+)?(?:by|via|on|over|through)\s+(?:my\s+)?(?P<ro>{CHANNEL})\b|"
    rf"\b(?:contact|reach|message|ping|email|text|call|get\s+(?:in\s+touch|back)\s+(?:with|to))\s+(?:me|us)\s+(?:only\s+|just\s+)?(?:by|via|on|over|through)\s+(?:my\s+)?(?P<p>{CHANNEL})\b",
    re.I,
)
_SEND_BY = re.compile(
    rf"\b(?:send|sending)\s+(?:me\s+|us\s+)?(?:the\s+|my\s+|our\s+|all\s+|any\s+)?(?:[\w\-]+\s+){{0,2}}?"
    rf"(?:reminders|updates|notifications|alerts|messages|confirmations|receipts|invoices|news|offers)\s+"
    rf"(?:by|via|over|through|as|on)\s+(?:an?\s+)?(?P<p>{CHANNEL})\b",
    re.I,
)
_BEST_WAY = re.compile(
    rf"\b(?:easiest|simplest|quickest|fastest)\s+(?:is|would\s+be|way\s+is|for\s+me\s+is)\s+(?:by\s+|via\s+|on\s+|over\s+)?(?:an?\s+)?(?P<e>{CHANNEL})\b|"
    rf"\bsend\s+(?:me\s+|us\s+)?(?:everything|it\s+all|all\s+of\s+it|all\s+that|stuff|things)\s+(?:to|by|via|on|over)\s+(?:my\s+|our\s+)?(?P<s>{CHANNEL})\b|"
    rf"\b(?:i|we)\s+only\s+(?:check|read|use|look\s+at|answer)\s+(?:my\s+|our\s+)?(?P<k>{CHANNEL})\b|"
    rf"\bbest\s+(?:way|channel|bet)\s+(?:to\s+(?:reach|contact|get)\s+(?:me|us|hold\s+of\s+(?:me|us))\s+)?is\s+(?:by\s+|via\s+|on\s+|over\s+|through\s+)?(?:my\s+)?(?P<p>{CHANNEL})\b|"
    rf"\b(?:i|we)\s+(?:check|read|see|use|look\s+at|answer)\s+(?:my\s+|our\s+)?(?P<c>{CHANNEL}|inbox)\s+(?:way\s+|much\s+|a\s+lot\s+|far\s+)?more\b|"
    rf"^\s*(?:(?:yes|yeah|yep|ok|okay|honestly|just|only|tbh)[\s,]+)*(?P<o>{CHANNEL})\s+(?:only|please|pls|works(?:\s+(?:best|better|fine))?|(?:is|are)\s+(?:just\s+|much\s+|way\s+|so\s+)?(?:best|better|easier|fine|ok|okay|good|great|quicker|faster))\b|"
    rf"\b(?P<w>{CHANNEL})\s+(?:beats|trumps|wins)\b|"
    rf"\b(?:an?\s+(?:quick\s+|short\s+)?)?(?P<q>{CHANNEL})\s+is\s+(?:the\s+way\s+to\s+go|the\s+best\s+(?:way|option|bet)|my\s+preference|preferred)\b|"
    rf"^\s*(?:please\s+|pls\s+|just\s+)?(?:use|try|stick\s+(?:to|with)|switch\s+(?:over\s+)?to|go\s+with)\s+(?:my\s+)?(?P<u>{CHANNEL})(?=\s*(?:$|instead|please|pls|then|now|not\b|rather\b|over\b|from\s+now\s+on|going\s+forward|in\s+future|for\s+(?:updates|everything|that)\b))",
    re.I,
)
_CHANGED_WISH = re.compile(
    r"\b(?:now|actually|these\s+days|from\s+now\s+on|changed|switch\w*|any\s*more|instead\s+of\s+email|scratch\s+that)\b",
    re.I,
)
_BARE_CHANNEL = re.compile(rf"^\s*(?:by\s+|via\s+)?(?P<b>{CHANNEL})\s*(?:only|please|pls|instead|then)?\s*$", re.I)
_VERB_ME = re.compile(
    rf"\b(?P<cue>(?:please\s+|pls\s+|plz\s+|kindly\s+)?(?:only\s+|just\s+|honestly\s+)*)"
    rf"(?:(?P<v>{CHANNEL_VERB})\s+(?:me|us)|(?:drop|shoot|send|give)\s+(?:me|us)\s+(?:an?\s+)?(?P<n>email|e-mail|mail|line|text|txt|sms|call|ring|whatsapp|message))\b(?P<rest>.*)$",
    re.I,
)
_ONE_OFF_OBJECT = re.compile(
    r"^\s*(?:the|a|an|my|our|this|that|it|those|these|some|details|back|when|about|once|today|tomorrow|tonight|later|in\s+an?\s+hour)\b",
    re.I,
)
_PERSISTENT = re.compile(
    r"\b(?:instead|from\s+now\s+on|in\s+(?:the\s+)?future|going\s+forward|next\s+time|always|only|rather|prefer|just|honestly)\b",
    re.I,
)
_VERB_CHANNEL = {
    "email": "email",
    "e-mail": "email",
    "mail": "email",
    "line": "email",
    "call": "phone",
    "phone": "phone",
    "ring": "phone",
    "text": "SMS",
    "txt": "SMS",
    "sms": "SMS",
    "whatsapp": "WhatsApp",
    "message": "chat",
    "inbox": "email",
    "calling": "phone",
    "ringing": "phone",
    "phoning": "phone",
    "called": "phone",
    "rung": "phone",
    "phoned": "phone",
    "texting": "SMS",
    "texted": "SMS",
    "emailing": "email",
    "e-mailing": "email",
    "emailed": "email",
    "messaging": "chat",
    "messaged": "chat",
    "whatsapping": "WhatsApp",
}
_CALL_ME_NAME = re.compile(
    r"\b(?:please\s+|pls\s+)?call\s+me\s+(?P<name>(?-i:[A-Z][a-z]{1,20}))\b(?:,?\s+not\s+(?-i:[A-Z][a-z]+))?", re.I
)


def _channel(word: str) -> str:
    word = re.sub(r"\s+", " ", word.lower())
    word = re.sub(r"^(?:an?|my|the)\s+", "", word)
    return CHANNELS.get(word) or _VERB_CHANNEL.get(word) or word


@rule("contact", reads_negation=True)
def contact_preference(sentence: Sentence) -> Iterator[Hint | Fact]:
    """Hints, merged per message: "please email me, I hate phone calls" -> "Prefers email over phone."

    A channel after a negation or a contrast ("don't call me", "not by phone", "instead of calling",
    "no more texts", "stop sending emails") is one they do not want; it is never read as wanted.
    """
    text = sentence.text
    if name := _CALL_ME_NAME.search(text):
        yield _fact("name", f"Prefers to be called {name.group('name')}.", sentence)
        text = text[: name.start()] + text[name.end() :]
    avoided, avoided_spans = _avoided(text, sentence)
    yield from avoided
    yield from _preferred(text, sentence, avoided_spans)
    if (match := _BARE_CHANNEL.search(text)) and _wanted(text, avoided_spans, match, "b"):
        yield Hint("request", _channel(match.group("b")), sentence.source)  # "Email, not SMS."
    yield from _asked_by_verb(text, sentence, avoided_spans)


def _avoided(text: str, sentence: Sentence) -> tuple[list[Hint], list[tuple[int, int]]]:
    """The channels the clause says it does not want, and where each is named."""
    hints, spans = [], []
    for match in _AVOID.finditer(text):
        if NEGATED.search(text[: match.start()]) and not re.search(r",|\bbut\b", text[: match.start()]):
            continue  # "it's not that I hate calls": a negated dislike is no preference either way
        group = next(name for name, value in match.groupdict().items() if value)
        spans.append(match.span(group))
        hints.append(Hint("avoid", _channel(match.group(group)), sentence.source))
    return hints, spans


def _wanted(text: str, avoided_spans: list[tuple[int, int]], match: re.Match[str], group: str) -> bool:
    """The channel in ``group`` is wanted: not one the clause avoids, and no negation before it unless
    a contrast turns it round ("not by phone, but email")."""
    start = match.start(group)
    if any(a <= start < b for a, b in avoided_spans):
        return False
    return not NEGATED.search(text[: match.start()]) or bool(
        re.search(r",|\bbut\b|\binstead\b|\brather\b", text[: match.start()], re.I)
    )


def _preferred(text: str, sentence: Sentence, avoided_spans: list[tuple[int, int]]) -> Iterator[Hint]:
    """ "I'd rather you text me", "reach me on WhatsApp", "send reminders by email", "email works best"."""
    fresh = bool(_CHANGED_WISH.search(sentence.message or text))
    for pattern in (_PREFER, _REACH_ME, _SEND_BY, _BEST_WAY):
        for match in pattern.finditer(text):
            group = next(
                name
                for name in ("p", "a", "c", "o", "w", "q", "u", "e", "s", "k", "ro")
                if name in pattern.groupindex and match.group(name)
            )
            if _wanted(text, avoided_spans, match, group):
                yield Hint("prefer", _channel(match.group(group)), sentence.source, fresh)


def _asked_by_verb(text: str, sentence: Sentence, avoided_spans: list[tuple[int, int]]) -> Iterator[Hint]:
    """ "text me instead" (a standing wish), "email me" (asked for): never "email me the invoice"."""
    for match in _VERB_ME.finditer(text):
        group = "v" if match.group("v") else "n"
        if not _wanted(text, avoided_spans, match, group):
            continue
        rest = match.group("rest")
        if re.match(rf"\s*(?:on|by|via|over|through|at)\s+(?:my\s+)?{CHANNEL}\b", rest, re.I):
            continue  # "message me on WhatsApp": the channel it names is the wish (read above)
        standing = re.search(
            r"\b(?:instead|from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|always|rather|only)\b", rest, re.I
        )
        if _ONE_OFF_OBJECT.search(rest) and not standing:
            continue  # "email me the invoice": a one-off request
        how = "prefer" if standing or _PERSISTENT.search(match.group("cue")) else "request"
        yield Hint(how, _channel(match.group(group)), sentence.source)


_CONTACT_LINE = re.compile(
    r"^Prefers\s+(?:(?P<want>[\w\-]+)\s+over\s+(?P<avoid>[\w\-]+)|to\s+be\s+reached\s+by\s+(?P<want2>[\w\-]+)|"
    r"not\s+to\s+get\s+(?P<phone>phone)\s+calls|not\s+to\s+be\s+contacted\s+by\s+(?P<avoid2>[\w\-]+))\.?$",
    re.I,
)


def contact_line(hints: list[Hint], existing: str | None = None) -> Fact | None:
    """One contact line from a run's hints, in the order they were said: what they want over what they
    do not. The last word on a channel counts ("don't call me" ... "actually, calls are fine"); two
    different wishes in one message say nothing. A run that only says what they do not want keeps
    what the existing line says they want: "Prefers to be reached by email." and then "no calls"
    make "Prefers email over phone."; a new wish keeps the old dislike unless it is said as a change
    ("WhatsApp now").
    """
    last: dict[str, tuple[int, str]] = {}
    for index, hint in enumerate(hints):
        if hint.how == "request" and last.get(hint.channel, (0, ""))[1] == "prefer":
            continue  # asked for again: still wanted
        last[hint.channel] = (index, hint.how)
    said = _want_and_avoid(hints, last)
    if said is None:
        return None
    want, avoid, fresh = said
    if existing and (old := _CONTACT_LINE.match(existing)):
        kept = _with_existing_line(old, want, avoid, last=last, fresh=fresh)
        if kept is None:
            return None
        want, avoid = kept
    sources = []
    for hint in hints:
        if hint.source not in sources:
            sources.append(hint.source)
    return _contact_fact(want, avoid, sources)


def _want_and_avoid(hints: list[Hint], last: dict[str, tuple[int, str]]) -> tuple[str | None, str | None, bool] | None:
    """The channel the run last wanted, the one it last avoided, and whether the wish was said as a
    change; ``None`` when one message says two different wishes (say nothing rather than guess)."""
    avoided = sorted((index, channel) for channel, (index, how) in last.items() if how == "avoid")
    wanted = sorted((index, channel) for channel, (index, how) in last.items() if how == "prefer")
    if not wanted and avoided:
        wanted = sorted((index, channel) for channel, (index, how) in last.items() if how == "request")
    want = wanted[-1][1] if wanted else None
    fresh = False
    if want:
        source = hints[wanted[-1][0]].source
        if any(
            hint.source == source and hint.how == "prefer" and hint.channel != want and last[hint.channel][1] != "avoid"
            for hint in hints
        ):
            return None
        fresh = hints[wanted[-1][0]].fresh
        if fresh:  # a changed wish ("WhatsApp now") starts afresh
            start = min(index for index, hint in enumerate(hints) if hint.source == source)
            avoided = [(index, channel) for index, channel in avoided if index >= start]
    avoid = avoided[-1][1] if avoided and avoided[-1][1] != want else None
    return want, avoid, fresh


def _with_existing_line(
    old: re.Match[str], want: str | None, avoid: str | None, *, last: dict[str, tuple[int, str]], fresh: bool
) -> tuple[str | None, str | None] | None:
    """What the run wants and avoids, with what the existing contact line says where the run is silent;
    ``None`` when the run ends the existing wish and nothing replaces it."""
    old_want = old.group("want") or old.group("want2")
    if (
        want is None
        and avoid
        and old_want
        and old_want.lower() != avoid.lower()
        and last.get(old_want, (0, ""))[1] != "avoid"
    ):
        want = old_want
    old_avoid = old.group("avoid") or old.group("avoid2") or old.group("phone")
    if avoid is None and want and old_avoid and old_avoid.lower() != want.lower() and not fresh:
        avoid = old_avoid  # "don't call me", then another day "email me instead"
    if want is None and avoid and old_want and old_want.lower() == avoid.lower():
        return None  # "I no longer use WhatsApp": the line that wanted it goes, nothing replaces it
    return want, avoid


def _contact_fact(want: str | None, avoid: str | None, sources: list[str]) -> Fact | None:
    if want and avoid:
        return Fact("contact", f"Prefers {want} over {avoid}.", sources)
    if want:
        return Fact("contact", f"Prefers to be reached by {want}.", sources)
    if avoid == "phone":
        return Fact("contact", "Prefers not to get phone calls.", sources)
    if avoid:
        return Fact("contact", f"Prefers not to be contacted by {avoid}.", sources)
    return None


_LANGUAGE_PATTERNS = (
    re.compile(
        rf"\b(?:chat|talk|speak|repl(?:y|ies|ied)|respon|answer|writ|message|communicat)\w*\s+(?:to\s+me\s+|with\s+me\s+|me\s+)?in\s+(?P<lang>{LANGUAGE})\b",
        re.I,
    ),
    re.compile(
        rf"\b(?:i|we)(?:'d|\s+would)?\s+(?:much\s+|really\s+)?(?:prefer|rather\s+use|rather\s+have)\s+(?:to\s+\w+\s+in\s+)?(?P<lang>{LANGUAGE})\b",
        re.I,
    ),
    re.compile(rf"\b(?:my|our)\s+(?:preferred\s+|first\s+|main\s+)?language\s+is\s+(?P<lang>{LANGUAGE})\b", re.I),
    re.compile(rf"\b(?:i'?m|i\s+am)\s+(?:more\s+)?comfortable\s+(?:in|with)\s+(?P<lang>{LANGUAGE})\b", re.I),
    re.compile(rf"\b(?P<lang>{LANGUAGE})\s+(?:please|is\s+(?:better|easier)\s+for\s+me)\b", re.I),
    re.compile(
        rf"\b(?P<lang>{LANGUAGE})\s+(?:would\s+be|is)\s+(?:much\s+|a\s+lot\s+)?(?:easier|better)\s+for\s+(?:me|us)\b",
        re.I,
    ),
)
_ONE_OFF = re.compile(
    r"\b(?:just|only)\s+(?:this|for\s+this|today|now|once)\b|\bthis\s+(?:once|time)\b|\bfor\s+now\b|\btranslate\b", re.I
)


@rule("language")
def language_preference(sentence: Sentence) -> Iterator[Fact]:
    """ "can you reply in Hindi from now on?" -> "Prefers to chat in Hindi." """
    if _ONE_OFF.search(sentence.message or sentence.text):
        return
    for pattern in _LANGUAGE_PATTERNS:
        if match := pattern.search(sentence.text):
            language = match.group("lang").capitalize()
            yield _fact("language", f"Prefers to chat in {language}.", sentence)
            return


_STYLE_WORDS = {
    "short": "short",
    "brief": "short",
    "concise": "short",
    "quick": "short",
    "shorter": "short",
    "detailed": "detailed",
    "longer": "detailed",
    "long": "detailed",
    "thorough": "detailed",
    "in-depth": "detailed",
    "step-by-step": "step-by-step",
    "step by step": "step-by-step",
}
_STYLE = re.compile(
    r"\b(?P<w>short|brief|concise|quick|shorter|detailed|longer|long|thorough|in-depth|step-by-step|step\s+by\s+step)\s+"
    r"(?:answers|replies|responses|explanations|instructions)\b|"
    r"\b(?:answers|replies|responses)\s+(?:short|brief|concise)\b|\bbullet\s+points\b|\bkeep\s+it\s+(?P<k>short|brief)\b",
    re.I,
)


@rule("style")
def answer_style(sentence: Sentence) -> Iterator[Fact]:
    """ "I prefer short answers" -> "Prefers short answers." (only when said as a standing preference)"""
    text = sentence.text
    if not _PERSISTENT.search(text) and not re.search(
        r"\b(?:i|we)\s+(?:like|want|need)\b|\bin\s+general\b|\bgenerally\b", text, re.I
    ):
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
_REMOTE = re.compile(
    r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+(?:now\s+|fully\s+|completely\s+|mostly\s+|100%\s+)*"
    r"(?:work(?:ing)?\s+(?:from\s+home|remotely)|remote)\b",
    re.I,
)
_PART_TIME_END = re.compile(
    r"\s*(?:[,;:(]|\b(?:but|because|since|so|as|the\s+rest|otherwise|if|when|while|please|and\s+(?:i|we|the|in|at|from))\b).*$",
    re.I,
)


def _part_time_line(match: re.Match[str], sentence: Sentence) -> str | None:
    """ "I work from home two days a week" -> "Works from home two days a week.": the part of the week
    in the person's words, or nothing."""
    how = "from home" if re.search(r"home", match.group(0), re.I) else "remotely"
    when = re.sub(r"\s+", " ", _PART_TIME_END.sub("", sentence.text[match.end() :])).strip(" .!?")
    if not when or len(when.split()) > 7 or not has_words(when, ("en",), "part_time"):
        return None
    if re.search(r"\b(?:i|me|my|we|us|our|you|your)\b", when, re.I):
        return None
    return f"Works {how} {when}."


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
    elif match := _REMOTE.search(sentence.text):
        if not has_words(sentence.message or sentence.text, sentence.languages, "part_time"):
            yield _fact("office", "Works remotely.", sentence)  # "home two days a week" is not "Works remotely."
        elif line := _part_time_line(match, sentence):
            yield _fact("remote_days", line, sentence)
    if match := _BASED.search(sentence.text):
        place = _place(next(group for group in match.groups() if group))
        if place:
            yield _fact("location", f"Based in {place}.", sentence)
    elif (match := _PLACE_NEAR.search(sentence.text)) and (place := _place(match.group("place"))):
        yield _fact("location", f"Lives near {place}.", sentence)  # near, never "in"


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
    """ "I moved from Pune to Mumbai" -> the line that says Pune now says Mumbai (or "Based in Mumbai.")"""
    if sentence.tentative:
        return
    if match := _MOVED_FROM_TO.search(sentence.text):
        old = _GENERIC_SUFFIX.sub("", match.group("a"))
        new_raw = match.group("b")
        new = _GENERIC_SUFFIX.sub("", new_raw)
        moves = bool(re.search(r"\b(?:moved|relocated|transferred)\b", match.group(0).lower()))
        yield Update(
            old=old,
            new=_moved_display(new_raw, new, moves=moves),
            sources=[sentence.source],
            fallback=_moved_fallback(new_raw, new, sentence, moves=moves),
        )
    elif (match := _MOVED_TO.search(sentence.text)) and (place := _place(match.group("b"))):
        if match.group("office"):
            yield _fact("office", f"Works from the {place} office.", sentence)
        else:
            yield Update(
                old="", new=None, sources=[sentence.source], fallback=_fact("location", f"Based in {place}.", sentence)
            )


def _moved_fallback(new_raw: str, new: str, sentence: Sentence, *, moves: bool) -> Fact | None:
    """The line a move from A to B writes when no line names A: a plan, an app, a place, a tool."""
    if re.search(r"\bplan$", new_raw, re.I):
        return _fact("plan", f"Is on the {plan_name(new)} plan.", sentence)
    if re.search(r"\bapp$", new_raw, re.I):
        return _fact("app", f"Uses the {_app_name(new)} app.", sentence)
    if moves and _place(new):
        if re.search(r"\boffice$", new_raw, re.I):
            return _fact("office", f"Works from the {_place(new)} office.", sentence)
        return _fact("location", f"Based in {_place(new)}.", sentence)
    if (tool := _integration_name(new)) is not None:
        return _fact(f"integration:{tool.lower()}", f"Uses {tool}.", sentence)
    return None


def _moved_display(new_raw: str, new: str, *, moves: bool) -> str:
    """B as the replaced line spells it."""
    if re.search(r"\bapp$", new_raw, re.I):
        return _app_name(new)
    if re.search(r"\bplan$", new_raw, re.I):
        return plan_name(new)
    if moves:
        return title(new)
    return _integration_name(new) or new


_ROLE = re.compile(
    rf"\b(?:i'?m|i\s+am|i\s+work\s+as|i\s+work\s+here\s+as)\s+(?:a|an)\s+(?P<role>(?:[\w\-]+(?:['\u2019]s)?\s+){{0,3}}?{JOB_NOUN}){role_end('en')}|"
    rf"\bmy\s+(?:role|job|job\s+title|title|position)\s+is\s+(?:a\s+|an\s+)?(?P<role2>(?:[\w\-]+(?:['\u2019]s)?\s+){{0,3}}?{JOB_NOUN}){role_end('en')}",
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
        yield _claimed(_fact("role", f"Works as {article} {title}.", sentence), sentence)


def _claimed(fact: Fact, sentence: Sentence) -> Fact:
    """A job title from a message that asks for something on its strength is a claim, not a fact."""
    fact.claimed = sentence.claims_authority
    return fact


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
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:all\s+|mostly\s+|running\s+|now\s+)*on\s+(?P<os>windows(?:\s+\d+)?|macos|mac\s*os|linux|ubuntu|chromeos|android|ios)\b|"
    r"\b(?:i|we)\s+(?:use|run)\s+(?P<os2>windows(?:\s+\d+)?|macos|linux|ubuntu|chromeos)\b",
    re.I,
)
_APP_NAMES = {
    "android": "Android",
    "ios": "iOS",
    "iphone": "iPhone",
    "web": "web",
    "desktop": "desktop",
    "mobile": "mobile",
    "windows": "Windows",
    "mac": "Mac",
}
_OS_NAMES = {
    "windows": "Windows",
    "macos": "macOS",
    "mac os": "macOS",
    "macos ": "macOS",
    "linux": "Linux",
    "ubuntu": "Ubuntu",
    "chromeos": "ChromeOS",
    "android": "Android",
    "ios": "iOS",
}


def _app_name(word: str) -> str:
    return _APP_NAMES.get(word.lower(), word)


def plan_name(word: str) -> str:
    word = word.strip()
    return (
        word.lower()
        if word.lower() in {"annual", "monthly", "yearly", "quarterly", "free"}
        else word[:1].upper() + word[1:]
    )


def _integration_name(word: str) -> str | None:
    for name in INTEGRATIONS:
        if name.lower() == word.strip().lower():
            return name
    return None


_DEVICE_NOUN = alternation(
    word for word in table("en").get("device_words") or [] if word not in {"app", "apps", "screen", "device", "mac"}
)
_USES_DEVICE = re.compile(
    r"\b(?:i|we)(?:'m|\s+am|'re|\s+are)?\s+(?:mostly\s+|mainly\s+|usually\s+|only\s+|always\s+|just\s+|now\s+)?"
    r"(?:use|using|(?:[\w\-]+\s+){1,4}?(?:on|using|via|through|from)|on)\s+"
    rf"(?P<det>the|my|our|an?)\s+(?P<thing>(?:[\w\-]+\s+){{0,2}}?{_DEVICE_NOUN}(?:\s+app)?)(?![\w\-])",
    re.I,
)


def _device_line(match: re.Match[str]) -> str | None:
    """ "I do everything on my laptop" -> "Uses a laptop."; "I use the tablet app" -> "Uses the tablet app." """
    thing = re.sub(r"\s+", " ", match.group("thing")).strip()
    if set(thing.lower().split()) & {
        "it",
        "this",
        "that",
        "these",
        "those",
        "them",
        "your",
        "you",
        "their",
        "his",
        "her",
    }:
        return None
    det = match.group("det").lower()
    if det == "the":
        return f"Uses the {thing}."
    article = "an" if thing[:1].lower() in "aeiou" or thing[:1] == "X" else "a"
    return f"Uses {article} {thing}."


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
    elif (match := _USES_DEVICE.search(text)) and (line := _device_line(match)):
        yield _fact(line_key(line) or "device", line, sentence)
    if match := _OS.search(text):
        raw = (match.group("os") or match.group("os2")).lower()
        base = re.sub(r"\s*\d+$", "", raw)
        version = raw[len(base) :]
        yield _fact("os", f"Uses {_OS_NAMES.get(base, base.title())}{version}.", sentence)
    for match in re.finditer(
        rf"\b(?:i|we)(?:'re|\s+are|'m|\s+am)?\s+(?:also\s+|mostly\s+|mainly\s+|now\s+|already\s+)?(?:use|using|run\s+on|running\s+on|run|running|rely\s+on|work\s+in|work\s+with|integrated\s+with|connected|on)\s+"
        rf"(?P<tools>{INTEGRATION}(?:(?:\s*(?:,|and|&|or|plus)\s*|\s+for\s+[\w\-]+(?:\s+[\w\-]+)?\s+(?:and|,)\s+){INTEGRATION})*)\b|\b(?:our|my)\s+(?:crm|help\s?desk|ticketing\s+(?:system|tool)|store|shop)\s+(?:is|runs\s+on)\s+(?P<tools2>{INTEGRATION})\b",
        text,
        re.I,
    ):
        for tool in re.findall(INTEGRATION, match.group("tools") or match.group("tools2"), re.I):
            name = _integration_name(tool) or tool
            if re.search(
                rf"\b(?:from|leave|leaving|away\s+from|replace|replacing|off)\s+{re.escape(tool)}\b", text, re.I
            ):
                continue
            yield _fact(f"integration:{name.lower()}", f"Uses {name}.", sentence)
    # "we track bugs in Linear", "our team lives in Notion": the tool as typed (a capital: "linear" is
    # a word), never while they are leaving, comparing or trying it
    if (match := _TOOL_IN.search(text)) and match.group("tool")[:1].isupper() and not _NOT_THE_TOOL_NOW.search(text):
        name = _integration_name(match.group("tool")) or match.group("tool")
        yield _fact(f"integration:{name.lower()}", f"Uses {name}.", sentence)


_TOOL_IN = re.compile(
    rf"\b(?:we|i|our\s+(?:team|teams|company|business|staff|people|support|devs|developers|engineers|agents))(?:'re|\s+are|'m|\s+am)?\s+"
    rf"(?!used\b|use\s+to\b)(?:[\w\-]+\s+){{1,4}}?(?:in|on|with|through|via|inside|out\s+of)\s+(?P<tool>{INTEGRATION})(?![\w\-])",
    re.I,
)
_NOT_THE_TOOL_NOW = re.compile(
    r"\b(?:used\s+to|away\s+from|from|leav\w*|left|instead|replac\w*|until|before|trial\w*|trying|test\w*|evaluat\w*|"
    r"looking\s+at|compar\w*|vs|versus|or|demo\w*|pilot\w*|integrat\w*|connect\w*|sync\w*|export\w*|import\w*)\b",
    re.I,
)
_PLACE_NEAR = re.compile(
    r"\b(?:i|we)\s+(?:now\s+|currently\s+)?(?:live|am\s+based|'m\s+based|are\s+based|'re\s+based)\s+(?:right\s+|quite\s+)?near\s+"
    r"(?P<place>(?-i:[A-Z])[\w\-]*(?:\s+(?-i:[A-Z])[\w\-]*){0,2})",
    re.I,
)


_PLAN = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are|i'?ve|we'?ve|i\s+have|we\s+have)\s+(?:currently\s+|now\s+|still\s+|already\s+)?(?:on|using|subscribed\s+to|got|paying\s+for|bought)\s+(?:the\s+|a\s+|an\s+)?(?P<plan>[\w\-]+(?:\s+[\w\-]+){0,3}?)\s+plan\b|"
    r"\b(?:i|we)\s+(?:have|use|pay\s+for)\s+(?:the\s+|a\s+|an\s+)?(?P<plan2>[\w\-]+(?:\s+[\w\-]+){0,3}?)\s+plan\b|"
    r"\b(?:my|our)\s+plan\s+is\s+(?:the\s+)?(?P<plan3>[\w\-]+)\b",
    re.I,
)


@rule("plan")
def plan(sentence: Sentence) -> Iterator[Fact]:
    """ "we're on the Pro plan" -> "Is on the Pro plan." """
    if sentence.tentative:
        return
    if match := _PLAN.search(sentence.text):
        name = re.sub(r"\s+", " ", match.group("plan") or match.group("plan2") or match.group("plan3"))
        if " " in name:  # "the 5G Max plan": the whole name as typed, or nothing ("the family Pro plan")
            if not all(word[:1].isupper() or word[:1].isdigit() for word in name.split()):
                return
            yield _fact("plan", f"Is on the {name} plan.", sentence)
            return
        if name.lower() not in KNOWN_PLANS and (name.lower() in STOP_WORDS or not name[:1].isupper()):
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
_VERB_BASE = {
    "moving": "move",
    "switching": "switch",
    "upgrading": "upgrade",
    "downgrading": "downgrade",
    "changing": "change",
}
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
    if re.fullmatch(rf"(?:the\s+)?{LANGUAGE}", obj, re.I):
        return  # "can we switch to German": a language, read by language_preference, never a plan
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


_HEDGED = re.compile(
    r"\b(?:(?:i|we)(?:'ll|\s+will|'d|\s+would)?\s+(?:probably\s+|maybe\s+|possibly\s+)?(?:might|may|could)\s+(?:also\s+|soon\s+|eventually\s+|well\s+)?|"
    r"(?:i|we)(?:'ll|\s+will)\s+(?:probably|possibly|maybe)\s+|"
    r"(?:maybe|probably|perhaps|possibly)\s+(?:i|we)(?:'ll|\s+will)?\s+|"
    r"(?:i'?m|we'?re|i\s+am|we\s+are)\s+(?:probably|possibly|maybe)\s+(?:going\s+to|gonna)\s+)"
    r"(?P<phrase>(?!(?:not|be\s+able|need|have\s+to|ask|call|email|text|ring|message|contact|reply|write|get\s+back|"
    r"forget|check|let\s+you|see|try\s+again|come\s+back)\b)[a-z][\w\-']*(?:\s+[\w\-']+){0,9})|"
    r"\b(?:i'?m|we'?re|i\s+am|we\s+are)\s+(?:also\s+|seriously\s+|kind\s+of\s+|sort\s+of\s+)?(?P<think>thinking\s+(?:of|about)|considering)\s+"
    r"(?P<gerund>(?!(?:it|this|that|you|your|them|him|her)\b)[\w\-']+(?:\s+[\w\-']+){0,9})",
    re.I,
)


_HEDGED_START = re.compile(
    r"^\s*(?:(?:might|may)\s+|(?:probably|maybe|possibly)\s+(?P<going>going\s+to\s+|gonna\s+)?)"
    r"(?P<phrase>(?!(?:not|be\s+able|need|have\s+to|ask|call|email|text|ring|message|contact|reply|write|get\s+back|"
    r"forget|check|let\s+you|see|try\s+again|come\s+back|i|we|you|it|this|that)\b)[\w\-']+(?:\s+[\w\-']+){0,9})",
    re.I,
)


@rule("tentative")
def hedged(sentence: Sentence) -> Iterator[Fact]:
    """Said tentatively, in the person's words: "we might go paperless" -> "Might go paperless (said
    once, 3 Nov)."; "I'm thinking of learning Python" -> "Is thinking of learning Python (said once,
    3 Nov)." Only first person, never about the agent ("you"), never when a sharper rule reads it."""
    if not sentence.hedged or _CHANGE.search(sentence.text) or _GOAL.search(sentence.text):
        return
    match = _HEDGED.search(sentence.text)
    if start := _HEDGED_START.match(sentence.text):
        phrase = start.group("phrase")
        if start.group("going") and re.match(r"(?-i:[A-Z])", phrase):
            phrase = "go to " + phrase  # "probably going to Japan in April"
        elif start.group("going"):
            return
        phrase = clean_phrase(phrase)
        if len(phrase.split()) >= 2 and not re.search(r"\b(?:you|your|yours|u|ur)\b", phrase, re.I):
            text = f"Might {phrase} (said once, {sentence.day})."
            yield _fact(line_key(text) or named_key("change", text), text, sentence, tentative=True)
        return
    if not match:
        return
    if match.group("phrase"):
        phrase, lead = match.group("phrase"), "Might"
    else:
        think = re.sub(r"\s+", " ", match.group("think")).lower()
        phrase, lead = match.group("gerund"), f"Is {think}"
    phrase = clean_phrase(phrase)
    if re.search(r"\b(?:you|your|yours|u|ur)\b", phrase, re.I) or len(phrase.split()) < 2:
        return
    text = f"{lead} {phrase} (said once, {sentence.day})."
    yield _fact(line_key(text) or named_key("change", text), text, sentence, tentative=True)


_GOAL = re.compile(
    rf"\b(?:(?:i|we)(?:'d|\s+would)?\s+(?:really\s+)?(?:want|wanna|like|love|need|hope|plan|aim|intend)|"
    rf"(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:trying|looking|hoping|planning|aiming)|(?:my|our)\s+(?:main\s+|big\s+|top\s+|first\s+)?(?:goal|aim|priority|objective|target)(?:\s+(?:this|for\s+the|for\s+this|next)\s+(?:quarter|year|month|week))?\s+is)\s+to\s+"
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
    r"(?:(?:in\s+the\s+middle\s+of|halfway\s+through|partway\s+through|midway\s+through|in\s+the\s+process\s+of)\s+(?P<mid>[^.;!?,]+)|"
    r"(?P<verb>setting\s+up|migrating|configuring|rolling\s+out|onboarding|integrating|building|implementing|"
    r"deploying|evaluating|trialling|trialing|piloting|working\s+on)\b(?P<rest>[^.;!?]*))",
    re.I,
)
_DONE = re.compile(
    r"(?:\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+)?(?:finished|completed|wrapped\s+up)|\b(?:i'?m|we'?re|i\s+am|we\s+are)\s+(?:finally\s+|all\s+)?done\s+with|^\s*(?:finally\s+|all\s+)?done\s+with)\s+(?P<what>[^.;!?,]+)|"
    r"\b(?P<what2>[\w\-]+(?:\s+[\w\-]+){0,3})\s+is\s+(?:now\s+|finally\s+|all\s+)?(?:done|finished|complete|completed|live)\b",
    re.I,
)


@rule("progress")
def in_the_middle_of(sentence: Sentence) -> Iterator[Fact | Update]:
    """ "we're setting up SSO for our team" -> "Is setting up SSO for their team."; "we finished" removes it."""
    if sentence.tentative:
        return
    if match := _DONE.search(sentence.text):
        what = match.group("what") or match.group("what2")
        yield Update(
            old=what, new=None, sources=[sentence.source], any_word=True, kinds=frozenset({"progress", "goal"})
        )
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
    r"\b(?:i'?m|we'?re|i\s+am|we\s+are)\s+(?:no\s+longer|not)\s+(?:on|using|in|at|with|based\s+in|located\s+in|living\s+in|working\s+(?:in|at|from))\s+(?:the\s+)?(?P<what3>[\w\-]+(?:\s+[\w\-]+){0,2}?)(?=\s*(?:$|[,.;!?]|\s(?:and|but|any\s*more|anymore)\b))",
    re.I,
)
_NO_LONGER_ROLE = re.compile(
    r"\b(?:i'?m|i\s+am)\s+(?:no\s+longer|not)\s+(?:the|a|an)\s+(?P<role>[\w\-]+(?:\s+[\w\-]+){0,3}?)(?:\s+(?:any\s*more|anymore|here))?\s*$",
    re.I,
)
_NOT_REMOTE = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:not|no\s+longer)\s+(?:fully\s+)?(?:remote|working\s+(?:remotely|from\s+home))\b|"
    r"\b(?:i|we)\s+(?:no\s+longer|don'?t)\s+work\s+(?:remotely|from\s+home)\b",
    re.I,
)
_DROPPED = re.compile(
    r"\b(?:i|we)(?:'ve|\s+have)?\s+(?:dropped|abandoned|scrapped|shelved|cancelled|canceled|gave\s+up\s+on|given\s+up\s+on|"
    r"decided\s+against|put\s+on\s+hold|parked)\s+(?:the\s+|our\s+|that\s+|this\s+|my\s+)?(?P<what>[\w\-]+(?:\s+[\w\-]+){0,3}?)"
    r"(?:\s+(?:idea|plan|project|migration|rollout))?\s*$",
    re.I,
)


@rule("update", reads_negation=True)
def no_longer(sentence: Sentence) -> Iterator[Update]:
    """ "I no longer use WhatsApp" -> lines that mention WhatsApp are removed."""
    for match in _NO_LONGER.finditer(sentence.text):
        what = match.group("what") or match.group("what2") or match.group("what3")
        if re.search(r"\b(?:no\s+longer|any\s*more|stopped)\b", match.group(0), re.I) or re.search(
            r"\b(?:any\s*more|anymore)\b", sentence.text, re.I
        ):
            yield Update(old=_GENERIC_SUFFIX.sub("", what), new=None, sources=[sentence.source])
    if (role := _NO_LONGER_ROLE.search(sentence.text)) and (
        re.search(r"\bno\s+longer\b|\bany\s*more\b", sentence.text, re.I)
    ):
        yield Update(old=role.group("role"), new=None, sources=[sentence.source], kinds=frozenset({"role"}))
    if _NOT_REMOTE.search(sentence.text) and re.search(r"\bno\s+longer\b|\bany\s*more\b", sentence.text, re.I):
        yield Update(
            old="remotely home", new=None, sources=[sentence.source], any_word=True, kinds=frozenset({"office"})
        )
    if dropped := _DROPPED.search(sentence.text):
        yield Update(
            old=dropped.group("what"),
            new=None,
            sources=[sentence.source],
            any_word=True,
            kinds=frozenset({"goal", "progress"}),
        )


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
        if match.group("x"):
            what = match.group("x").strip()
            yield _fact(named_key("allergy", what), f"Allergic to {what}.", sentence)
        else:  # "I have a peanut allergy": "Has a peanut allergy.", not "Allergic to peanut."
            what = match.group("x2").strip().lower()
            article = "an" if what[:1] in "aeiou" else "a"
            yield _fact(named_key("allergy", what), f"Has {article} {what} allergy.", sentence)


_PET = r"(?P<pet>dog|dogs|cat|cats|puppy|kitten|pet|pets|horse|parrot|rabbit)"
PET_LINE = re.compile(rf"^Their\s+{_PET}\s", re.I)
_PET_ALLERGY = re.compile(
    rf"\b(?:my|our)\s+(?:little\s+|old\s+|new\s+)?{_PET}(?:['\u2019]s)?\s+(?:is|are|gets|'s)\s+(?:also\s+)?(?:severely\s+|very\s+|mildly\s+|really\s+)?"
    r"allergic\s+to\s+(?P<x>[\w\-]+(?:(?:\s+|\s*,\s*|\s+and\s+)[\w\-]+){0,3}?)(?=\s*(?:$|[.;!?]|,?\s(?:so|but|because|please)\b))|"
    rf"\b(?:my|our)\s+(?:little\s+|old\s+|new\s+)?(?P<pet2>dog|cat|puppy|kitten|pet|horse|parrot|rabbit)\s+has\s+(?:an?\s+)?(?P<x2>[\w\-]+)\s+allergy\b",
    re.I,
)
_DIET = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:a\s+|all\s+|both\s+|strictly\s+|strict\s+|fully\s+)?"
    r"(?P<d>vegetarian|vegan|pescatarian|gluten-free|dairy-free|lactose\s+intolerant|coeliac|celiac)\b",
    re.I,
)


@rule("allergy")
def pet_allergy(sentence: Sentence) -> Iterator[Fact]:
    """Only what the instructions open for pets: "my dog is allergic to chicken" -> "Their dog is
    allergic to chicken."; "I'm vegetarian" when the person's own diet is opened -> "Is vegetarian." """
    if "health" in (sentence.opened | sentence.pets_opened) and (match := _PET_ALLERGY.search(sentence.text)):
        if match.group("x"):
            pet, what = match.group("pet").lower(), match.group("x").strip()
            verb = "are" if pet in {"dogs", "cats", "pets"} else "is"
            yield _fact(named_key("allergy", f"{pet} {what}"), f"Their {pet} {verb} allergic to {what}.", sentence)
        else:
            pet, what = match.group("pet2").lower(), match.group("x2").strip().lower()
            article = "an" if what[:1] in "aeiou" else "a"
            yield _fact(named_key("allergy", f"{pet} {what}"), f"Their {pet} has {article} {what} allergy.", sentence)
    if "health" in sentence.opened and (match := _DIET.search(sentence.text)):
        diet = re.sub(r"\s+", " ", match.group("d")).lower()
        yield _fact("diet", f"Is {diet}.", sentence)


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
# The phrase tables (phrases/<language>.json), read by the small engine in ``tables``
# ---------------------------------------------------------------------------------------------

_SWITCHED = re.compile(
    r"\b(?:now|switched|switching|moved|migrated|migrating|changed|went|gone|back\s+to|as\s+of|instead|replaced|"
    r"ahora|cambiamos|pasamos|migramos|maintenant|pass[ée]s?|migr[ée]|jetzt|umgestiegen|gewechselt|migriert|agora|"
    r"mudamos|ab|shift|अब)\b",
    re.I,
)


_PLACES = frozenset({"office"})  # the kind of office and location lines (keys.kind_of)


def _table_place(code: str, raw: str) -> str:
    """The place as the person spelled it ("Köln", "Sevilla": a line must name what its source says);
    a place typed in another script is given its English name."""
    if re.search(r"[A-Za-z\u00C0-\u024F]", raw):
        return _place(raw)
    return english_of(code, "place_names", raw)


def _role_line(match_values: dict, text: str) -> str | None:
    code = match_values["code"]
    if template := match_values.get("line"):
        team = match_values.get("team", "").strip()
        if not team or team.lower() in STOP_WORDS or not re.fullmatch(r"[\w\- ]+", team):
            return None
        return template.replace("{team}", team.lower() if team.lower() != "it" else "IT")
    role = english_of(code, "roles", match_values["role"]).strip()
    if re.match(r"(?:big|huge|little|bit|new|long-time|loyal|real|total|complete)\b", role, re.I):
        return None
    if code == "en" and re.search(r"\bthe\s+" + re.escape(match_values["role"]), text, re.I):
        return f"Works as the {role}."
    article = "an" if role[:1].lower() in "aeiou" else "a"
    return f"Works as {article} {role}."


@rule("tables", reads_negation=True)
def from_tables(sentence: Sentence) -> Iterator[Fact | Update | Hint]:
    """What the phrase tables of the message's languages say in this clause, as lines in English: each
    kind of match is turned into lines by its own function (``_TABLE_KINDS``)."""
    for match in read_tables(sentence.text, sentence.languages):
        if sentence.hypothetical and match.kind not in NEGATIVE_KINDS:
            continue
        kind = "contact" if match.kind.startswith("contact_") else match.kind
        if lines := _TABLE_KINDS.get(kind):
            yield from lines(match.kind, match.values["code"], match.values, sentence)


TableLines = Callable[[str, str, dict, Sentence], Iterator["Fact | Update | Hint"]]


def _table_contact(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Hint]:
    channel = values.get("channel")
    word = english_of(code, "channels", channel) if channel else ""
    channel = word if word in CHANNELS.values() else (_channel(word) if word else channel)
    if channel:
        yield Hint(kind.removeprefix("contact_"), channel, sentence.source)


def _table_language(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Fact]:
    if not sentence.one_off:
        language = english_of(code, "languages", values["language"])
        yield _fact("language", f"Prefers to chat in {language[:1].upper() + language[1:]}.", sentence)


def _table_place_line(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Fact]:
    place = _table_place(code, values["place"])
    if place and place.lower() not in {"a", "an", "the"}:
        text = f"Based in {place}." if kind == "location" else f"Works from the {place} office."
        yield _fact(kind, text, sentence)


def _table_change(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Fact]:
    """Said tentatively (the only kind a tentative clause gives): said once."""
    if fact := _hedged_change(code, values, sentence):
        yield fact


def _table_moved(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Update]:
    """ "me mudé de Salamanca a Valladolid": the old place is replaced, in any language."""
    old, new = _table_place(code, values["old_place"]), _table_place(code, values["place"])
    if old:
        fallback = _fact("location", f"Based in {new}.", sentence) if new else None
        yield Update(old=old, new=new or None, sources=[sentence.source], fallback=fallback, kinds=_PLACES)


def _table_place_gone(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Update]:
    """ "ya no vivo en Madrid" """
    if place := _table_place(code, values["place"]):
        yield Update(old=place, new=None, sources=[sentence.source], kinds=_PLACES)


def _table_role(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Fact]:
    if line := _role_line(values, sentence.text):
        yield _claimed(_fact("role", line, sentence), sentence)


_SETUP = frozenset({"setup"})


def _table_tools(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Fact | Update]:
    """The tools they use, the one they left, and (said as a switch) the others of the same kind."""
    for old in integration_names(values.get("old_tool") or ""):
        yield Update(old=old, new=None, sources=[sentence.source], kinds=_SETUP)
    names = integration_names(values.get("tools") or values.get("tool") or "")
    for name in names:
        yield _fact(f"integration:{name.lower()}", f"Uses {name}.", sentence)
    if len(names) == 1 and _SWITCHED.search(sentence.text) and (what := TOOL_KINDS.get(names[0])):
        for other, other_kind in TOOL_KINDS.items():
            if other_kind == what and other != names[0] and other.lower() not in names[0].lower():
                yield Update(old=other, new=None, sources=[sentence.source], kinds=_SETUP)


def _table_tool_gone(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Update]:
    for name in integration_names(values.get("tool") or ""):
        yield Update(old=name, new=None, sources=[sentence.source], kinds=_SETUP)


def _table_style(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Fact]:
    if not sentence.one_off:
        yield _fact("style", _style_line(sentence.message or sentence.text), sentence)


def _table_plan(kind: str, code: str, values: dict, sentence: Sentence) -> Iterator[Fact]:
    raw = (values.get("plan") or values.get("plan2") or "").strip("-")
    name = english_of(code, "plan_names", raw)
    if name.lower() not in KNOWN_PLANS and (name.lower() in STOP_WORDS or not name[:1].isupper()):
        return
    if (_integration_name(raw) or _integration_name(name)) and not _said_as_plan(raw).search(sentence.text):
        return  # "we moved to Teams" names a tool, not a plan
    key = "billing" if name.lower() in {"annual", "monthly", "yearly", "quarterly"} else "plan"
    yield _fact(key, f"Is on the {plan_name(name)} plan.", sentence)


# A table match's kind (every "contact_<how>" is "contact") -> the lines it gives.
_TABLE_KINDS: dict[str, TableLines] = {
    "contact": _table_contact,
    "language": _table_language,
    "location": _table_place_line,
    "office": _table_place_line,
    "change": _table_change,
    "moved": _table_moved,
    "place_gone": _table_place_gone,
    "role": _table_role,
    "tools": _table_tools,
    "tool_gone": _table_tool_gone,
    "style": _table_style,
    "plan": _table_plan,
}


def _hedged_change(code: str, values: dict, sentence: Sentence) -> Fact | None:
    """ "quizás nos pasemos al plan Pro" -> "Might move to the Pro plan (said once, 3 Nov)." """
    if not sentence.hedged or sentence.negated:
        return None
    what = values.get("what")
    if what == "tool":
        names = integration_names(values.get("tool") or "")
        if len(names) != 1:
            return None
        text = f"Might switch to {names[0]}"
    elif what == "plan":
        name = english_of(code, "plan_names", (values.get("plan") or "").strip("-"))
        if name.lower() not in KNOWN_PLANS and (name.lower() in STOP_WORDS or not name[:1].isupper()):
            return None
        text = f"Might move to the {plan_name(name)} plan"
    elif what == "place":
        place = _table_place(code, values.get("place") or "")
        if not place:
            return None
        text = f"Might move to {place}"
    else:
        return None
    text = f"{text} (said once, {sentence.day})."
    return Fact(key=line_key(text) or named_key("change", text), text=text, sources=[sentence.source], tentative=True)


def _said_as_plan(name: str) -> re.Pattern[str]:
    """The name said as a plan: "the Teams plan", "plan Teams", "Teams-Tarif"."""
    words = r"(?:plan|plans|tier|plano|forfait|offre|abonnement|tarif|abo|प्लान)"
    escaped = re.escape(name)
    return re.compile(rf"\b{escaped}[-\s]+{words}\b|\b{words}\s+{escaped}\b", re.I)


def _style_line(message: str) -> str:
    """The whole message decides the style line: "Keep answers short... bullet points" -> both."""
    bullets = re.search(r"\bbullet(?:ed)?\s*(?:points|list)?\b", message, re.I)
    length = "detailed" if re.search(r"\b(?:detailed|longer|thorough|in-depth)\b", message, re.I) else "short"
    if bullets and re.search(r"\b(?:short|brief|concise|to\s+the\s+point)\b", message, re.I):
        return "Prefers short answers in bullet points."
    if bullets:
        return "Prefers answers in bullet points."
    return f"Prefers {length} answers."

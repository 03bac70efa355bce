"""The engine: the memory being updated, and one run read message by message and action by action."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from memory import guards as policy
from memory.guards.text import fold_word, is_said_once, without_said_once
from memory.writer.offline.clauses import split
from memory.writer.offline.keys import kind_of, kind_of_line, kinds_left_out, line_key
from memory.writer.offline.rules import NEGATION_AWARE, PET_LINE, RULES, Fact, Sentence, Update, contact_line, plan_name
from memory.writer.offline.tables import Hint, has_words, languages_in
from memory.writer.offline.vocabulary import (
    INJECTION,
    INTEGRATIONS,
    KNOWN_PLACES,
    KNOWN_PLANS,
    LANGUAGE_CODES,
    LANGUAGE_NAMES,
    PURCHASE_LABEL,
    alternation,
    day_of,
    sentence_case,
    significant,
    table,
)

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

    def __init__(
        self,
        lines: list[dict],
        *,
        opened: frozenset[str],
        left_out: frozenset[str],
        offered: dict | None = None,
        pets_opened: frozenset[str] = frozenset(),
    ) -> None:
        self.lines = [
            _Line(number=int(line["n"]), original=str(line["text"]), text=str(line["text"]))
            for line in lines
            if isinstance(line, dict) and "n" in line and "text" in line
        ]
        self.added: list[Fact] = []
        self.opened = opened
        self.pets_opened = pets_opened  # what the instructions open only for the person's pets
        self.left_out = left_out
        self.offered = offered or {}  # the run's sources by id, in the shape policy.source_refusal reads
        self._verdicts: dict[str | tuple, bool] = {}  # the guards' answers, asked once a run

    def _live(self) -> int:
        return sum(1 for line in self.lines if line.text is not None) + len(self.added)

    def left_out_kind(self, text: str, key: str | None) -> bool:
        kind = kind_of(text, key) if key else kind_of_line(text)
        return bool(kind and kind in self.left_out)

    def allows(self, text: str, key: str | None, sources: list[str] | None = None) -> bool:
        """The team's instructions keep this kind, the guards take the line, and (when it cites
        sources) what it names is in what it cites, as the writer will check after us."""
        if self.left_out_kind(text, key):
            return False
        if text not in self._verdicts:
            opened = self.opened | self.pets_opened if PET_LINE.match(text) else self.opened
            self._verdicts[text] = policy.line_refusal(text, opened=opened) is None
        if not self._verdicts[text] or sources is None:
            return self._verdicts[text]
        asked = (text, *sources)
        if asked not in self._verdicts:
            cited = [self.offered[source] for source in sources if source in self.offered]
            self._verdicts[asked] = policy.source_refusal(text, cited) is None
        return self._verdicts[asked]

    def _acceptable(self, fact: Fact) -> Fact | None:
        """The fact as a line the guards take, or ``None``: "SMS" is written "text messages" when the
        person did not type "SMS"."""
        if self.allows(fact.text, fact.key, fact.sources):
            return fact
        if "SMS" in fact.text:
            plain = fact.text.replace("to be reached by SMS", "to be reached by text message").replace("SMS", "texts")
            if self.allows(plain, fact.key, fact.sources):
                return Fact(fact.key, plain, fact.sources, fact.tentative)
        return None

    def text_of(self, key: str) -> str | None:
        """The current text of the line with this key, if there is one."""
        for line in self.lines:
            if line.text is not None and line_key(line.text) == key:
                return line.text
        return next((fact.text for fact in self.added if fact.key == key), None)

    def put(self, fact: Fact) -> None:
        """Write a fact: it replaces the line or the addition with its key, or is added. A fact the
        guards refuse, or a claimed title, takes the line it contradicts with it."""
        if self.left_out_kind(fact.text, fact.key):
            return
        if fact.claimed:  # a title claimed to get something: not kept, and the older title is not trusted
            self._drop_contradicted(fact)
            return
        accepted = self._acceptable(fact)
        if accepted is None:
            if not fact.tentative:
                self._drop_contradicted(fact)
            return
        fact = accepted
        if fact.tentative and any(text == without_said_once(fact.text) for text in self._live_texts()):
            return  # already known firmly: a new "for now" does not weaken it
        if not fact.tentative and self._confirm(fact):
            return
        if self._put_over_line(fact) or self._put_over_added(fact):
            return
        if any(line.text == fact.text for line in self.lines) or self._live() >= policy.MAX_LINES:
            return
        self.added.append(fact)

    def _put_over_line(self, fact: Fact) -> bool:
        """The existing line with the fact's key takes a firm fact; ``False`` when there is none."""
        for line in self.lines:
            if line.text is None or line_key(line.text) != fact.key:
                continue
            # Already known, or a new "maybe" (which does not weaken a firm line, and leaves a said-once
            # line and its first date standing): the line stays.
            if line.text != fact.text and not fact.tentative:
                line.text, line.sources = fact.text, list(fact.sources)
            return True
        return False

    def _put_over_added(self, fact: Fact) -> bool:
        """This run's addition with the fact's key takes it (a "maybe" never weakens a firm one);
        ``False`` when there is none."""
        for index, added in enumerate(self.added):
            if added.key != fact.key:
                continue
            if not fact.tentative:
                self.added[index] = Fact(fact.key, fact.text, _merge(added.sources, fact.sources))
            return True
        return False

    def moved_away(self, message: str, source: str, kept: list[str]) -> None:
        """A message about moving ("nos mudamos, antes vivíamos en Chamberí", "Andheri se shift ho
        gaye") that names the place of an office or location line, in any language: that line is
        replaced or gone, unless this message put it. Right or silent: the old place never stays."""
        folded = fold_word(message)
        for line in self.lines:
            if line.text is None or line_key(line.text) not in {"location", "office"} or line.text in kept:
                continue
            if source in line.sources:
                continue  # this message changed it ("moved from Pune to Mumbai")
            place = _PLACE_OF_LINE.match(line.text)
            if not place or any(place.group("place").lower() in text.lower() for text in kept):
                continue
            name = re.escape(fold_word(place.group("place")))
            if not re.search(rf"(?<!\w){name}(?!\w)", folded):
                continue
            if re.search(rf"{_still()}\s+(?:\S+\s+){{0,3}}?{name}(?!\w)", folded):
                continue  # "seguimos en Chamberí": still there
            line.text, line.sources = None, [source]

    def _live_texts(self) -> list[str]:
        return [line.text for line in self.lines if line.text is not None] + [fact.text for fact in self.added]

    def _confirm(self, fact: Fact) -> bool:
        """A firm fact that says what a said-once line said might be ("Might switch to HubSpot (said
        once, 3 Nov)." and then "we moved to HubSpot") takes that line's place: the note is dropped."""
        words = significant(fact.text)

        def confirmed(text: str) -> bool:
            core = significant(without_said_once(text)) - _HEDGE_WORDS
            return bool(core) and core <= words

        for line in self.lines:
            if line.text is not None and is_said_once(line.text) and confirmed(line.text):
                line.text, line.sources = fact.text, list(fact.sources)
                self.added = [added for added in self.added if added.key != fact.key or added.text == fact.text]
                return True
        for index, added in enumerate(self.added):
            if added.tentative and is_said_once(added.text) and confirmed(added.text):
                self.added[index] = Fact(fact.key, fact.text, _merge(added.sources, fact.sources))
                return True
        return False

    def _drop_contradicted(self, fact: Fact) -> None:
        """What was said replaces a line, but the new line may not be written (the guards refuse it, or
        it names what the cited words spell differently): the old line is contradicted, so it goes
        rather than stays. Right or silent."""
        for line in self.lines:
            if line.text is not None and line_key(line.text) == fact.key and line.text != fact.text:
                if not is_said_once(line.text) and not fact.key.startswith("action:"):
                    line.text, line.sources = None, list(fact.sources)
        self.added = [added for added in self.added if added.key != fact.key]

    def update(self, update: Update) -> None:
        needle = significant(update.old) if update.old else set()
        touched = False
        if needle:
            for line in self.lines:
                if line.text is None or not _mentions(line.text, needle, update.any_word):
                    continue
                kind = kind_of_line(line.text)
                if (kind and kind in self.left_out) or (update.kinds is not None and kind not in update.kinds):
                    continue
                if update.new is None:
                    line.text, line.sources = None, list(update.sources)
                else:
                    new_text = re.sub(rf"\b{re.escape(update.old)}\b", update.new, line.text, flags=re.I)
                    new_text = without_said_once(new_text)
                    if new_text == line.text:
                        pass
                    elif self.allows(new_text, line_key(new_text), update.sources):
                        line.text, line.sources = new_text, list(update.sources)
                    else:  # the old place or tool is gone and the new line may not be written: no stale line
                        line.text, line.sources = None, list(update.sources)
                touched = True
            self.added = [
                fact
                for fact in self.added
                if not _mentions(fact.text, needle, update.any_word)
                or (update.kinds is not None and kind_of_line(fact.text) not in update.kinds)
            ]
        if not touched and update.fallback is not None:
            self.put(update.fallback)

    def operations(self) -> list[dict]:
        operations = []
        for line in self.lines:
            op = line.op
            operations.append(
                {
                    "op": op,
                    "line": line.number,
                    "text": line.text if op == "replace" else None,
                    "sources": list(line.sources) if op != "keep" else [],
                }
            )
        for fact in self.added:
            operations.append({"op": "add", "line": None, "text": fact.text, "sources": list(fact.sources)})
        return operations


@cache
def _still() -> str:
    """ "still", "sigo", "toujours", "immer noch", "ainda", "abhi bhi": every table's words, folded."""
    words = {fold_word(word) for code in LANGUAGE_CODES for word in table(code).get("still_words") or []}
    return "(?<!\\w)" + alternation(words) + "(?!\\w)"


@cache
def _channel_words() -> tuple[re.Pattern[str], dict[str, str]]:
    """Every table's channel words, and the English channel each one names."""
    words: dict[str, str] = {}
    for code in LANGUAGE_CODES:
        words.update({word.lower(): str(english) for word, english in dict(table(code).get("channels") or {}).items()})
    pattern = re.compile(r"(?<![\w\u0900-\u097F])" + alternation(words) + r"(?![\w\u0900-\u097F])", re.I)
    return pattern, words


def _channels_named(text: str) -> set[str]:
    """The channels a message names, in any language's words, as the English channel."""
    pattern, words = _channel_words()
    return {words.get(re.sub(r"\s+", " ", match.group(0).lower()), "") for match in pattern.finditer(text)} - {""}


_PLACE_OF_LINE = re.compile(r"^(?:Based in|Lives near|Works from the) (?P<place>.+?)(?: office)?\.$")
_HEDGE_WORDS = frozenset({"might", "upgrade", "downgrade", "change", "wants", "uses", "works", "based", "lives"})


def _mentions(text: str, needle: set[str], any_word: bool) -> bool:
    words = significant(text)
    return bool(needle & words) if any_word else needle <= words


def _merge(first: list[str], second: list[str]) -> list[str]:
    return first + [source for source in second if source not in first]


# ---------------------------------------------------------------------------------------------
# Reading a run
# ---------------------------------------------------------------------------------------------

_TIME_PHRASES = re.compile(
    r"\b(?:" + "|".join(re.escape(phrase).replace(r"\ ", r"\s+") for phrase in table("en")["time_phrases"]) + r")\b",
    re.I,
)
_BUYING = re.compile(
    r"\b(?:bought|buy|buying|purchas\w*|order\w*|booked|book|booking|renew\w*|paid|pay|paying|subscrib\w*|gift\w*|enrol\w*|register\w*|"
    r"reserv\w*|for\s+(?:my|our|his|her|their)\s+\w+|on\s+behalf\s+of|present)\b",
    re.I,
)


def clause_refusal(clause: str, opened: frozenset[str]) -> str | None:
    """Why the guards keep one clause out, or ``None``: an injection marker, a secret, or an excluded
    category the team's instructions did not open (``memory.guards`` decides the last two).

    "Over the weekend" or "last week" in a clause that says a fact is a time, not small talk: the
    small-talk check is made once more without the time words.
    """
    if INJECTION.search(clause):
        return "injection"
    if policy.find_secret(clause):
        return "secret"
    category = policy.find_category(clause, opened=opened)
    if category == "small_talk":
        without_time = _TIME_PHRASES.sub(" ", clause)
        if without_time != clause:
            category = policy.find_category(without_time, opened=opened)
    return category


_GIFT = re.compile(
    r"(?<![\w\u0900-\u097F])(?:gift|gifts|present\s+for|regalo|cadeau|geschenk|presente\s+para|tohfa|तोहफ़ा|तोहफा)(?![\w\u0900-\u097F])",
    re.I,
)
_FOR_NAME = re.compile(r"\b(?:for|para|pour|für|fuer)\s+(?P<name>(?-i:[A-Z][a-z\u00e0-\u00ff]{2,}))\b", re.I)


def _for_someone_else(clause: str, opened: frozenset[str]) -> bool:
    """A clause saying what was bought, booked or ordered was for someone else (R13): it names another
    person (the guards' other-people or relationship check) with a buying word or a "for" ("para",
    "pour", "für", "ke liye"), it calls it a gift, or it is "for" someone named ("for Priya")."""
    if _GIFT.search(clause):
        return True
    if (has_words(clause, LANGUAGE_CODES, "for_someone") or _BUYING.search(clause)) and _names_someone(clause, opened):
        return True
    name = _FOR_NAME.search(clause)
    return bool(name and not _known_name(name.group("name")))


_POSSESSIVE = re.compile(r"(?<=\w)['\u2019]s\b")


def _names_someone(clause: str, opened: frozenset[str]) -> bool:
    """The guards' other-people or relationship check, asked of the clause as typed and without its
    possessives ("my little brother's account" -> "my little brother account")."""
    people = {"other_people", "relationships"}
    return clause_refusal(clause, opened) in people or clause_refusal(_POSSESSIVE.sub("", clause), opened) in people


def _known_name(word: str) -> bool:
    """A tool, plan, place or language name: "for Shopify", "for Pune", "for Pro" are not a person."""
    lowered = word.lower()
    return (
        lowered in {name.lower() for name in INTEGRATIONS}
        or lowered in KNOWN_PLANS
        or lowered in KNOWN_PLACES
        or lowered in LANGUAGE_NAMES
        or lowered in {"me", "myself", "us", "now", "today", "tomorrow", "later", "work", "home"}
    )


@dataclass
class _Read:
    clauses: list[Sentence]
    someone_else_bought: bool  # a clause about buying or booking for someone else (R13)


def read_message(message: dict, opened: frozenset[str], pets_opened: frozenset[str] = frozenset()) -> _Read:
    """The message's clauses, each to be held against the guards on its own (``clause_refusal``) before
    anything read from it is used: a refused clause is skipped alone."""
    text = str(message.get("text") or "")
    codes = languages_in(text)
    kept = []
    someone_else_bought = False
    mentions_other = buying = False
    for part in split(text, codes):
        if _for_someone_else(part, opened):
            someone_else_bought = True
        buying = buying or bool(_BUYING.search(part)) or has_words(part, LANGUAGE_CODES, "for_someone")
        mentions_other = mentions_other or _names_someone(part, opened)
        kept.append(
            Sentence(
                text=part,
                source=str(message.get("id")),
                day=day_of(message),
                opened=opened,
                message=text,
                languages=codes,
                pets_opened=pets_opened,
            )
        )
    # "My brother plays every day. Buy him 500 gems" / "buy 500 gems": another person and a purchase
    # in one message is enough; right or silent.
    return _Read(kept, someone_else_bought or (mentions_other and buying))


def _action_facts(action: dict, *, someone_else: bool) -> list[Fact | Update]:
    """A succeeded action gives "<label> on <day>." (R9); failed ones give nothing.

    A label that is only the action's name made readable ("Renew plan", what the writer passes for an
    action the agent does not declare a label for) is put in the past ("Renewed the plan"); a name
    whose verb is not known gives no line rather than an order ("Frobnicate widget on 1 Dec.").
    """
    if str(action.get("status", "")).lower() != "succeeded":
        return []
    name = str(action.get("name") or "")
    label = str(action.get("label") or "").strip().rstrip(".")
    if not label or label.lower() == name.replace("_", " ").strip().lower():
        label = _label_from_name(name)
    if not label:
        return []
    if someone_else and PURCHASE_LABEL.search(label):
        return []
    label = _label_without_address(label)
    if not label:
        return []
    source = [str(action.get("id"))]
    day = day_of(action)
    text = f"{label} on {day}." if day else f"{label}."
    facts: list[Fact | Update] = [
        Fact(key=line_key(text) or f"action:{label.lower()}", text=sentence_case(text), sources=source)
    ]
    if match := re.search(
        r"\b(?:upgraded|downgraded|switched|moved|changed)\s+to\s+(?:the\s+)?([\w\-]+)\s+plan\b", label, re.I
    ):
        facts.append(Fact(key="plan", text=f"Is on the {plan_name(match.group(1))} plan.", sources=source))
    return facts


# "at 90 Kingsway": a number and then a name, after "at" or "to", is where someone lives or goes, not
# a time ("at 7pm", "at 19:30") or a count ("for 4 people").
_HOUSE_NUMBER = re.compile(r"\d{1,5}[A-Za-z]?,?\s+(?-i:[A-Z\u00C0-\u00DE])[\w\-]+", re.I)
_LABEL_TAIL = re.compile(r",\s*|\s+(?:at|to|in|on|near|from|for|via|@)\s+", re.I)


def _label_without_address(label: str) -> str:
    """The label without the part of it that is an address ("Booked a viewing at 14 Elm Road" ->
    "Booked a viewing"), as the guards see it: ``policy.find_secret`` is asked about each tail after
    "at", "to", "in" ... said as an address. Nothing is left when the first words themselves are
    what the guards refuse."""
    for match in _LABEL_TAIL.finditer(label):
        tail = label[match.end() :].strip()
        if tail and (policy.find_secret(f"Address: {tail}") or _HOUSE_NUMBER.match(tail)):
            label = label[: match.start()].strip(" ,")
            break
    return "" if policy.find_secret(label) else label


_PAST = {
    "renew": "Renewed",
    "buy": "Bought",
    "purchase": "Purchased",
    "book": "Booked",
    "cancel": "Cancelled",
    "upgrade": "Upgraded",
    "downgrade": "Downgraded",
    "order": "Ordered",
    "subscribe": "Subscribed to",
    "pay": "Paid",
    "refund": "Refunded",
    "schedule": "Scheduled",
    "reschedule": "Rescheduled",
    "change": "Changed",
    "update": "Updated",
    "add": "Added",
    "remove": "Removed",
    "create": "Created",
    "reset": "Reset",
    "switch": "Switched",
    "enable": "Enabled",
    "disable": "Disabled",
    "reserve": "Reserved",
}


def _label_from_name(name: str) -> str:
    words = [word for word in re.split(r"[_\-\s]+", name.strip()) if word]
    if not words:
        return ""
    verb = _PAST.get(words[0].lower())
    if verb is None:
        return ""
    rest = " ".join(words[1:])
    return f"{verb} the {rest}" if rest else verb


def _confirms_said_once(memory: _Memory, fact: Fact) -> bool:
    """An action that does what a said-once line said might happen replaces that line."""
    words = significant(fact.text)
    for line in memory.lines:
        if line.text and is_said_once(line.text):
            target = significant(line.text) - {"might", "plans"}
            if target and target <= words | {"move", "switch"}:
                line.text, line.sources = fact.text, list(fact.sources)
                return True
    return False


_FOR_THE_MOMENT_KEYS = re.compile(r"^(?:integration:|plan$|billing$|office$|location$|app$|os$|device$)")


def _for_the_moment(fact: Fact, sentence: Sentence) -> Fact:
    """ "por ahora usamos Shopify" -> "Uses Shopify (said once, 3 Nov)."; a confirmation drops the note."""
    if fact.tentative or not _FOR_THE_MOMENT_KEYS.match(fact.key):
        return fact
    text = f"{fact.text.rstrip('.')} (said once, {sentence.day})."
    return Fact(line_key(text) or fact.key, text, list(fact.sources), tentative=True)


# Times of day and of the week only ("before 9", "after 6pm", "at night", "on weekends", "during work
# hours"): "at work" or "on Mondays" is left unsaid.
_WHEN = re.compile(
    r"\b(?:before|after|until|till|during|between|at\s+night|(?:on|at)\s+(?:the\s+)?weekends?|"
    r"in\s+the\s+(?:mornings?|evenings?)|(?:early|late)\s+(?:in\s+the\s+)?(?:mornings?|evenings?)|at\s+lunch(?:time)?)\b",
    re.I,
)
_WHEN_END = re.compile(
    r"\s*(?:[,;:(]|\b(?:please|pls|plz|thanks|thank\s+you|because|since|as|cause|cuz|so|but|if|when|while)\b).*$", re.I
)
_REFUSED_CHANNEL = {"phone": "phone calls", "SMS": "texts", "email": "emails", "WhatsApp": "WhatsApp messages"}


def _clock_in_english(sentence: Sentence) -> str:
    """ "antes de las 10", "nach 20 Uhr", "9 baje se pehle" -> "before 10", "after 20", "before 9": a clock
    time with a before or after word of the clause's language, the number as typed; "" otherwise."""
    found = set()
    text = sentence.text if sentence.says_when else sentence.message  # "não me ligue depois das 20h"
    for code in sentence.languages[1:]:
        for key, english in (("time_before", "before"), ("time_after", "after")):
            words = table(code).get(key) or []
            if not words:
                continue
            pattern = alternation(words)
            for match in re.finditer(
                rf"(?<![\w\u0900-\u097F]){pattern}\s+(?P<n>\d{{1,2}}(?:[:.h]\d{{2}}|h)?)(?![\w])|\b(?P<m>\d{{1,2}})\s*(?:baje|बजे)\s+{pattern}",
                text,
                re.I,
            ):
                found.add(f"{english} {match.group('n') or match.group('m')}")
    return found.pop() if len(found) == 1 else ""


def _refused_when(sentence: Sentence, hint: Hint) -> Fact | None:
    """ "no calls before 9 please" -> "No phone calls before 9."; "call me after 6pm" -> "Prefers phone
    calls after 6pm." (English only: the time is copied as typed)."""
    channel = _REFUSED_CHANNEL.get(hint.channel)
    if not channel:
        return None
    if sentence.languages != ("en",):
        phrase = _clock_in_english(sentence)
    else:
        text = sentence.text if sentence.says_when else sentence.message
        match = _WHEN.search(text)
        phrase = re.sub(r"\s+", " ", _WHEN_END.sub("", text[match.start() :])).strip(" .!?") if match else ""
    if not phrase or len(phrase.split()) > 6 or re.search(r"\b(?:i|me|my|we|us|our|you|your)\b", phrase, re.I):
        return None
    text = f"No {channel} {phrase}." if hint.how == "avoid" else f"Prefers {channel} {phrase}."
    return Fact("contact_time", text, [hint.source])


_REPLACED_KEYS = frozenset({"location", "office", "role", "plan", "billing", "language"})


def _contradicted_only(memory: _Memory, results: list) -> None:
    """A clause the guards keep out ("Mudei pra Vila Mariana": a place that reads as a name) may still
    say that a line is no longer true: the line it contradicts goes, and nothing from the clause is
    written. Right or silent."""
    for result in results:
        if isinstance(result, Fact) and not result.tentative and result.key in _REPLACED_KEYS:
            memory._drop_contradicted(result)
        elif isinstance(result, Update) and result.new is None:
            memory.update(Update(result.old, None, result.sources, None, result.any_word, result.kinds))


def _opened_for_the_person(instructions: str) -> frozenset[str]:
    """The categories the team's instructions open for what the person says about themselves.

    ``policy.categories_opened_by`` says which categories a sentence of the instructions opens; an
    opening that names only a pet ("remember their dog's allergies") opens the pet's, never the
    person's own health: the engine keeps those categories closed for the person."""
    opened = policy.categories_opened_by(instructions)
    if not opened:
        return opened
    by_pets: set[str] = set()
    for_them: set[str] = set()
    for sentence in re.split(r"(?<=[.!?;\n])\s*", instructions or ""):
        found = policy.categories_opened_by(sentence)
        (by_pets if has_words(sentence, LANGUAGE_CODES, "pets") else for_them).update(found)
    return frozenset(opened - (by_pets - for_them))


def _memory_of(payload: dict) -> _Memory:
    """The memory the payload sends, with what the team's instructions open and leave out, and the
    run's sources by id."""
    instructions = payload.get("instructions") or {}
    team = str(instructions.get("team") or "") if isinstance(instructions, dict) else str(instructions)
    opened = _opened_for_the_person(team)
    return _Memory(
        list(payload.get("lines") or []),
        opened=opened,
        pets_opened=policy.categories_opened_by(team) - opened,
        left_out=kinds_left_out(team),
        offered=policy.sources_from_payload(
            {
                "messages": [m for m in payload.get("messages") or [] if isinstance(m, dict) and "id" in m],
                "actions": [a for a in payload.get("actions") or [] if isinstance(a, dict) and "id" in a],
            }
        ),
    )


@dataclass
class _Said:
    """What one message gave, used once all its clauses are read."""

    hints: list[Hint] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the lines this message put
    restricted: list[Fact] = field(default_factory=list)  # "no calls before 9": the refusal with its time


def _wanted_hints(hints: list[Hint], text: str) -> list[Hint]:
    """A message's contact hints, or none when it only refuses channels and its words say it may mean
    something else. These words are looked for in every language's table: they only ever keep
    something out."""
    if not hints or any(hint.how != "avoid" for hint in hints):
        return hints
    if has_words(text, LANGUAGE_CODES, "contrast"):
        return []  # "rather than email", and what they want was not read: no refusal either
    avoided = {hint.channel.lower() for hint in hints}
    if any(channel.lower() not in avoided for channel in _channels_named(text)):
        return []  # "pls txt me dont email": another channel is named, and not read as wanted
    return hints


@dataclass
class _Run:
    """One run read event by event: the memory it changes, and what it carries from one event to the next."""

    memory: _Memory
    someone_else: bool  # a message of the run bought or booked for someone else (R13)
    contact_before: str | None  # the contact line as the run found it
    refusals: dict[str, str | None] = field(default_factory=dict)  # the guards' answer per clause, asked once a run
    hints: list[Hint] = field(default_factory=list)  # contact hints of the whole run, merged into one line at the end
    contact_at: int = 0  # where a new contact line goes: where it was first said

    def action(self, item: dict) -> None:
        memory = self.memory
        for fact in _action_facts(item, someone_else=self.someone_else):
            if isinstance(fact, Fact) and fact.key.startswith("action:") and _confirms_said_once(memory, fact):
                continue
            if (
                isinstance(fact, Fact)
                and fact.key == "plan"
                and not any(line.text and line_key(line.text) == "plan" for line in memory.lines)
            ):
                continue  # the dated action line says it; a plan line only replaces an older one
            memory.put(fact) if isinstance(fact, Fact) else memory.update(fact)

    def message(self, item: dict, clauses: list[Sentence]) -> None:
        # A message that says when ("no calls before 9") restricts a channel: no channel is refused in
        # it, and nothing is read from the clause that says when. A message that names a device ("the
        # tablet app, not the phone") may mean the phone as a device: it says nothing about phone calls.
        when = any(sentence.says_when for sentence in clauses)
        device = any(sentence.names_device for sentence in clauses)
        said = _Said()
        for sentence in clauses:
            self._clause(sentence, said, when=when, device=device)
        text = str(item.get("text") or "")
        hints = _wanted_hints(said.hints, text)
        if len({fact.text for fact in said.restricted}) == 1:  # two different times in one message: nothing
            self.memory.put(said.restricted[0])
        if has_words(text, LANGUAGE_CODES, "moving_words"):
            self.memory.moved_away(text, str(item.get("id")), said.kept)
        if hints:
            if not self.hints:
                self.contact_at = len(self.memory.added)
            self.hints.extend(hints)

    def _clause(self, sentence: Sentence, said: _Said, *, when: bool, device: bool) -> None:
        memory = self.memory
        unsure = sentence.negated or sentence.hypothetical  # only the rules that read such clauses
        results = [
            result
            for kind_name, read in RULES
            if kind_name not in memory.left_out and (not unsure or read.__name__ in NEGATION_AWARE)
            for result in read(sentence)
        ]
        # The guards see every clause a rule read something from (a clause nothing is read from
        # changes nothing, so it is not held against them): one refused clause is skipped alone.
        if not results:
            return
        if refusal := self._refusal(sentence):
            if refusal != "injection":
                _contradicted_only(memory, results)
            return
        for result in results:
            if isinstance(result, Hint):
                restricting = sentence.says_when or (when and result.how == "avoid")
                if not (restricting or (device and result.channel == "phone")):
                    said.hints.append(result)
                elif restricting and not device and (fact := _refused_when(sentence, result)):
                    said.restricted.append(fact)
            elif isinstance(result, Fact):
                memory.put(_for_the_moment(result, sentence) if sentence.temporary else result)
                said.kept.append(result.text)
            else:
                memory.update(result)

    def _refusal(self, sentence: Sentence) -> str | None:
        if sentence.text not in self.refusals:  # asked once a run
            opened, pets_opened = self.memory.opened, self.memory.pets_opened
            about_a_pet = pets_opened and has_words(sentence.text, LANGUAGE_CODES, "pets")
            self.refusals[sentence.text] = clause_refusal(
                sentence.text, opened | pets_opened if about_a_pet else opened
            )
        return self.refusals[sentence.text]

    def finish(self) -> None:
        """The run's contact hints as one line, placed where the first of them was said."""
        memory = self.memory
        if self.hints and "contact" not in memory.left_out and (fact := contact_line(self.hints, self.contact_before)):
            memory.put(fact)
            if memory.added and memory.added[-1].key == "contact":
                memory.added.insert(min(self.contact_at, len(memory.added) - 1), memory.added.pop())


def memory_operations(payload: dict) -> dict:
    """Read one run's payload and return ``{"operations": [...]}`` matching ``OUTPUT_SCHEMA``.

    Guarantees: one operation per existing line (``keep``, ``replace`` or ``remove``) and only for
    line numbers that exist; ``add`` and ``replace`` always cite message or action ids; in ``review``
    mode nothing is added and lines the guards now refuse, or the team's instructions leave out, are
    removed; no line is proposed that ``policy.line_refusal`` refuses (with the categories the team's
    instructions open); the memory never grows past ``policy.MAX_LINES``.
    """
    memory = _memory_of(payload)
    if payload.get("mode") == "review":
        for line in memory.lines:
            if not memory.allows(line.text or "", line_key(line.text or "")):
                line.text = None
        return {"operations": memory.operations()}

    messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
    actions = [a for a in payload.get("actions") or [] if isinstance(a, dict)]
    reads = {id(message): read_message(message, memory.opened, memory.pets_opened) for message in messages}
    run = _Run(
        memory,
        someone_else=any(read.someone_else_bought for read in reads.values()),
        contact_before=memory.text_of("contact"),
    )
    events = sorted(
        [("message", m) for m in messages] + [("action", a) for a in actions],
        key=lambda event: str(event[1].get("at") or ""),
    )
    for kind, item in events:
        if kind == "action":
            run.action(item)
        else:
            run.message(item, reads[id(item)].clauses)
    run.finish()
    return {"operations": memory.operations()}

"""Structural checks a model cannot argue with (R12): what a line may say, given what it cites.

The writer hands each added or replaced line with the sources it cites, as the model was shown them:
``{"kind": "message", "text": ..., "day": "3 Nov"}`` for what the person typed and
``{"kind": "action", "name": ..., "label": ..., "status": ..., "day": ...}`` for an action that ran.

* A line citing an action must cite one that succeeded; an action line ("Renewed the plan on 3 Nov.") must
  cite it and carry its date, or carry the date the person typed for it in a message it cites ("paid
  INV-2025-00418 on 30 oct" -> "Paid invoice INV-2025-00418 on 30 Oct."; the months of ``months.toml``):
  otherwise ``"failed_action"``. A request ("please cancel my add-on") says no date, so it never becomes a
  dated action.
* A line's specific entities (numbers, e-mail addresses, phone numbers, proper names; not acronyms) must appear in the
  typed text or the action it cites: otherwise ``"not_in_source"``. So nothing is copied into a line from
  a tool result, a file, a web page or the agent's own reply, which the writer never cites. Lines are
  written in English: a name the person wrote in another language or script counts as said in its
  English form ("español" -> Spanish, "पुणे" -> Pune, "zap" -> WhatsApp), from the phrase tables the
  offline writer reads (memory/writer/offline/phrases/*.json: languages, places, plans, channels).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from datetime import date, datetime, timedelta
from pathlib import Path

from memory.guards.text import fold_word, view
from memory.guards.vocabulary import month_patterns, relative_days

_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[A-Za-z\u00c0-\u024f][\w'\-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\(\s*)$")
_ACTION_VERB = re.compile(
    r"^(?i:renewed|bought|purchased|ordered|cancel+ed|booked|upgraded|downgraded|paid|subscribed|unsubscribed|"
    r"refunded|returned|reset|changed|updated|activated|deactivated|registered|signed\s+up|scheduled|rescheduled|"
    r"reserved|requested|exchanged|transferred|topped\s+up|recharged|redeemed)\b"
)
_DAY = re.compile(r"\b\d{1,2}\s+[A-Z][a-z]{2}\b")
_ACRONYM = re.compile(r"[A-Z0-9]{2,5}s?")
# Words that may be capitalised in a line without being a name someone typed: the writer's own words.
_ORDINARY_CAPITALISED = frozenset(
    "I Mon Tue Wed Thu Fri Sat Sun Monday Tuesday Wednesday Thursday Friday Saturday Sunday Jan Feb Mar Apr May "
    "Jun Jul Aug Sep Sept Oct Nov Dec January February March April June July August September October November "
    "December AM PM OK Nr No Nro Ref Tel Rp Rs".split()
)


# A German common noun by its suffix (-ung, -heit, -keit, -schaft, -tät), long enough not to be a surname (Jung).
_GERMAN_NOUN = re.compile(r"[A-ZÄÖÜ][a-zäöüß]{4,}(?:ung|heit|keit|schaft|tät)(?:en)?")

# The offline writer's tables, read as data (the guards import nothing above them).
PHRASE_TABLES = Path(__file__).resolve().parents[1] / "writer" / "offline" / "phrases"
_TRANSLATED = ("languages", "place_names", "plan_names", "channels")


@functools.cache
def _english_names() -> tuple[tuple[str, str], ...]:
    """(a name as written in another language, lower case; its English form, lower case)."""
    pairs = set()
    for path in sorted(PHRASE_TABLES.glob("*.json")):
        table = json.loads(path.read_text(encoding="utf-8"))
        for key in _TRANSLATED:
            for local, english in dict(table.get(key) or {}).items():
                local, english = local.casefold().strip(), english.casefold().strip()
                if len(local) >= 3 and local != english:
                    pairs.add((local, english))
    return tuple(sorted(pairs))


# Cyrillic and Greek letters in Latin ones: a name the person wrote in their script ("телеграм", "Βόλβο") is said
# in a line that writes it in Latin letters ("Telegram", "Volvo").
_TO_LATIN = str.maketrans(
    {
        **dict(zip("абвгдезийклмнопрстуфхцыэ", "abvgdeziiklmnoprstufhcye", strict=True)),
        "ё": "e",
        "ж": "zh",
        "ч": "ch",
        "ш": "sh",
        "щ": "sch",
        "ю": "yu",
        "я": "ya",
        "ъ": "",
        "ь": "",
        "і": "i",
        "ї": "i",
        "є": "e",
        "ґ": "g",
        **dict(zip("αβγδεζηικλμνξοπρστυφχω", "avgdeziiklmnxoprstyfho", strict=True)),
        "θ": "th",
        "ψ": "ps",
        "ς": "s",
        "ά": "a",
        "έ": "e",
        "ή": "i",
        "ί": "i",
        "ό": "o",
        "ύ": "y",
        "ώ": "o",
    }
)
_NON_LATIN_LETTER = re.compile(r"[\u0370-\u03ff\u0400-\u04ff]")


def with_english_names(said_lower: str) -> str:
    """The text as said, plus the English form of every name it holds in another language. A name
    of two or more words or in another script is matched as written; a one-word Latin-script name
    only as a whole word (so "zap" is not found inside "zapato")."""
    found = []
    for local, english, whole_word in _name_matchers():
        if local not in said_lower:  # most names are not there: a substring test says so cheaply
            continue
        if whole_word is None or whole_word.search(said_lower):
            found.append(english)
    if _NON_LATIN_LETTER.search(said_lower):
        found.append(said_lower.translate(_TO_LATIN))
    return said_lower + (" " + " ".join(found) if found else "")


@functools.cache
def _name_matchers() -> tuple[tuple[str, str, re.Pattern | None], ...]:
    """Each translated name with its whole-word pattern (one-word Latin-script names only)."""
    return tuple(
        (
            local,
            english,
            re.compile(rf"(?<![\w]){re.escape(local)}(?![\w])") if local.isascii() and " " not in local else None,
        )
        for local, english in _english_names()
    )


def _days(sources: list[dict]) -> list[str]:
    return [str(s.get("day") or "") for s in sources if s.get("day")]


# A short note in brackets that ends in a date: the writer's "(said once, 4 Nov)" in any language
# ("(只说过一次，11月5日)", "(powiedział raz, 5 lis)"): when it was said, not a fact to find in the sources.
_DATED_NOTE = re.compile(
    r"[(\uff08](?:[^\W\d_]+[\s,\uff0c\u3001]*){0,3}(?:\d{1,2}\.?\s*[^\W\d_]{3,12}\.?|[^\W\d_]{3,12}\.?\s*\d{1,2}|"
    r"\d{1,2}\s*\u6708\s*\d{1,2}\s*[\u65e5\u53f7]?)\s*[)\uff09]"
)


def _without_days(line: str, days: list[str]) -> str:
    for day in days:
        line = line.replace(day, " ")
    line = _DATED_NOTE.sub(" ", line)
    return re.sub(r"\(said once,?\s*\)", " ", line)


def _action_refusal(line: str, sources: list[dict]) -> str | None:
    """``"failed_action"`` when the line cites an action that did not succeed, or reads like a dated action
    without the date of one it cites."""
    actions = [s for s in sources if s.get("kind") == "action"]
    action_line = bool(_ACTION_VERB.search(line))
    if actions:
        if any(a.get("status") != "succeeded" for a in actions):
            return "failed_action"
        if action_line and not any(a.get("day") and a["day"] in line for a in actions):
            return "failed_action"
    elif action_line and _DAY.search(line) and not _dates_typed(line, sources):
        return "failed_action"  # reads like a dated action, cites none, and its date is not one the person typed
    return None


@functools.cache
def _months() -> dict[int, re.Pattern]:
    """Each month's words as a pattern over folded text; a word may take a suffix ("kasımda", "listopada")."""
    return {number: re.compile(f"(?:{words})[\\w']*") for number, words in month_patterns().items()}


def _month_of(word: str) -> int | None:
    folded = fold_word(word)
    return next((n for n, pattern in _months().items() if pattern.fullmatch(folded)), None)


def _day_typed(day: int, month: int, typed: str) -> bool:
    """Whether the folded text says that day: "30 oct", "30th of october", "30. Oktober", "oct 30", "30/10"."""
    words = _months()[month].pattern
    d = rf"0?{day}(?:st|nd|rd|th|er|e|\.)?"
    return bool(
        re.search(rf"(?<!\d)0?{month}\s*[\u6708\uc6d4]\s*0?{day}\s*[\u65e5\u53f7\uc77c]", typed)  # 11月2日, 11월 2일
        or re.search(rf"(?<!\d){d}\s*(?:of\s+|de\s+|di\s+|-)?(?<![\w])(?:{words})", typed)
        or re.search(rf"(?<![\w])(?:{words})\.?\s+{d}(?!\d)", typed)
        or re.search(rf"(?<![\d./]){day:0>1}[./]0?{month}(?![\d])|(?<![\d./])0{day}[./]0?{month}(?![\d])", typed)
    )


@functools.cache
def _relative_day_words() -> tuple[tuple[int, re.Pattern], ...]:
    return tuple((days, re.compile(pattern)) for days, pattern in relative_days().items())


def _source_date(source: dict) -> date | None:
    try:
        return datetime.fromisoformat(str(source.get("at") or "")).date()
    except ValueError:
        return None


def _relative_dates(sources: list[dict]) -> set[date]:
    """The days a cited message names relative to its own ("renewed it today", "changed it yesterday")."""
    found = set()
    for source in sources:
        said_on = _source_date(source) if source.get("kind") != "action" else None
        if said_on is None:
            continue
        folded = view(str(source.get("text") or "")).folded
        found |= {said_on - timedelta(days=days) for days, words in _relative_day_words() if words.search(folded)}
    return found


def _dates_typed(line: str, sources: list[dict]) -> bool:
    """Every date the line states ("on 30 Oct") is one the person typed in a message the line cites."""
    typed = " \n ".join(view(str(s.get("text") or "")).folded for s in sources if s.get("kind") != "action")
    if not typed:
        return False
    # a chat's day is "3 Nov", or "3 Nov 2025" in another year (memory.writer.dates.short_date)
    days = [str(s.get("day") or "").split() for s in sources if s.get("kind") != "action"]
    chat_months = {_month_of(day[1]) for day in days if len(day) >= 2}
    relative = {(d.day, d.month) for d in _relative_dates(sources)}
    for match in _DAY.finditer(line):
        number, word = match.group(0).split()
        month = _month_of(word)
        if month is None:
            return False
        if (int(number), month) in relative:
            continue  # "renewed it today" written with the day
        # "on the 2nd" in a chat of that month says the day; the month is the chat's
        day_only = month in chat_months and re.search(rf"(?<![\d/.]){int(number)}(?:st|nd|rd|th)\b", typed)
        if not (_day_typed(int(number), month, typed) or day_only):
            return False
    return True


def _source_years(sources: list[dict]) -> set[str]:
    """The years of the days the cited sources were said or ran ("at", or a day of another year)."""
    years = {str(s.get("at") or "")[:4] for s in sources}
    years |= {day[-1] for s in sources if len(day := str(s.get("day") or "").split()) == 3}
    return {year for year in years if year.isdigit() and len(year) == 4}


_NUMERIC_DAY_BEFORE = re.compile(r"\d{1,2}\s?[./-]\s?\d{1,2}\s?[./-]\s?$")
_YEAR_FIRST_AFTER = re.compile(r"\s*[\u5e74\ub144]|[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)")
_WORD_BEFORE = re.compile(r"([^\W\d_][\w\u0900-\u097f]*)[\s,.'\u060c]*(?:(?:de|del|of)\s+)?$")


def _without_source_years(line: str, sources: list[dict]) -> str:
    """The line without the year of a date it states when that is the year the cited sources were said in
    ("Changed the password on 1 Nov 2026", "am 1.11.2026", "2026年11月1日"): the writer knows the chat's
    year, so it is not a detail the person had to type."""
    years = _source_years(sources)
    if not years:
        return line
    for match in reversed(list(re.finditer(rf"(?<!\d)(?:{'|'.join(years)})(?!\d)", line))):
        before = line[: match.start()]
        word = _WORD_BEFORE.search(before[-40:])
        if (
            _NUMERIC_DAY_BEFORE.search(before)
            or _YEAR_FIRST_AFTER.match(line, match.end())
            or (word and _month_of(word.group(1)) is not None)
        ):
            line = before + " " + line[match.end() :]
    return line


# A German article, possessive or "per" before a capitalised word: a common noun ("den Flug", "ihres Teams",
# "per E-Mail"), which German writes capitalised, not a name.
_GERMAN_DETERMINER = re.compile(
    r"(?<![\w])(?:der|die|das|den|dem|des|ein|eine|einen|einem|einer|eines|kein|keine|keinen|mein|meine|meinen|"
    r"meinem|meiner|meines|ihr|ihre|ihren|ihrem|ihrer|ihres|sein|seine|seinen|seinem|seiner|seines|unser|unsere|"
    r"unseren|unserem|per)\s+$"
)


def _without_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def _word_said(word: str, said_lower: str) -> bool:
    """Whether the sources hold the word: as written, each part of a hyphenated word ("E-Mail" for "mail"), or
    its stem, the word less an inflection's last letters ("Warszawie" for "Warszawy", "Teams" for "team")."""
    folded = word.casefold()
    if folded in said_lower or _without_accents(folded) in said_lower:
        return True  # "PSČ" and "práce" for a person who typed "psc" and "prace"
    parts = [part for part in folded.split("-") if len(part) >= 2]
    if len(parts) > 1 and all(part in said_lower for part in parts):
        return True
    stem = folded[: max(4, len(folded) - 2)]
    if len(folded) >= 5 and re.search(rf"(?<!\w){re.escape(stem)}", said_lower):
        return True
    return _compound_said(folded, said_lower)


def _compound_said(folded: str, said_lower: str) -> bool:
    """A compound of said words ("Stromvertrag" for "Vertragsnummer für den Strom"): each part of four letters
    or more starts a word the sources hold; or a said word of five letters or more, with a word before it that
    says what kind ("Stromzähler" for "Zähler")."""
    for cut in range(3, len(folded) - 4):
        if re.search(rf"(?<!\w){re.escape(folded[cut:])}(?!\w)", said_lower):
            return True
    for cut in range(4, len(folded) - 3):
        head, tail = folded[:cut], folded[cut:]
        if re.search(rf"(?<!\w){re.escape(head)}", said_lower) and re.search(
            rf"(?<!\w){re.escape(tail.removeprefix('s') if len(tail) > 5 else tail)}", said_lower
        ):
            return True
    return False


# An amount said with a word for its thousands ("100 ribu", "2 mil", "45k", "3 lakh"): the number a line writes.
_AMOUNT_WORD = re.compile(
    r"(?<![\d.,])(\d{1,3}(?:[.,]\d{1,2})?)\s?(k|mil|ribu|rb|thousand|grand|hazaar|hazar|tausend|mille|lakh|lac|juta|crore)\b"
)
_AMOUNT_FACTOR = {"lakh": 100_000, "lac": 100_000, "juta": 1_000_000, "crore": 10_000_000}


def _amounts(folded: str) -> str:
    numbers = []
    for match in _AMOUNT_WORD.finditer(folded):
        value = float(match.group(1).replace(",", "."))
        numbers.append(str(round(value * _AMOUNT_FACTOR.get(match.group(2), 1000))))
    return " ".join(numbers)


# A word the person abbreviated ("seriennr", "kundennr", "tel"): its full form is said too.
_ABBREVIATIONS = {"nr": "nummer", "tel": "telefon"}
_ABBREVIATED = re.compile(r"(?<=\w)nr\b|\bnr\b|\btel\b")


def _names_not_said(rest: str, said_lower: str) -> bool:
    """A capitalised word (a name) the sources do not hold; acronyms and sentence starts aside."""
    for match in _WORD.finditer(rest):
        word = match.group(0).strip("'-").split("'")[0]  # a suffix after an apostrophe: Turkish "Kasım'da"
        word = word.rstrip("0123456789") or word  # a currency's letters before an amount ("Rp100")
        if len(word) < 2 or not word[0].isupper() or word in _ORDINARY_CAPITALISED or _ACRONYM.fullmatch(word):
            continue  # an acronym (SMS, SSO, API) is how the writer says a thing, not a name
        if _GERMAN_NOUN.fullmatch(word) or _GERMAN_DETERMINER.search(rest, max(0, match.start() - 12), match.start()):
            continue  # a German noun is written capitalised ("Lieferung" for "liefern"): a word, not a name
        if _month_of(word) is not None:
            continue  # a month's name in any language ("2 Kasım")
        if _SENTENCE_START.search(rest[: match.start()]):
            continue
        if not _word_said(word, said_lower):
            return True
    return False


# A month said in words, with a day of one said as an ordinal word before it ("il primo novembre"): the
# numbers a line may write it with ("1 nov", "1. 11.").
_ORDINAL_ONE = r"(?:primo|primero|primer|premier|primeiro|erste[nrm]?|pierwszy|pierwszego|first)\s+(?:(?:de|di|of)\s+)?"


@functools.cache
def _month_words() -> re.Pattern:
    alternatives = "|".join(f"(?P<m{number}>{pattern.pattern})" for number, pattern in _months().items())
    return re.compile(rf"(?<![\w])(?P<one>{_ORDINAL_ONE})?(?:{alternatives})(?![\w])")


def _month_numbers(folded: str) -> str:
    """The numbers of the months the text says in words, and a 1 for a first of the month said as a word."""
    numbers = []
    for match in _month_words().finditer(folded):
        numbers.append(str(match.lastgroup or "m")[1:])
        if match.group("one"):
            numbers.append("1")
    return " ".join(numbers)


def source_refusal(line: str, sources: list[dict]) -> str | None:
    """``"failed_action"``, ``"not_in_source"`` or ``None`` for a line and the sources it cites."""
    refused = _action_refusal(line, sources)
    if refused:
        return refused
    said = " \n ".join(" ".join(str(s.get(key) or "") for key in ("text", "label", "name", "day")) for s in sources)
    said_view = view(said)
    said_lower = with_english_names(said_view.plain.casefold() + " " + said.casefold())
    said_lower += " " + _ABBREVIATED.sub(lambda m: _ABBREVIATIONS[m.group(0)], said_lower)
    rest = _without_days(_without_source_years(line, sources), _days(sources))
    if any(email.casefold() not in said_lower for email in _EMAIL.findall(rest)):
        return "not_in_source"
    rest = _EMAIL.sub(" ", rest)
    said_digits = said_view.digits

    def unsaid(numbers: list[str]) -> bool:
        return any(number not in said_digits and number not in said for number in numbers)

    # The line's numbers read joined ("4242 4242 ..." is one) and, failing that, one by one: a date after
    # an order number ("TY-88214503 3 Kasım'da") joins them in the digits view only.
    if unsaid(_NUMBER.findall(view(rest).digits)) and unsaid(_NUMBER.findall(view(rest).surface)):
        # a date the person said with the month in words, written with its number ("1. listopadu" as "1. 11."),
        # or as a day relative to the chat's ("yesterday" as "2 Nov")
        relative = " ".join(f"{d.day} {d.month} {d.day:02} {d.month:02}" for d in _relative_dates(sources))
        said = f"{said} {_month_numbers(said_view.folded)} {relative} {_amounts(said_view.folded)}"
        if unsaid(_NUMBER.findall(view(rest).digits)) and unsaid(_NUMBER.findall(view(rest).surface)):
            return "not_in_source"
    return "not_in_source" if _names_not_said(rest, said_lower) else None


def sources_from_payload(payload: dict) -> dict[str, dict]:
    """The sources a writer payload offers, by id, in the shape ``source_refusal`` reads."""
    sources = {
        str(m["id"]): {"kind": "message", "text": m.get("text", ""), "day": m.get("day", ""), "at": m.get("at", "")}
        for m in payload.get("messages", [])
    }
    for a in payload.get("actions", []):
        sources[str(a["id"])] = {
            "kind": "action",
            "name": a.get("name", ""),
            "label": a.get("label", ""),
            "status": a.get("status", ""),
            "day": a.get("day", ""),
            "at": a.get("at", ""),
        }
    return sources

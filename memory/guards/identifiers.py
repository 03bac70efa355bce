"""Numbers and ids a memory never keeps (R7; issue 19): cards, bank and wallet numbers, government ids of
the countries our customers serve, dates of birth, street addresses, IMEIs and medical record numbers.

"Looks like" means looks like: a 13-19 digit run is a card whether or not it passes Luhn (unless it is a
phone number given with ``+`` or phone words, or an IMEI named as one); an IBAN-shaped value of a known
country is refused with a bad checksum too. The id table (shapes, checksums, context words in the
country's language) is data: ``memory/guards/vocabulary/ids.toml``. Every check reads the normalised views of
``memory.guards.text``, so separators, other scripts' digits and digits written as words do not hide a number.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from stdnum import iban as stdnum_iban
from stdnum import luhn, verhoeff
from stdnum.in_ import vid as stdnum_vid

from memory.guards.prefilter import prefiltered
from memory.guards.stdnum_ids import CONTACT_WORDS as _CONTACT_WORDS
from memory.guards.stdnum_ids import said_of_a_person, stdnum_id_in
from memory.guards.text import WORD_END, WORD_START, View, fold_word
from memory.guards.vocabulary import CueGate, cue_pattern, month_patterns, vocabulary, word_alternation
from memory.guards.vocabulary.simple import split_alternatives

_SEP = r"(?:\s*[.\-/_]\s*|\s)?"
# No letter or digit just before or after, nor a digit one separator away: "1000 0000 0000" inside
# a 22-digit tracking number is not an Aadhaar.
_B = r"(?<![A-Za-z0-9])(?<![0-9][\s.\-/_])"
_E = r"(?![A-Za-z0-9])(?![\s.\-/_][0-9])"


def _npi_valid(value: str) -> bool:
    return len(value) == 10 and luhn.is_valid("80840" + value)


def _br_pis_valid(value: str) -> bool:
    """Brazil's PIS/PASEP/NIT/NIS: eleven digits, the last a mod-11 check of the ten before."""
    digits = re.sub(r"\D", "", value)
    if len(digits) != 11 or len(set(digits)) == 1:
        return False
    total = sum(int(d) * w for d, w in zip(digits[:10], (3, 2, 9, 8, 7, 6, 5, 4, 3, 2), strict=True))
    check = 11 - total % 11
    return int(digits[10]) == (0 if check >= 10 else check)


def _dea_valid(value: str) -> bool:
    value = value.upper()
    if not re.fullmatch(r"[A-Z][A-Z9]\d{7}", value):
        return False
    d = [int(c) for c in value[2:]]
    return (d[0] + d[2] + d[4] + 2 * (d[1] + d[3] + d[5])) % 10 == d[6]


def _icao9303_valid(value: str) -> bool:
    """ICAO 9303's check digit (weights 7, 3, 1; digits as themselves, A-Z as 10-35) on a document number
    whose last character is its check digit: German passports and identity cards."""
    value = value.upper()
    body, check = value[:-1], value[-1]
    if not check.isdigit() or not body.isalnum():
        return False
    total = sum((int(c) if c.isdigit() else ord(c) - 55) * (7, 3, 1)[i % 3] for i, c in enumerate(body))
    return total % 10 == int(check)


def _pl_dowod_valid(value: str) -> bool:
    """Poland's identity card: three letters and six digits, the first digit a check (weights 7, 3, 1, 9, 7, 3, 1,
    7, 3 on the letters as 10-35 and the digits; the total is a multiple of 10)."""
    value = value.upper()
    if not re.fullmatch(r"[A-Z]{3}\d{6}", value):
        return False
    values = [ord(c) - 55 for c in value[:3]] + [int(c) for c in value[3:]]
    return sum(v * w for v, w in zip(values, (7, 3, 1, 9, 7, 3, 1, 7, 3), strict=True)) % 10 == 0


def _clabe_valid(value: str) -> bool:
    """Mexico's CLABE: 18 digits, the last a check digit (weights 3, 7, 1 on the first 17, each product mod 10)."""
    if not re.fullmatch(r"\d{18}", value):
        return False
    total = sum(int(c) * (3, 7, 1)[i % 3] % 10 for i, c in enumerate(value[:17]))
    return (10 - total % 10) % 10 == int(value[17])


_CHECKS = {
    "icao9303": _icao9303_valid,
    "clabe": _clabe_valid,
    "pl_dowod": _pl_dowod_valid,
    "luhn": luhn.is_valid,
    "verhoeff": verhoeff.is_valid,
    "npi": _npi_valid,
    "dea": _dea_valid,
    "br_pis": _br_pis_valid,
}


def _checker(name: str | None):
    if not name:
        return None
    if name in _CHECKS:
        return _CHECKS[name]
    module = importlib.import_module(f"stdnum.{name}")
    return module.is_valid


@dataclass(frozen=True)
class IdRule:
    kind: str
    name: str
    country: str
    reason: str
    shape: re.Pattern
    check: Callable[[str], object] | None
    check_name: str
    alone: str
    context: re.Pattern | None
    min_digits: int
    min_run: int
    not_after: re.Pattern | None
    # The shape's alternatives without the word edge each starts with, each with its own case (``_any_shape``).
    edgeless: tuple[str, ...] = ()


_FIRST_ATOM = re.compile(r"^\{b\}(\\d|\[[^\]]+\]|[A-Za-z0-9])(?:\{(\d+)(?:,(\d+))?\})?(?![?*+]|\{\d)")
_EDGE_BEHIND = r"(?<![A-Za-z0-9].)(?<![0-9][\s.\-/_].)"


def _fast_alternative(alternative: str) -> str:
    match = _FIRST_ATOM.match(alternative)
    if not match:
        return alternative
    atom, low, high = match.group(1), match.group(2), match.group(3)
    rest = alternative[match.end() :]
    if low is None:
        more = ""
    elif high is None:
        more = f"{atom}{{{int(low) - 1}}}" if int(low) > 1 else ""
    else:
        more = f"{atom}{{{max(0, int(low) - 1)},{int(high) - 1}}}"
    return atom + _EDGE_BEHIND + more + rest


def _fast_start(shape: str) -> str:
    """``{b}X`` as ``X`` then the same edge checked behind it: a pattern that starts with a character
    (not a lookbehind) lets the regex engine skip ahead to where that character occurs."""
    parts = shape.split("|{b}")
    return "|".join(_fast_alternative(part if n == 0 else "{b}" + part) for n, part in enumerate(parts))


def _context_of(entry: dict) -> list[str]:
    """A rule's context words: its own, and every language's words of the ``[personal]`` lists it names
    (``context_lists = ["bank_words"]``)."""
    personal = vocabulary().personal
    return list(entry.get("context") or []) + [w for name in entry.get("context_lists", []) for w in personal[name]]


def _expand(shape: str) -> str:
    return shape.replace("{b}", _B).replace("{e}", _E).replace("{sep}", _SEP)


def _edgeless(entry: dict) -> tuple[str, ...]:
    """Each alternative of the shape after its leading ``{b}`` (every alternative of ids.toml starts with one), in a
    group that keeps the rule's case."""
    case = "-i" if entry.get("case") else "i"
    alternatives = split_alternatives(entry["shape"])
    if not all(alternative.startswith("{b}") for alternative in alternatives):
        raise ValueError(f"every alternative of an id shape starts with {{b}}: {entry['name']}")
    return tuple(f"(?{case}:{_expand(alternative[3:])})" for alternative in alternatives)


def _compile(entry: dict) -> IdRule:
    shape = _expand(_fast_start(entry["shape"]))
    flags = 0 if entry.get("case") else re.I
    context = _context_of(entry)
    return IdRule(
        kind=entry["kind"],
        name=entry["name"],
        country=entry.get("country", ""),
        reason=entry["reason"],
        shape=re.compile(shape, flags),
        check=_checker(entry.get("check")),
        check_name=entry.get("check", ""),
        alone=entry.get("alone", "context"),
        context=re.compile(rf"{WORD_START}(?:{word_alternation(context)}){WORD_END}") if context else None,
        min_digits=int(entry.get("min_digits", 0)),
        min_run=int(entry.get("min_run", entry.get("min_digits", 0))) if entry.get("alone") != "context" else 0,
        # the order word, and a link of any language between ("die Sendungsnummer ist 3409 ...")
        not_after=re.compile(
            rf"(?:{cue_pattern(_not_after_words(entry))})"  # a Chinese or Korean word anywhere ("顺丰单号")
            r"(?:\W+(?:id|no|nr|num|number|numero|nummer|code)\b\.?)?"  # "booking ID", "order no."
            rf"(?:\W+(?:{word_alternation(vocabulary().credentials['links'])}){WORD_END})?\W{{0,12}}$"
        )
        if entry.get("not_after")
        else None,
        edgeless=_edgeless(entry),
    )


def _not_after_words(entry: dict) -> list[str]:
    """A rule's own order and tracking words, and every language's words a number after which is an order's,
    a shipment's or a booking's (``not_a_code_before``: Sendungsnummer, 주문번호, código de rastreio ...)."""
    return list(entry["not_after"]) + [w for w in vocabulary().credentials["not_a_code_before"] if w != "#"]


RULES: tuple[IdRule, ...] = tuple(_compile(entry) for entry in vocabulary().ids)
_CONTEXT_GATE = CueGate({w for e in vocabulary().ids for w in _context_of(e)})
_ALL_CONTEXT = re.compile(cue_pattern({w for e in vocabulary().ids for w in _context_of(e)}))

# ---------------------------------------------------------------------------------------------
# Cards and IBANs (code: they need more than a shape and a word)
# ---------------------------------------------------------------------------------------------

_DIGIT_RUN = re.compile(r"\d+")  # then 13-19 long: a charset-first pattern scans fast
_IMEI_WORD = re.compile(r"(?i)\b(?:imei|meid)\b")
_EXPIRY_WORD = re.compile(r"(?i)\b(?:exp\w*|valid|thru|until)\b")
_STREET_AFTER_NUMBER = re.compile(r"\d{1,5}[a-z]?,?\s+\w+\s+(?:street|road|avenue|lane|strasse|straße|rue|calle|rua)\b")
_SEPARATORS = re.compile(r"[\s.\-/_]")


_OVERLONG_RUN = re.compile(r"\d{20,}")
_PHONE_WORDS = re.compile(
    rf"{WORD_START}(?:phone|mobile|cell|call|ring|whatsapp|telegram|signal|sms|text|tel|landline|contact|reach|"
    rf"telefono|telefone|telephone|handy|telefon|numero|number|fax|फ़ोन|फोन|मोबाइल){WORD_END}",
)
_CARD_WORDS = prefiltered(
    re.compile(
        rf"{WORD_START}(?:card|credit|debit|visa|mastercard|amex|rupay|maestro|cvv|expiry|expires|exp|tarjeta|carte|"
        rf"karte|kreditkarte|cartao|cartão|कार्ड){WORD_END}"
    )
)
_TRACK_DATA = prefiltered(re.compile(r"%B\d{13,19}\^|;\d{13,19}=\d{4}"))
_EXPIRY = re.compile(r"(?<![\d/])(?:0[1-9]|1[0-2])\s*/\s*(?:\d{2}|20\d{2})(?![\d/])")
_IBAN_SHAPE = re.compile(r"(?<![A-Za-z0-9])([A-Z]{2})(\d{2})((?:[ .\-_/]?[A-Z0-9]){10,32})(?![A-Za-z0-9])", re.I)
# Where every IBAN-shaped value starts: two letters then two digits, found from the digits (a scan that jumps between
# them); a line without one is not searched for the shape.
_IBAN_START = re.compile(r"\d(?<=[A-Z]{2}\d)\d", re.I)
# Countries that use IBANs (python-stdnum's iban.dat).
_IBAN_COUNTRIES = frozenset(
    "AD AE AL AT AZ BA BE BG BH BI BR BY CH CR CY CZ DE DJ DK DO EE EG ES FI FK FO FR GB GE GI GL GR GT HN HR HU "
    "IE IL IQ IS IT JO KW KZ LB LC LI LT LU LV LY MC MD ME MK MN MR MT MU NI NL NO OM PK PL PS PT QA RO RS RU SA "
    "SC SD SE SI SK SM SO ST SV TL TN TR UA VA VG XK YE".split()
)


def _iban_in(v: View) -> bool:
    """A valid IBAN, or an IBAN-shaped value (a country that uses IBANs, two check digits, 10+ more
    characters, mostly digits) whose checksum fails."""
    for match in _IBAN_SHAPE.finditer(v.surface) if _IBAN_START.search(v.surface) else ():
        country = match.group(1).upper()
        if country not in _IBAN_COUNTRIES:
            continue
        compact = re.sub(r"[ .\-_/]", "", match.group(0)).upper()
        digits = sum(c.isdigit() for c in compact)
        if stdnum_iban.is_valid(compact):
            return True
        # the longest valid prefix (an IBAN followed by words)
        if any(stdnum_iban.is_valid(compact[:n]) for n in range(15, min(34, len(compact)) + 1)):
            return True
        written = match.group(0)
        if digits >= 10 and len(compact) >= 15 and written[:2].isupper() and not any(c.islower() for c in written):
            return True  # printed as an IBAN is (upper case), not words run together ("BA117 to JFK for 14 Dec")
    return False


# A run of digits with the separators people put between groups. Look-alike letters inside it read as
# digits (O and o as 0, I and l as 1); keycaps are digits already (their marks are invisible, memory.text).
_GROUPED = re.compile(
    r"(?<![A-Za-z0-9])[0-9OoIlSBZz]*[0-9][0-9OoIlSBZz]*(?:(?:\s?[.\-/_|\\]\s?|\s|,(?=\d))+[0-9OoIlSBZz]*[0-9][0-9OoIlSBZz]*)*(?![A-Za-z0-9])"
)
_GROUP_SEP = re.compile(r"[\s.\-/_|\\,]+")
# Thirteen digits (or look-alikes) with only _GROUPED's separators between them: a line without them holds no
# card-length number, and _GROUPED is not searched.
_CARD_LENGTH_RUN = re.compile(r"(?:[0-9OoIlSBZz][\s.\-/_|\\,]*+){13}")
_LOOKALIKE = str.maketrans("OoIlSBZz", "00115822")  # a Z is a 2 inside a card ("4O7Z S922 ...")
_LABELLED_NUMBER = re.compile(
    rf"{WORD_START}(?:{word_alternation(vocabulary().credentials['not_a_code_before'])}|order|orders|tracking|"
    rf"invoice|booking|reference|ref|awb|consignment|shipment|parcel|receipt|transaction|confirmation){WORD_END}"
)


def _groups(run: str) -> list[str]:
    return [group.translate(_LOOKALIKE) for group in _GROUP_SEP.split(run) if group]


def _card_shaped(groups: list[str]) -> bool:
    """One run, or groups as cards print them (4-4-4-4, 4-6-5, 4-4-4-4-3): none longer than six, the first
    of four or more. An order number's 3-7-7 or 3-7-4 is not."""
    return len(groups) == 1 or (len(groups[0]) >= 4 and max(len(group) for group in groups) <= 6)


# Card brands by their first digits and the lengths they print (ISO/IEC 7812 issuer ranges): Visa,
# Mastercard, American Express, Discover, JCB, Diners, UnionPay.
_CARD_BRANDS = (
    (re.compile(r"4"), (16, 13, 19)),
    (re.compile(r"5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)"), (16,)),
    (re.compile(r"3[47]"), (15,)),
    (re.compile(r"6(?:011|5|4[4-9])"), (16, 19)),
    (re.compile(r"35(?:2[89]|[3-8]\d)"), (16, 19)),
    (re.compile(r"3(?:0[0-5]|[68])"), (14,)),
    (re.compile(r"62"), (16, 19)),
)


def _branded_window(run: str, *, labelled: bool) -> bool:
    """Inside one unseparated run of 14-19 digits, a card padded on either side: a Luhn-valid window of its
    brand's length beginning where the run's leading zeros end, or ending where the run ends (its brand read
    from the window's first digits). Only a brand's own lengths are tried, so a long reference number is
    rarely read as one by chance; after an order or reference word only leading zeros are read as padding
    (a long order number holds a branded window about one time in fifteen)."""
    body = run.lstrip("0")
    if labelled and body == run:
        return False
    for brand, lengths in _CARD_BRANDS:
        for length in lengths:
            for window in (body[:length],) if labelled else (body[:length], run[-length:]):
                if len(window) == length and window != run and brand.match(window) and luhn.is_valid(window):
                    return True
    return False


def _branded(window: str) -> bool:
    """The number starts as a card brand does and has one of its lengths."""
    return any(brand.match(window) and len(window) in lengths for brand, lengths in _CARD_BRANDS)


def _group_aligned_card(groups: list[str], *, branded: bool) -> bool:
    """A Luhn-valid 13-19 digit window that starts and ends where groups do (with ``branded``, one that also
    starts as a card brand does and has its length)."""
    for i in range(len(groups)):
        window = ""
        for group in groups[i:]:
            window += group
            if len(window) > 19:
                break
            if len(window) >= 13 and window[0] != "0" and (not branded or _branded(window)) and luhn.is_valid(window):
                return True
    return False


def _luhn_window(groups: list[str], *, labelled: bool = False) -> bool:
    """A Luhn-valid 13-19 digit window that starts and ends where groups do (a card with a prefix, a
    suffix or another card joined to it); inside one run of 14-19 digits, a card of its brand's length
    after leading zeros or at the run's end (``_branded_window``); inside a run of 20 or more digits,
    anywhere after leading zeros. After an order, ticket or reference word a window must also start as a
    card brand does and have its length: "protocolo de atendimento 2024873467889" passes Luhn as one
    number in ten does, but no card is 13 digits starting with 2."""
    if any(14 <= len(group) <= 19 and _branded_window(group, labelled=labelled) for group in groups):
        return True
    if _group_aligned_card(groups, branded=labelled):
        return True
    for group in groups:
        if len(group) >= 20:
            body = group.lstrip("0")
            for start in range(len(body) - 12):
                for length in (16, 15, 19, 13, 14, 17, 18):
                    window = body[start : start + length]
                    if len(window) == length and window[0] != "0" and luhn.is_valid(window):
                        return True
    return False


def _branded_edge(groups: list[str]) -> bool:
    """In 20 or more digits after an order or reference word, a card as a card is written: a Luhn-valid window
    of its brand's length that starts and ends where groups do, or that starts a run where its leading zeros
    end ("Reference: 46463448528786890043" is a Visa with four digits after it). Not every offset, nor the
    run's end: a random 20-digit reference starts with a branded Luhn window about one time in twenty (ends
    too: one in ten), and a tracking or filing number of that length is common after its word."""
    if _group_aligned_card(groups, branded=True):
        return True  # a card and more groups ("4556 7375 8689 9855 0072")
    for group in groups:
        body = group.lstrip("0")
        if len(group) >= 20 and any(
            brand.match(body) and luhn.is_valid(body[:length]) for brand, lengths in _CARD_BRANDS for length in lengths
        ):
            return True
    return False


def card_in(v: View) -> str | None:
    """Find the value, then the reason: ``"card_number"`` for any run of 13 or more digits (after number words,
    look-alike letters and separators are read) that holds a card: a 13-19 digit run, Luhn or not, unless it
    is a phone number (``+`` or phone words before it, 15 digits or fewer), a named IMEI, an Aadhaar virtual
    id, or an order number's grouping (3-7-7) that fails Luhn or follows an order word; a longer run with a
    Luhn-valid window (padding, leading zeros, two cards joined). A run of 20 or more digits with no such
    window and no order or tracking word before it is ``"bank_account"`` (a domestic account number). Also
    track data, and an expiry beside card words."""
    if _TRACK_DATA.search(v.surface):
        return "card_number"
    card_words = bool(_CARD_WORDS.search(v.folded))
    text = v.plain
    for match in _GROUPED.finditer(text) if _CARD_LENGTH_RUN.search(text) else ():
        groups = _groups(match.group(0))
        if len("".join(groups)) < 13:
            continue
        before = text[max(0, match.start() - 30) : match.start()]
        found = _run_refusal(groups, before, card_words)
        if found:
            return found
    if card_words and _EXPIRY.search(v.surface) and _EXPIRY_WORD.search(v.folded):
        return "card_number"
    if card_words and _split_card(v.digits):
        return "card_number"
    return None


def _phone_before(before: str) -> bool:
    return before.rstrip().endswith("+") or bool(_PHONE_WORDS.search(fold(before)))


def _card_run_kept(groups: list[str], before: str, card_words: bool, labelled: bool) -> bool:
    """A 13-19 digit run that is not a card: a phone number, a named IMEI, an Aadhaar virtual id, or an order,
    tracking or booking number (its own grouping, or its word and no Luhn)."""
    digits = "".join(groups)
    if not card_words and len(digits) <= 15 and _phone_before(before):
        return True
    if not card_words and _IMEI_WORD.search(before):
        return True  # an IMEI: reported by its own rule
    if len(digits) == 16 and stdnum_vid.is_valid(digits) and not card_words and not luhn.is_valid(digits):
        return True  # an Aadhaar virtual id: a government id, reported below
    shaped = _card_shaped(groups)
    return (not card_words or labelled) and (
        (not shaped and labelled) or ((labelled or not shaped) and not _luhn_window(groups, labelled=labelled))
    )


def _run_refusal(groups: list[str], before: str, card_words: bool) -> str | None:
    """What one run of 13 or more digits is: a card, a domestic bank account, or nothing."""
    labelled = bool(_LABELLED_NUMBER.search(fold(before)))
    if len("".join(groups)) <= 19:
        return None if _card_run_kept(groups, before, card_words, labelled) else "card_number"
    if card_words or (not labelled and _luhn_window(groups)) or (labelled and _branded_edge(groups)):
        return "card_number"
    if not labelled and not _phone_before(before):
        return "bank_account"
    return None


_SOME_DIGITS = re.compile(r"(?<!\d)\d{4,15}(?!\d)")
_LAST_FOUR_BEFORE = re.compile(
    r"(?i)(?:ending|ends\s+in|last\s+(?:four|4|digits)|final|terminad[ao]\s+en|se\s+termine\s+par|endet\s+auf)\W*$"
)


def _split_card(digits_view: str) -> bool:
    """A card told in pieces across a sentence beside card words ("starts 4242 4242, ends 4242 4242"):
    consecutive runs of digits that join into a Luhn-valid 13-19 digit number."""
    runs: list[str] = []
    for match in _SOME_DIGITS.finditer(digits_view):
        before = digits_view[max(0, match.start() - 30) : match.start()]
        if _LAST_FOUR_BEFORE.search(before) or _LABELLED_NUMBER.search(fold(before)):
            runs = []  # a card's last four, an order number: not a piece of a card
            continue
        runs.append(match.group(0))
    for i in range(len(runs)):
        joined, longest = runs[i], len(runs[i])
        for run in runs[i + 1 :]:
            joined, longest = joined + run, max(longest, len(run))
            if len(joined) > 19:
                break
            if len(joined) >= 13 and joined[0] != "0" and luhn.is_valid(joined):
                # pieces longer than a group of eight ("starts 3732 957004, ends 61846") only as a brand prints it
                if longest <= 8 or _branded(joined):
                    return True
    return False


def fold(text: str) -> str:
    return fold_word(text)


# A run of exactly 16 digits, found from its first digit.
_SIXTEEN_DIGITS = re.compile(r"\d(?<!\d\d)\d{15}(?!\d)")


def virtual_aadhaar_in(v: View) -> bool:
    return any(stdnum_vid.is_valid(m.group(0)) for m in _SIXTEEN_DIGITS.finditer(v.digits))


# ---------------------------------------------------------------------------------------------
# Dates of birth and street addresses
# ---------------------------------------------------------------------------------------------

_MONTH = "|".join(month_patterns().values())  # months.toml: every language's month names, folded
# A year in full or with an apostrophe ("'87").
_YEAR = r"(?:\d{2,4}|['\u2019]\d\d)"
_DATE = rf"(?:\d{{1,4}}[./\-]\d{{1,2}}[./\-]\d{{2,4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+|de\s+|del\s+)?(?:{_MONTH})\.?,?\s+(?:de\s+|del\s+)?{_YEAR}|(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_YEAR}|(?:19|20)\d\d)"
_DOB = prefiltered(
    re.compile(
        rf"{WORD_START}(?:born(?:\s+on|\s+in)?|date\s+of\s+birth|dob|d\.o\.b\.?|birth\s*date|birthday(?:\s+is)?|"
        rf"fecha\s+de\s+nacimiento|nacio\s+el|nacido\s+el|nacida\s+el|date\s+de\s+naissance|ne\s+le|nee\s+le|"
        rf"geburtsdatum|geboren\s+am|geboren|data\s+de\s+nascimento|nascido\s+em|nascida\s+em|janm\s+tithi|"
        rf"जन्म\s+तिथि|जन्मतिथि|जन्म){WORD_END}\s*(?:is|was|:|-|on|el|le|am|em)?\s*{_DATE}"
    )
)
_AGE = re.compile(
    rf"{WORD_START}(?:is|aged?|turned|turns)\s+\d{{1,3}}\s*(?:years?\s+old|yrs?\s+old|yo)?{WORD_END}(?!\s*(?:seats|users|agents|licen[cs]es|stores|locations|people|staff|employees|orders|days|minutes|hours|%))"
)
_STREET = (
    r"street|st|road|rd|avenue|ave|lane|ln|drive|dr|boulevard|blvd|way|court|ct|close|crescent|terrace|place|pl|"
    r"square|sq|highway|hwy|parkway|marg|nagar|colony|sector|layout|calle|avenida|avda|av\.|paseo|plaza|rue|"
    r"chemin|allee|impasse|strasse|str|weg|gasse|platz|allee|ring|damm|rua|travessa|largo|via|viale|piazza|corso|straat|"
    r"laan|gracht|plein|steeg"
)
_ADDRESS = re.compile(
    rf"(?<![\d])\d{{1,5}}(?:st|nd|rd|th|[a-z])?(?:[,/\-]\d+)?\s*,?\s+(?:[a-z][\w'.\-]*\s+){{0,4}}(?:{_STREET}){WORD_END}|"
    rf"{WORD_START}(?:{_STREET})\.?\s+(?:[a-z][\w'.\-]*,?\s+){{0,3}}\d{{1,5}}[a-z]?{WORD_END}|"
    rf"{WORD_START}(?:[a-z]+(?:strasse|straße|str\.|weg|gasse|platz|allee|straat|laan|gracht))\s+\d{{1,5}}[a-z]?{WORD_END}|"
    rf"{WORD_START}\d{{1,2}}(?:st|nd|rd|th)\s+(?:cross|main)(?:\s+road|\s+rd)?{WORD_END}|"  # Bengaluru's "2nd Cross"
    rf"{WORD_START}(?:flat|apt|apto|apartment|apartamento|unit|house\s+no|h\.?\s*no|plot\s+no|door\s+no|piso|etage|andar|depto|dpto)\.?\s*#?\s*\d{{1,5}}[a-z]?\b",
)
_ADDRESS_WORDS = re.compile(
    rf"{WORD_START}(?:lives|living|live|address|home|resides|residence|house|flat|apartment|apt|postcode|zip|"
    rf"direccion|domicilio|vive|adresse|habite|anschrift|wohnt|wohnadresse|endereco|mora|morada|pata|पता|rehta|rehti|"
    rf"rehte|rahta|rahte|rahti|रहता|रहती|रहते|"
    rf"deliver(?:y|ies)?\s+to|ship(?:ping)?\s+to|send\s+(?:it|parcels?)\s+to){WORD_END}"
)


# A postcode right after a street and its number ("Lindelaan 41, 3581 KD", "ul. Lipowej 12/4, 31-416", "12 Rue X,
# 75011", "10 Downing Street, SW1A 2AA"), on the folded view.
_POSTCODE_AFTER = re.compile(
    r"(?:/\d{1,4}[a-z]?)?,?\s+(?:\d{4}\s?[a-z]{2}|\d{2}-\d{3}|\d{4}-\d{3}|\d{5}|[a-z]{1,2}\d[a-z\d]?\s?\d[a-z]{2})(?![\w-])"
)
# A Dutch postcode (four digits, two letters) that reads as a number and a street's short name ("1017 ct").
_DUTCH_POSTCODE = re.compile(r"\d{4}\s?[a-z]{2}")
# What cuts a word of the view (``View.words``) into the runs of letters the two lists below are read against:
# digits and "_" (not the Devanagari digits, which are letters here; the folded view holds none).
_NOT_A_LETTER = re.compile(r"(?:(?![\u0966-\u096F])[\d_])+")
# A date of birth needs one of these words, an address one of the street or address words: a line
# holding none skips the two regexes.
_DOB_WORDS = frozenset(
    "born dob birth birthdate birthday nacimiento nacio nacido nacida naissance ne nee geburtsdatum geboren "
    "nascimento nascido nascida janm जन्म जन्मतिथि d o b".split()
)
_STREETISH = (
    frozenset(_STREET.replace("\\.", "").split("|"))
    | {
        "flat",
        "apt",
        "apartment",
        "unit",
        "house",
        "no",
        "plot",
        "door",
        "piso",
        "etage",
        "andar",
        "apto",
        "apartamento",
        "depto",
        "dpto",
        "cross",
        "main",
    }
    | {"strasse", "straße", "weg", "gasse", "platz", "allee", "straat", "laan", "gracht"}
)
_STREET_ENDINGS = ("strasse", "straße", "str", "weg", "gasse", "platz", "allee", "straat", "laan", "gracht")
# What a line must hold for _ADDRESS to match, read from its alternatives, as the view's whole words: a street's word
# ("road", "av", a Bengaluru "cross"), the word a flat or house number follows ("house no", "h.no"), a word a flat
# number starts ("flat5", "apto") or a street's name ends with ("hauptstrasse"). Letters cut from a longer word
# ("pl" in a key) are none of these.
_STREET_WORDS = frozenset(_STREET.replace("\\.", "").split("|")) | {"cross", "main", "house", "plot", "door", "h"}
_FLAT_STARTS = tuple("flat apt apto apartment apartamento unit piso etage andar depto dpto hno".split())


def _may_name_a_street(v: View) -> bool:
    return not v.words.isdisjoint(_STREET_WORDS) or any(
        word.startswith(_FLAT_STARTS) or word.endswith(_STREET_ENDINGS) for word in v.words
    )


_ADDRESS_CUES = re.compile(cue_pattern(vocabulary().personal["address_cues"]))
_BIRTH_CUES = re.compile(cue_pattern(vocabulary().personal["birth_cues"]))
_ADDRESS_GATE = CueGate(vocabulary().personal["address_cues"])
_BIRTH_GATE = CueGate(vocabulary().personal["birth_cues"])
# A house number, with a flat after a slash ("12/4", Polish and Czech addresses) or not; not the digits of a
# word ("ship4@x.com").
_HOUSE_NUMBER = re.compile(
    r"(?<![\w.,:/+\-@])\d{1,5}[a-z]?(?:/\d{1,4}[a-z]?)?(?![\d:/%]|[.,]\d|\s*(?:am|pm|h|min|km|m|kg|€|\$|%|x|st\s+floor))"
)
_A_YEAR = re.compile(rf"(?<![\d.,])(?:19|20)\d\d(?![\d.,])|(?<![\w])['\u2019]\d\d(?!\d)|\d{{4}}\s*年|{_DATE}", re.I)
_NEAR_CHARS = 60
_LAST_NUMBER = re.compile(r"\d{1,5}[a-z]?$")
_MONTH_AFTER = re.compile(rf"\.?\s*(?:de\s+)?(?:{_MONTH})(?![\w])")
# a postcode word, then the postcode's groups so far ("postnummer 114 55": neither 114 nor 55 is a house number)
_POSTCODE_BEFORE = re.compile(
    rf"(?:{cue_pattern(vocabulary().personal['postcode_words'])})\s*[:.\-]?\s*(?:\d{{1,5}}\s?[\-\s]?\s?)*$"
)
_COUNT_BEFORE = frozenset(
    "with since for mit seit fur für con desde por com ha há avec depuis pendant per da dal sinds sejak "
    "about around over under nearly almost only just since from until till od do vanaf tot dal".split()
)


def _said_in_a_sentence(v: View) -> bool:
    """A home address or a date of birth said in a sentence, in any language: an address phrasing ("I live
    at", "vivo en la calle", "ich wohne in der", "moro na rua", "पता", "に住んで") with a house number after it,
    or a birth phrasing ("born in", "nací el", "geboren am", "生まれ") with a year or a date beside it
    ("born in '87")."""
    folded = v.folded
    for match in _ADDRESS_CUES.finditer(folded) if _ADDRESS_GATE.open(v) else ():
        after = folded[match.end() : match.end() + _NEAR_CHARS]
        for number in _HOUSE_NUMBER.finditer(after):
            before = after[: number.start()].split()
            if re.fullmatch(r"(?:19|20)\d\d", number.group(0)) or (before and before[-1] in _COUNT_BEFORE):
                continue  # a year, or a count ("with 2 cats", "seit 2019")
            if _POSTCODE_BEFORE.search(after, 0, number.start()):
                continue  # a postcode ("woont in Amsterdam, postcode 1012 AB"), not a house number
            if _MONTH_AFTER.match(after, number.end()):
                continue  # a day ("changed the e-mail address on 3 Nov")
            return True
    for match in _BIRTH_CUES.finditer(folded) if _BIRTH_GATE.open(v) else ():
        window = folded[max(0, match.start() - 25) : match.end() + 40]
        if _A_YEAR.search(window):
            return True
    return False


# A Chinese or Japanese street address by its shape: a road and its number ("漕溪北路88号"), a building and a room
# ("5栋1203室"), a chōme and its block ("3丁目12-5").
# Korean: a road and its number after a city and a district ("마포구 월드컵북로 396"), a building and a unit ("101동
# 1502호"); Japanese: a ward or town and its chōme-ban-gō ("世田谷区北沢2-14-7"), a room ("203号室").
_CJK_ADDRESS = re.compile(
    r"[구군시]\s+[가-힣\d]+(?:로|길)\s?\d{1,5}(?:-\d{1,4})?(?!\d)|\d{1,4}동\s?\d{1,5}호|"
    r"[区市町村][^\s\d]{1,8}\d{1,2}[-－]\d{1,4}(?:[-－]\d{1,4})?(?!\d)|\d{1,4}号室|"
    r"[路街道巷弄里]\d{1,5}号|\d{1,5}号(?:楼|院)?\d{0,3}[栋幢座]?\d{1,5}室|\d{1,2}[栋幢座]\d{1,5}室|\d{1,2}丁目\d{1,4}(?:番地?|[-－])\d{1,4}"
)


_CJK_MARKS = re.compile(r"[号室丁目호로길区町]")
# An Indian address: a house code ("B-42", "12A"), a locality ("Lajpat Nagar 2", "Sector 15") and a six-digit PIN
# ("New Delhi 110024") a few words on. A locality and a PIN without a house ("PIN code 110024") is a postcode.
_INDIAN_LOCALITY = r"nagar|colony|sector|layout|vihar|enclave|puram|bagh|extension|phase|block|society|chs|apartments"
_INDIAN_LOCALITY_GATE = prefiltered(re.compile(rf"\b(?:{_INDIAN_LOCALITY})\b"))
_INDIAN_ADDRESS = re.compile(
    rf"(?<![\w\-])(?:[a-z]{{1,2}}-?\d{{1,4}}[a-z]?|\d{{1,4}}[a-z]?)(?:/\d{{1,4}})?\s*,\s*(?:[\w.'\-]+\s+){{0,3}}"
    rf"(?:{_INDIAN_LOCALITY})\b[\w\s,.\-]{{0,40}}?(?<!\d)[1-8]\d{{2}}\s?\d{{3}}(?!\d)"
)


# A Spanish street address by its shape: "C/ Alcalá 212" (the street abbreviated), or a street named with a
# capital, its number and a floor ("Alcalá 212, 3.º B", "Alcalá 212, tercero B"). A chapter, a floor or a page
# with a number and an ordinal after it ("capítulo 3, tercero de la serie") is not one.
_SPANISH_FLOOR = r"(?:\d{1,2}\s*\.?\s*[º°ª]|\d{1,2}[oa](?=[A-Z]?(?:\s|,|$))|primero|segundo|tercero|cuarto|quinto|sexto|s[eé]ptimo|octavo|noveno|d[eé]cimo|bajo|[aá]tico|entresuelo)"
_SPANISH_STREET_ABBREVIATED = re.compile(r"(?<![\w/])c\s?/\s?(?:[^\W\d_]+\s+){1,4}\d{1,4}(?![\d:/%]|[.,]\d)")
_SPANISH_STREET_FLOOR = re.compile(
    rf"(?<!\w)(?P<street>[A-ZÁÉÍÓÚÑ][^\W\d_]{{2,}})\s+\d{{1,4}}\s*,\s*(?i:{_SPANISH_FLOOR})(?:\s*[A-Za-z](?!\w))?(?!\w)(?!\s+(?i:de|del)\b)"
)
_NOT_A_STREET = frozenset(
    "capitulo capítulo planta piso pagina página parte tomo nivel puerta numero número fila asiento mesa sala "
    "aula grupo equipo temporada episodio volumen paso punto linea línea anexo articulo artículo".split()
)


# What every floor address holds: a number then a comma ("212, 3.º"), found by a scan that jumps between digits.
_NUMBER_THEN_COMMA = re.compile(r"\d\s*,")


def _spanish_address(v: View) -> bool:
    if "/" in v.folded and _SPANISH_STREET_ABBREVIATED.search(v.folded):
        return True
    if not _NUMBER_THEN_COMMA.search(v.surface):
        return False
    return any(m.group("street").casefold() not in _NOT_A_STREET for m in _SPANISH_STREET_FLOOR.finditer(v.surface))


def personal_identifier_in(v: View) -> bool:
    """A date of birth, a street address with a house number, an IMEI or a medical record number
    (the last two through the id table)."""
    folded = v.folded
    if _said_in_a_sentence(v):
        return True
    if _CJK_MARKS.search(folded) and _CJK_ADDRESS.search(folded):
        return True
    if ("/" in folded or "," in folded) and _spanish_address(v):
        return True
    if "nagar" in folded or _INDIAN_LOCALITY_GATE.search(folded):
        if _INDIAN_ADDRESS.search(folded):
            return True
    # a date of birth or a street, each behind its own cheap gate first, then behind both the words gate
    born, street = _DOB.search(folded), _may_name_a_street(v)
    if not (born or street):
        return False
    # the runs of letters of the line's words ("12th" holds "th", "flat5" holds "flat")
    words = {run for word in v.words for run in ((word,) if word.isalpha() else _NOT_A_LETTER.split(word)) if run}
    if (
        words.isdisjoint(_DOB_WORDS)
        and words.isdisjoint(_STREETISH)
        and not any(word.endswith(_STREET_ENDINGS) for word in words)
    ):
        return False
    return bool(born) or (street and _street_address(folded))


def _street_address(folded: str) -> bool:
    """A street and a house number, said as an address (an address word, or a postcode after them)."""
    for match in _ADDRESS.finditer(folded):
        if _DUTCH_POSTCODE.fullmatch(match.group(0)):
            continue  # "1017 CT" is a Dutch postcode, not a number on a court
        last = _LAST_NUMBER.search(match.group(0))
        if last and _POSTCODE_BEFORE.search(folded, 0, match.start() + last.start()):
            continue  # "my place is in zip 43214": a postcode, not a house number
        if _ADDRESS_WORDS.search(folded) or _STREET_AFTER_NUMBER.search(folded):
            return True
        if _POSTCODE_AFTER.match(folded, match.end()):
            return True  # a street, a number and a postcode: an address whatever the words around it
    return False


# ---------------------------------------------------------------------------------------------
# The id table
# ---------------------------------------------------------------------------------------------


def _compact(value: str) -> str:
    return _SEPARATORS.sub("", value)


def _match_counts(rule: IdRule, text: str, match: re.Match) -> bool:
    """Whether a match of a rule's shape, with no context word, is that id: not after a tracking or order word
    in the same grouping; a shape alone, or a checksum it passes, not given as a phone number."""
    if rule.not_after is not None and rule.not_after.search(fold(text[max(0, match.start() - 30) : match.start()])):
        return False
    if rule.alone == "shape":
        return True
    if rule.alone != "checksum" or rule.check is None:
        return False
    before = text[max(0, match.start() - 30) : match.start()]
    if before.rstrip().endswith("+") or _CONTACT_WORDS.search(fold(before)):
        return False  # a phone number given to be reached on
    value = _compact(match.group(0))
    try:
        return bool(rule.check(value if rule.check_name == "bitcoin" else value.upper()))
    except Exception:  # a checker that cannot read the value: not this id
        return False


def _rule_in(rule: IdRule, v: View, context_here: bool) -> bool:
    has_context = bool(rule.context and said_of_a_person(rule.context, v.folded)) if context_here else False
    texts = (v.surface, v.digits) if has_context and v.digits != v.surface else (v.surface,)
    for text in texts:
        for match in rule.shape.finditer(text):
            if has_context or _match_counts(rule, text, match):
                return True
    return False


def id_in(v: View) -> tuple[str, str] | None:
    """``(reason, kind)`` of the first identifier of the table the line holds, or ``None``."""
    runs = [len(run) for run in _DIGIT_RUN.findall(v.digits)]
    digit_count = sum(runs)
    if digit_count == 0 and not any(r.min_digits == 0 for r in RULES):
        return None
    context_here = _CONTEXT_GATE.open(v) and bool(_ALL_CONTEXT.search(v.folded))
    longest_run = max(runs, default=0)
    numbers = tuple(
        number
        for number, rule in enumerate(RULES)
        if digit_count >= rule.min_digits and longest_run >= rule.min_run and (rule.alone != "context" or context_here)
    )
    if not numbers:
        return None
    # Most lines hold no id's shape at all: one scan for any of them first (the digits view too when a context
    # word may make a rule read it), and the rules one by one only when it finds something.
    shapes = _any_shape(numbers)
    if not shapes.search(v.surface) and not (context_here and v.digits != v.surface and shapes.search(v.digits)):
        return None
    for number in numbers:
        rule = RULES[number]
        if _rule_in(rule, v, context_here):
            return rule.reason, rule.kind
    return None


@lru_cache(maxsize=128)
def _any_shape(numbers: tuple[int, ...]) -> re.Pattern:
    """One regex for the shapes of these rules (``RULES`` by number): the word edge every shape starts with, read
    once a position and without case (it holds wherever a rule's own edge does), then each shape's rest with the
    rule's case. It finds something wherever one of the rules would."""
    return re.compile(_B + "(?:" + "|".join(part for number in numbers for part in RULES[number].edgeless) + ")")


def identifier_refusal(v: View) -> str | None:
    """The refusal code for a number-shaped secret, or ``None``: ``card_number``, ``bank_account``,
    ``government_id`` or ``personal_identifier``."""
    found = id_in(v)
    imei = found and found[1] == "imei"
    if _iban_in(v):
        return "bank_account"
    card = None if imei else card_in(v)
    if card:
        return card
    if virtual_aadhaar_in(v):
        return "government_id"
    if found:
        return found[0]
    stdnum_found = stdnum_id_in(v)
    if stdnum_found:
        return stdnum_found
    if personal_identifier_in(v):
        return "personal_identifier"
    return None

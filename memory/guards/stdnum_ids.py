"""Every checksummed format python-stdnum validates (R7; issue 24): find the value, then the reason.

``vocabulary/stdnum.toml`` (made by ``vocabulary/make_stdnum.py``) lists each format's compact lengths, how
often a random value of its shape passes its check (``collide``) and how ``format()`` prints it. A value
anywhere in the line that passes a format's check is refused when the line gives a reason to read it as that
format, and the weaker the check the stronger the reason must be:

* a check a random value passes at most once in a thousand: no reason needed;
* the value written as the format prints it, with its separators ("790306/7832", "851214-2712681");
* a check passed at most once in twenty (PESEL, T.C. Kimlik, DNI): a word for "number" in any language;
* any other: an id word of any language (``[personal] id_words``) or the format's own name ("NIF", "TFN").

Never right after an order, invoice, tracking or phone word (unless an id word is there too), nor after ``+``.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cached_property

from memory.guards.text import View, fold_word
from memory.guards.vocabulary import HERE, CueGate, cue_pattern, vocabulary

__all__ = ["CONTACT_WORDS", "stdnum_id_in"]

# A format a random value of its shape passes at most this often is refused on its checksum alone.
_ALONE_COLLIDE = 0.001
# With a "number" word beside it, a format passed at most this often.
_NUMBER_WORD_COLLIDE = 0.05
# Written in the format's printed layout, a format passed at most this often.
_LAYOUT_COLLIDE = 0.11

_ID_CANDIDATE = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Z]{2,6}(?:\s?[.\-/]\s?|\s)(?=[A-Za-z0-9]*\d))?[A-Za-z0-9]*\d[A-Za-z0-9]*"
    r"(?:(?:\s?[.\-/]\s?|\s)[A-Za-z0-9]*\d[A-Za-z0-9]*){0,5}(?:[.\-/][A-Z])?(?![A-Za-z0-9])"
)
_TITLE_STOP = frozenset(
    "number numbers code the of and for no nr id personal national company business register registration "
    "identification identity tax vat a an in de del la le des du di da do codigo unique unico single "
    "nacional national general".split()
)
_SEPARATOR_RUN = re.compile(r"[\s.\-/]+")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]+")
_UUID_SHAPE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}")
_WORDS = re.compile(r"[^\W\d_][\w.'\-]*")
_PERSONAL = vocabulary().personal
_ID_WORDS = re.compile(cue_pattern(_PERSONAL["id_words"]))
_NUMBER_WORDS = re.compile(cue_pattern(_PERSONAL["number_words"]))
_ID_GATE = CueGate(_PERSONAL["id_words"])
_NUMBER_GATE = CueGate(_PERSONAL["number_words"])
_NOT_AN_ID_BEFORE = re.compile(
    rf"(?:{cue_pattern(_PERSONAL['not_an_id_before'] + vocabulary().credentials['not_a_code_before'])})"
    r"(?:\s+[\w.\-]+)?\W*$"
)
# Words that give a number as the way to reach them (a bare "number" is not one: it names ids too).
CONTACT_WORDS = re.compile(
    cue_pattern(
        "phone mobile cell call ring whatsapp telegram signal sms text tel landline contact reach telefono "
        "telefone telephone handy telefon fax फ़ोन फोन मोबाइल".split()
    )
)
_PHONE_SHAPE = re.compile(r"^(?:\+|0)\d{8,12}$")


@dataclass(frozen=True)
class _Format:
    module: str
    bank: bool
    collide: float
    words: frozenset[str]
    layouts: frozenset[str]

    @property
    def alone(self) -> bool:
        return self.collide <= _ALONE_COLLIDE


def _title_words(title: str) -> frozenset[str]:
    """A format's own name, less the words any number's name holds ("number", "número", "code")."""
    words = {fold_word(token).strip(".") for token in _WORDS.findall(title)}
    stop = _TITLE_STOP | {fold_word(w).rstrip("*") for w in _PERSONAL["number_words"]}
    return frozenset(w for w in words if len(w) >= 3 and w not in stop)


def _readable_layout(layout: str) -> bool:
    # a layout of nine or fewer characters split only by dashes is a phone's or an order's as often as an id's
    alnum = sum(c in "9A" for c in layout)
    return alnum >= 10 or (alnum >= 9 and bool(re.search(r"[/.]", layout)))


def _load_formats() -> dict[tuple[int, bool], tuple[_Format, ...]]:
    import tomllib

    with open(HERE / "stdnum.toml", "rb") as handle:
        entries = tomllib.load(handle)["format"]
    by_length: dict[int, list[_Format]] = {}
    for entry in entries:
        found = _Format(
            module=entry["module"],
            bank=bool(entry.get("bank")),
            collide=float(entry["collide"]),
            words=_title_words(entry["title"]),
            layouts=frozenset(layout for layout in entry.get("layouts", ()) if _readable_layout(layout)),
        )
        for length in entry["lengths"]:
            by_length.setdefault(length, []).append(found)
    # A format whose examples hold a letter (a check letter: "131052-308T") takes all-digit values too, and
    # one whose examples are all digits may end in a letter ("76086420-K"): so by length alone. Formats refused
    # alone first, then the others by how rarely a random value passes.
    ordered = {
        length: tuple(sorted(dict.fromkeys(formats), key=lambda f: (f.collide, f.bank)))
        for length, formats in by_length.items()
    }
    return {(length, digits): formats for length, formats in ordered.items() for digits in (True, False)}


_FORMATS = _load_formats()


def _stdnum_check(module: str, value: str) -> bool:
    try:
        return bool(importlib.import_module(f"stdnum.{module}").is_valid(value))
    except Exception:  # a checker that cannot read the value: not this format
        return False


def _layout_of(value: str) -> str:
    return re.sub(r"[A-Za-z]", "A", re.sub(r"\d", "9", value.upper()))


class _Line:
    """What a line says around its numbers, each part read once and only when a format asks."""

    def __init__(self, v: View) -> None:
        self.v = v

    @cached_property
    def id_word(self) -> bool:
        return _ID_GATE.open(self.v) and _id_word_in(self.v.folded)

    @cached_property
    def number_word(self) -> bool:
        return _NUMBER_GATE.open(self.v) and bool(_NUMBER_WORDS.search(self.v.folded))

    @cached_property
    def words(self) -> frozenset[str]:
        found = _WORDS.findall(self.v.folded)
        return frozenset(found) | frozenset(w.strip(".") for w in found)

    def reason_for(self, found: _Format, layout: str, compact: str, whole: bool) -> bool:
        """Whether the line gives a reason to read a value of this shape as this format. ``whole``: the value
        is the whole number written, not a part of a longer one."""
        if found.alone or (found.collide <= _LAYOUT_COLLIDE and layout in found.layouts):
            return True
        if self.id_word or not found.words.isdisjoint(self.words):
            return True
        return (
            whole
            and found.collide <= _NUMBER_WORD_COLLIDE
            and (len(compact) >= 10 or (len(compact) == 9 and not compact.isdigit()))
            and self.number_word
            and not _PHONE_SHAPE.match(compact)
            and not CONTACT_WORDS.search(self.v.folded)  # "number ... pe call karna": a phone number
        )


# An order, booking or ticket word right before an id word: "order id", "booking ID", "ticket no", not a person's.
_LABEL_BEFORE_ID_WORD = re.compile(
    rf"(?:{cue_pattern(_PERSONAL['not_an_id_before'] + vocabulary().credentials['not_a_code_before'])})\W{{0,3}}$"
)


def said_of_a_person(pattern: re.Pattern, folded: str) -> bool:
    """A match of an id word's pattern that no order, booking or ticket word before it makes another thing's
    id ("booking ID", "order id")."""
    return any(
        not _LABEL_BEFORE_ID_WORD.search(folded, max(0, match.start() - 30), match.start())
        for match in pattern.finditer(folded)
    )


def _id_word_in(folded: str) -> bool:
    return said_of_a_person(_ID_WORDS, folded)


def _not_an_id_here(before: str) -> bool:
    """An order, invoice, tracking or phone word just before the value (and no id word), or a ``+``."""
    if before.rstrip().endswith("+"):
        return True
    if _id_word_in(before):
        return False
    return bool(_NOT_AN_ID_BEFORE.search(before) or CONTACT_WORDS.search(before))


def _windows(groups: list[str]):
    """Every run of one to five consecutive groups: (first, end) indexes."""
    for i in range(len(groups)):
        for j in range(i + 1, min(len(groups), i + 5) + 1):
            yield i, j


def _value_refusal(line: _Line, value: str, compact: str, whole: bool) -> str | None:
    formats = _FORMATS.get((len(compact), compact.isdigit()))
    if not formats:
        return None
    layout = _layout_of(value)
    for found in formats:
        if line.reason_for(found, layout, compact, whole) and (
            _stdnum_check(found.module, compact) or (value != compact and _stdnum_check(found.module, value))
        ):
            return "bank_account" if found.bank else "government_id"
    return None


# A date as people write it ("30/10/2026", "10/30/2026", "2026-10-30", "01.11.26"): never an id.
_DATE_WRITTEN = re.compile(
    r"(?:0?[1-9]|[12]\d|3[01])[./\-](?:0?[1-9]|[12]\d|3[01])[./\-](?:19|20)?\d\d|(?:19|20)\d\d[./\-](?:0?[1-9]|1[0-2])[./\-](?:0?[1-9]|[12]\d|3[01])"
)


def _candidate_refusal(line: _Line, match: re.Match) -> str | None:
    written = match.group(0)
    if _DATE_WRITTEN.fullmatch(written):
        return None
    groups = _SEPARATOR_RUN.split(written)
    if sum(len(g) for g in groups) < 7 or _UUID_SHAPE.search(written):
        return None  # too short for any format; a UUID is an object's id, not a person's
    text = line.v.surface
    if _not_an_id_here(fold_word(text[max(0, match.start() - 30) : match.start()])):
        return None
    offsets = [m.start() for m in _ALNUM_RUN.finditer(written)]
    for i, j in _windows(groups):
        compact = "".join(groups[i:j]).upper()
        if len(compact) < 7:
            continue
        value = written[offsets[i] : offsets[j - 1] + len(groups[j - 1])]
        found = _value_refusal(line, value, compact, whole=(i, j) == (0, len(groups)))
        if found:
            return found
    return None


def stdnum_id_in(v: View) -> str | None:
    """``"government_id"`` or ``"bank_account"`` for a value anywhere in the line that passes the check of a
    python-stdnum format the line gives a reason to read it as (see the module docstring), or ``None``."""
    line = _Line(v)
    for match in _ID_CANDIDATE.finditer(v.surface):
        found = _candidate_refusal(line, match)
        if found:
            return found
    return None

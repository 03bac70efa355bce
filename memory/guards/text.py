"""One normaliser for every guard (R7, R13): the same text, seen three ways.

A guard must not be beaten by the shape of a line: full-width or Devanagari digits, a zero-width
space inside a card number, ``4242/4242/4242/4242``, ``p@ssw0rd``, ``p a s s w o r d`` or digits
written as words. Every check in ``memory.guards`` reads one of the views built here, once per line:

``surface``
    Unicode NFKC; zero-width, bidi and soft-hyphen characters removed; every script's decimal digits
    turned into ASCII; every dash into ``-``; whitespace (no-break spaces included) collapsed. Case and
    punctuation are kept: shapes that need them (key prefixes, id formats, proper names) read this.
``digits``
    ``surface`` with runs of three or more number words (English and the other supported languages:
    Spanish, French, German, Portuguese, Hindi in Devanagari and romanised) turned into digits, and
    separators (space, ``.``, ``-``, ``/``, ``_``, ``|``, ``\\``, repeated) between two digits removed.
    Number checks (cards, ids, account numbers) read this.
``plain``
    ``surface`` with number words as digits and Latin accents removed, case kept. The vocabulary's
    patterns (which may need case, as for proper names) read this.
``folded``
    The same lower-cased (casefold) with Latin accents removed, spaced-out letters joined
    (``p a s s w o r d``) and leetspeak undone (``p@ssw0rd``) in any word that becomes a known keyword.
    Keyword checks (credentials, excluded categories) read this.

Beside the views, the small text helpers every reader of people's words shares, each written once:
``sentences`` (a text cut at its sentence ends), ``words`` (a text's words, less a caller's stop
words), and the writer's "(said once, 3 Nov)" note (``is_said_once``, ``without_said_once``).

Pure Python, no Django; everything is compiled once at import. A 300-character line costs tens of
microseconds here.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import groupby
from operator import itemgetter

__all__ = [
    "UNSPACED",
    "View",
    "view",
    "surface",
    "plain",
    "fold_word",
    "WORD_START",
    "WORD_END",
    "register_keywords",
    "SENTENCE_END",
    "sentences",
    "words",
    "SAID_ONCE",
    "is_said_once",
    "without_said_once",
]

# Characters that change nothing a person reads but break a match: zero-width space / joiners,
# word joiner, BOM, soft hyphen, Mongolian vowel separator, bidi marks and embeddings.
_INVISIBLE = dict.fromkeys(
    map(
        ord,
        "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u200e\u200f"
        "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u034f"
        # variation selectors and the combining keycap: "4\ufe0f\u20e3" is the digit 4
        "\ufe0e\ufe0f\u20e3",
    ),
    None,
)


def _digit_table() -> dict[int, str]:
    table: dict[int, str] = {}
    for code in range(0x80, sys.maxunicode + 1):
        char = chr(code)
        if unicodedata.category(char) == "Nd":
            table[code] = str(unicodedata.decimal(char))
    # Dashes of every kind (and the minus sign) read as "-".
    for code in range(0x80, 0x10000):
        if unicodedata.category(chr(code)) == "Pd":
            table[code] = "-"
    table[0x2212] = "-"
    return table


_TABLE = {**_digit_table(), **_INVISIBLE}
assert min(_TABLE) >= 0x80  # an ASCII line is never changed by the table (surface skips it)

# Word edges that also hold for Devanagari, whose vowel signs are not \w to Python's re.
WORD_START = r"(?<![\w\u0900-\u0963\u0966-\u097F])"
WORD_END = r"(?![\w\u0900-\u0963\u0966-\u097F])"

# Number words, digit by digit. A run of three or more of them reads as digits
# ("four two four two ..." is a card, "the code was four eight two nine" an OTP).
_NUMBER_WORDS: dict[str, str] = {}
for _digit, _words in enumerate(
    (
        # English, Spanish, French, German, Portuguese, Hindi (romanised), Hindi (Devanagari)
        "zero oh nought nil cero zéro null zero shunya sunya shoonya शून्य",
        "one uno un une eins ein um uma ek एक",
        "two dos deux zwei zwo dois duas do दो",
        "three tres trois drei três teen tin तीन",
        "four cuatro quatre vier quatro char chaar चार",
        "five cinco cinq fünf funf paanch panch पांच पाँच",
        "six seis six sechs chhe chhah che छह छः छह",
        "seven siete sept sieben sete saat सात",
        "eight ocho huit acht oito aath aat आठ",
        "nine nueve neuf neun nove nau नौ",
    )
):
    for _word in _words.split():
        _NUMBER_WORDS.setdefault(_word, str(_digit))
_NUMBER_WORD = "|".join(sorted(map(re.escape, _NUMBER_WORDS), key=len, reverse=True))
_NUMBER_RUN = re.compile(rf"{WORD_START}(?:(?:{_NUMBER_WORD})[\s,\-]+){{2,}}(?:{_NUMBER_WORD}){WORD_END}", re.I)
_ONE_NUMBER_WORD = re.compile(rf"{WORD_START}(?:{_NUMBER_WORD}){WORD_END}", re.I)

# Separators inside a number: "4242 4242", "4242.4242", "4242 - 4242", "4242/4242", "4242_4242".
_NUMBER_SEPARATOR = re.compile(r"(?<=\d)(?:[\s.\-/_|\\]|,(?=\d))+(?=\d)")

_SPACED_LETTERS = re.compile(r"(?<![^\W\d_])(?:[^\W\d_][ .\-_*]){2,}[^\W\d_](?![^\W\d_])")
# What every run of spaced-out letters holds ("p a s s": a letter between two separators), found by a scan that
# jumps from separator to separator: a line without one is not searched for the runs.
_SPACED_LETTER = re.compile(r"[ .\-_*][^\W\d_][ .\-_*]")
_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "!": "i",
        "|": "l",
        "3": "e",
        "4": "a",
        "@": "a",
        "5": "s",
        "$": "s",
        "7": "t",
        "8": "b",
        "9": "g",
        "+": "t",
    }
)
_LEET_ALT = str.maketrans({"1": "l"})
# A look-alike digit or symbol beside a letter ("p@ss", "s3cret"), found from the look-alike (a scan that jumps
# between them, not a test at every letter).
_LEET_NEIGHBOURS = re.compile(r"[0134578!|@$9+](?:(?<=[^\W\d_][0134578!|@$9+])|(?=[^\W\d_]))")
_LEETY_TOKEN = re.compile(r"\S*(?:[^\W\d_][0134578!|@$9+]|[0134578!|@$9+][^\W\d_])\S*")
# Latin combining accents, and the Devanagari nukta ("डायबिटीज़" and "डायबिटीज" are one word to a reader).
_COMBINING_ACCENT = re.compile("[\u0300-\u036f\u093c]+")
_KEYWORDS: set[str] = set()
_STEMS: list[tuple[str, ...]] = [()]


def register_keywords(words, stems=()) -> None:
    """The single words (and word stems) a folded leet token may become (filled by the vocabulary)."""
    _KEYWORDS.update(words)
    _STEMS[0] = tuple(sorted(set(_STEMS[0]) | set(stems)))


def _strip_accents(text: str) -> str:
    # Only Latin combining accents and the nukta: Devanagari vowel signs are letters to a reader and stay.
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _COMBINING_ACCENT.sub("", unicodedata.normalize("NFD", text)))


@lru_cache(maxsize=4096)
def fold_word(word: str) -> str:
    """Lower-case, Latin accents off: how vocabulary words are compared (and compiled)."""
    return _strip_accents(word.casefold()).replace("ß", "ss").replace("œ", "oe").replace("æ", "ae")


def surface(text: str) -> str:
    """NFKC, invisible characters removed, digits ASCII, dashes ``-``, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text or "")
    if not text.isascii():
        text = text.translate(_TABLE)
    return " ".join(text.split())  # what collapsing runs of \s and stripping gives, without a regex


def plain(text: str) -> str:
    """Latin accents off, case kept: what the vocabulary's patterns read."""
    return _strip_accents(text).replace("ß", "ss")


def _number_word_key(word: str) -> str:
    # The pattern matches without case the way the regex engine compares ("EİGHT", "ſeven", the
    # Kelvin sign), and str.lower() does not land on the same letters for those: fold them back.
    return word.lower().replace("\u0307", "").replace("\u017f", "s").replace("\u212a", "k")


def _words_to_digits(match: re.Match) -> str:
    digits = [_NUMBER_WORDS.get(_number_word_key(word)) for word in _ONE_NUMBER_WORD.findall(match.group(0))]
    if None in digits:  # a spelling the table does not hold: the words stay as they were written
        return match.group(0)
    return "".join(digit for digit in digits if digit is not None)


def _unleet(match: re.Match) -> str:
    token = match.group(0)
    if token.isalpha() or not any(c in "0134578!|@$9+" for c in token):
        return token
    core = token.strip(".,;:!?\"'()[]{}")
    for table in (_LEET, _LEET_ALT):
        plain = core.translate(table)
        if plain in _KEYWORDS or (_STEMS[0] and plain.isalpha() and plain.startswith(_STEMS[0])):
            return token.replace(core, plain)
    return token


_VIEW_WORD = re.compile(r"[\w\u0900-\u0963\u0966-\u097F]+")
_FIRST_TWO = itemgetter(slice(0, 2))
# Scripts written without spaces between words, or with particles joined to them (Chinese, Japanese, Korean,
# Arabic, Thai): their words are matched anywhere, not between word edges.
UNSPACED = "\u0600-\u06ff\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_UNSPACED = re.compile(f"[{UNSPACED}]")


def _may_spell_a_number(text: str) -> bool:
    """Whether the text holds three words of the number table (``_NUMBER_RUN`` needs three in a row): a
    look at its lower-cased words, where searching the table's alternation at every position costs tens of
    µs a line. The letters the pattern matches without case that ``lower`` does not fold ("EİGHT", "ſeven")
    are folded first; a word the table does not hold ("eıght") is left as written by ``_words_to_digits``."""
    low = text.lower()
    if not low.isascii():
        low = low.replace("\u0307", "").replace("\u017f", "s")
    return sum(map(_NUMBER_WORDS.__contains__, _VIEW_WORD.findall(low))) >= 3


def _unleet_tokens(folded: str) -> str:
    """``_unleet`` on each space-separated token holding a letter beside a look-alike digit (the folded view's
    spaces are single ones): found from the neighbours, not by a token pattern tried at every position."""
    tokens = folded.split(" ")
    if len(tokens) == 1:
        return _LEETY_TOKEN.sub(_unleet, folded)
    # the tokens holding a look-alike beside a letter, by their number: one scan of the line, not one per token
    for i in {folded.count(" ", 0, match.start()) for match in _LEET_NEIGHBOURS.finditer(folded)}:
        tokens[i] = _LEETY_TOKEN.sub(_unleet, tokens[i])
    return " ".join(tokens)


@dataclass(frozen=True)
class View:
    """One line, seen three ways (see the module docstring)."""

    surface: str
    digits: str
    folded: str
    plain: str

    @cached_property
    def words(self) -> frozenset[str]:
        """The folded view's words, found once per line: every cue's prefilter reads them."""
        return frozenset(_VIEW_WORD.findall(self.folded))

    @cached_property
    def by_start(self) -> dict[str, tuple[str, ...]]:
        """The words by their first two letters: a stem or a word start is tried only on the words that begin as it
        does. (Sorted, the words that begin alike stand together.)"""
        return {start: tuple(words) for start, words in groupby(sorted(self.words), key=_FIRST_TWO)}

    @cached_property
    def starts(self) -> frozenset[str]:
        """The first two letters of the words (``by_start``'s keys)."""
        return frozenset(self.by_start)

    @cached_property
    def unspaced(self) -> bool:
        """Whether the folded view holds a letter of a script written without spaces (``UNSPACED``)."""
        return _UNSPACED.search(self.folded) is not None


@lru_cache(maxsize=2048)
def view(text: str) -> View:
    """The three views of a line, computed once (and cached: a line is often checked twice)."""
    base = surface(text)
    with_numbers = _NUMBER_RUN.sub(_words_to_digits, base) if _may_spell_a_number(base) else base
    digits = _NUMBER_SEPARATOR.sub("", with_numbers)
    folded = fold_word(with_numbers)
    if _SPACED_LETTER.search(folded):
        folded = _SPACED_LETTERS.sub(lambda m: re.sub(r"[ .\-_*]", "", m.group(0)), folded)
    if _LEET_NEIGHBOURS.search(folded):
        folded = _unleet_tokens(folded)
    return View(surface=base, digits=digits, folded=folded, plain=plain(with_numbers))


# --- Sentences, words and the said-once note --------------------------------------------------

# Where a sentence ends: the Latin marks, a semicolon, a line break, and the Devanagari danda.
SENTENCE_END = r"[.;!?\n\u0964\u0965]+"
_SENTENCE_END = re.compile(SENTENCE_END)


def sentences(text: str, *, limit: int | None = None) -> list[str]:
    """The sentences of a text, in order, as written (not stripped); blank ones dropped. `limit`
    bounds how many pieces are looked at, for text that may be long."""
    pieces = _SENTENCE_END.split(text or "")
    return [piece for piece in (pieces[:limit] if limit is not None else pieces) if piece.strip()]


# The note the writer puts on what was said once or tentatively: "Might move (said once, 3 Nov)."
SAID_ONCE = re.compile(r"\s*\(said once[^)]*\)", re.I)


def is_said_once(line: str) -> bool:
    return "(said once" in line.lower()


def without_said_once(text: str) -> str:
    """The line without its said-once note (and the space before it)."""
    return SAID_ONCE.sub("", text)


# A word: letters and digits of any script, Devanagari's vowel signs included.
_WORD = re.compile(r"[\w\u0900-\u0963\u0966-\u097F]+")


def words(text: str, *, stopwords: frozenset[str] = frozenset(), min_length: int = 1) -> list[str]:
    """The words of a text, lower-cased, in order, the said-once note left out; those in
    `stopwords` (each caller's own, which are vocabulary) or shorter than `min_length` dropped."""
    found = _WORD.findall(SAID_ONCE.sub(" ", text.lower()))
    return [word for word in found if len(word) >= min_length and word not in stopwords]

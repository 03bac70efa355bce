"""The literal prefilter (memory.guards.prefilter) may skip a pattern only on a line the pattern does not match:
checked over every eval line, in upper case and with the characters the regex engine matches without case in
ways ``str.lower`` does not ("İ", "ſ"), for the categories' patterns and for every module-level pattern put
behind it; and on the joining shapes."""

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.guards import categories, credentials, identifiers
from memory.guards.prefilter import Prefiltered, caseless, may_match, required_literals
from memory.guards.text import view

EVAL = Path(__file__).resolve().parents[1] / "eval"


def _texts() -> list[str]:
    out = []
    for path in sorted(EVAL.glob("*.jsonl")):
        for raw in path.read_text().splitlines():
            if raw.strip():
                row = json.loads(raw)
                out.extend(t for t in (row.get("text"), row.get("typed")) if isinstance(t, str))
                for chat in row.get("chats", []):
                    out.extend(turn["text"] for turn in chat.get("turns", []) if isinstance(turn.get("text"), str))
    return out


def _patterns():
    return [
        (code, pattern, literals)
        for code, rows in categories._PATTERNS.items()
        for pattern, _needs, _starts, literals, _script in rows
        if literals is not None
    ]


def test_most_category_patterns_get_a_prefilter():
    assert len(_patterns()) >= 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [("İstanbul", "istanbul"), ("ſo", "so"), ("La - France\tInsoumise", "la france insoumise"), ("A  B", "a b")],
)
def test_caseless_compares_as_the_regex_engine(text, expected):
    assert caseless(text) == expected


def test_literals_of_a_pattern():
    def groups(pattern: str, flags: int = re.I) -> set[frozenset[str]]:
        return {frozenset(group) for group in required_literals(re.compile(pattern, flags)) or ()}

    assert frozenset({"la france", "labour"}) in groups(r"\b(?:la[\s\-]+france|labour)\b")
    assert groups(r"\d+\s*mg") == {frozenset({"mg"})}  # a literal anywhere in the match, not only at its start
    assert groups(r"\b(?:a|the)\s+x") == set()  # "a" and "x" are too short to skip on
    # each alternative needs "get" or "let", then "in": two groups, each needed on its own
    assert {frozenset({"get", "let"}), frozenset({"in"})} <= groups(
        r"\d{4}\s+(?:get|let)\s+in\b|\b(?:get|let)\s+\w+\s+in\b"
    )
    assert groups(r"_*[A-Za-z]+(?i:key|token)\s*[=:]\s*\w{8,}", 0) == {
        frozenset({"key", "token"}),
        frozenset({"=", ":"}),
    }
    assert required_literals(re.compile(r"[a-z]+\d")) is None


def _prefiltered_patterns():
    return [
        (f"{module.__name__}.{name}", pattern)
        for module in (credentials, identifiers, categories)
        for name, pattern in vars(module).items()
        if isinstance(pattern, Prefiltered)
    ]


def _variants(text: str):
    for variant in (text, text.upper(), text.replace("i", "İ").replace("s", "ſ")):
        try:
            yield view(variant)
        except KeyError:
            continue  # a number word the normaliser cannot read in this variant: not the prefilter's case


def test_prefilter_never_skips_a_line_the_pattern_matches():
    texts = _texts()
    assert len(texts) > 1000
    matched = 0
    for text in texts:
        for v in _variants(text):
            low = caseless(v.plain)
            for code, pattern, literals in _patterns():
                if pattern.search(v.plain):
                    matched += 1
                    assert may_match(literals, low), (code, pattern.pattern[:80], v.plain)
    assert matched > 100


def test_module_patterns_behind_the_prefilter_find_what_they_found():
    """A pattern behind the prefilter answers as the bare pattern on every view of every eval line."""
    patterns = _prefiltered_patterns()
    assert len(patterns) >= 8
    matched = 0
    for text in _texts():
        for v in _variants(text):
            for shown in (v.surface, v.digits, v.folded, v.plain):
                for name, pattern in patterns:
                    found = pattern.pattern.search(shown)
                    matched += found is not None
                    assert bool(pattern.search(shown)) == bool(found), (name, shown)
    assert matched > 100


def test_word_and_script_gates_never_skip_a_line_the_pattern_matches():
    """The other two skips: a table's ``gate_words`` (an amount's "ahorrados") and a pattern's script (a
    Hebrew pattern on a line with no Hebrew letter). Over every eval line, a line the pattern matches passes both."""
    gated = [
        (categories._CODES[number], number, row)
        for number, row in enumerate(categories._ENTRIES)
        if row[4] is not None or row[1] is not None or row[2] is not None
    ]
    assert any(row[4] is not None for *_, row in gated) and any(row[2] is not None for *_, row in gated)
    matched = 0
    for text in _texts():
        v = view(text)
        parts = categories._LineParts(v)
        for code, number, (pattern, _needs, _starts, literals, script) in gated:
            if pattern.search(v.plain):
                matched += 1
                assert parts.may_match(number, literals), (code, pattern.pattern[:80], text)
                assert script is None or script.search(v.plain), (code, pattern.pattern[:80], text)
    assert matched > 20  # the money amounts of six languages and the Hebrew lines


# --- The guards' patterns rewritten to be found faster (a scan that jumps to a rare character, a gate before a
# costly pattern) answer exactly as the forms they replace, on any text. ---------------------------------------

_PIECES = [
    "a",
    "B",
    "z",
    "K",
    "İ",
    "ı",
    "ſ",
    "K",
    "é",
    "ß",
    "क",
    "ा",
    "中",
    "0",
    "1",
    "4",
    "9",
    "٣",
    "@",
    "$",
    "!",
    "|",
    "+",
    "_",
    ".",
    "-",
    "*",
    ",",
    "/",
    ":",
    "=",
    " ",
    "  ",
    "\u00a0",
    "\t",
    "\n",
    "p a s s",
    "P@ss",
    "s3cret",
    "Anna",
    "San ",
    "x.y",
    "12,",
    "Zx9QmW2pL7vK4tR8sY3nB6cF1hJ5dG0a",
    "12th",
    "flat5",
    "ab_c",
    " flat5",
    " h.no 4",
    " 12 Main Road",
    "hauptstrasse 5",
    "4242 4242 4242 4242",
    "O0l1",
    " DE89 3704 0044 0532 0130 00",
    "AB123456C",
    "ABCPE1234F",
    "123-45-6789",
    "RSSMRA85T10A562S",
    " j.becker, Ahornblatt9",
    " priya@example.com / Shop2024!",
    "(a_b@c.de und Xy12345",
    "1234567812345678",
]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_fast_forms_find_what_the_plain_forms_found(text):
    from memory.guards import text as normaliser

    def spans(pattern, plain: str):
        return [m.span() for m in pattern.finditer(text)] == [m.span() for m in re.finditer(plain, text)]

    assert bool(normaliser._LEET_NEIGHBOURS.search(text)) == bool(
        re.search(r"[^\W\d_][0134578!|@$9+]|[0134578!|@$9+][^\W\d_]", text)
    )
    assert bool(credentials._INNER_MARK.search(text)) == bool(re.search(r"[^\W_][._@][^\W_]", text))
    assert spans(categories._NAME_TOKEN, r"\b[A-Z][\w\-]+")
    assert " ".join(text.split()) == re.sub(r"\s+", " ", text).strip()
    if normaliser._SPACED_LETTERS.search(text):
        assert normaliser._SPACED_LETTER.search(text)
    if identifiers._SPANISH_STREET_FLOOR.search(text):
        assert identifiers._NUMBER_THEN_COMMA.search(text)
    leet_tokens = re.findall(r"\S*[0134578!|@$9+]\S*", text.casefold())
    assert leet_tokens == [token for token in text.casefold().split() if not credentials._LEET_CHARS.isdisjoint(token)]
    v = view(text)
    letter_words = {run for word in v.words for run in identifiers._NOT_A_LETTER.split(word) if run}
    assert letter_words == set(re.findall(r"(?:[^\W\d_]|[\u0900-\u0963\u0966-\u097F])+", v.folded))
    _hand_gates_hold(v)
    # a user and password pair starts no earlier than the word of the line's first "." "_" or "@"
    marks = [at for at in (text.find("."), text.find("_"), text.find("@")) if at >= 0]
    pairs = list(credentials._USER_THEN_PASSWORD.finditer(text))
    assert all(pair.start() > text.rfind(" ", 0, min(marks)) for pair in pairs) if marks else not pairs


def _hand_gates_hold(v) -> None:
    """The gates written from a pattern's shape say yes whenever the pattern finds something that counts."""
    if identifiers._ADDRESS.search(v.folded):
        assert identifiers._may_name_a_street(v), v.folded
    if any(len("".join(identifiers._groups(m.group(0)))) >= 13 for m in identifiers._GROUPED.finditer(v.plain)):
        assert identifiers._CARD_LENGTH_RUN.search(v.plain), v.plain
    if identifiers._IBAN_SHAPE.search(v.surface):
        assert identifiers._IBAN_START.search(v.surface), v.surface
    for text in {v.surface, v.digits}:
        for number, rule in enumerate(identifiers.RULES):
            if rule.shape.search(text):
                assert identifiers._any_shape((number,)).search(text), (rule.name, text)
    sixteen = [m.group(0) for m in re.finditer(r"\d+", v.digits) if len(m.group(0)) == 16]
    assert sixteen == [m.group(0) for m in identifiers._SIXTEEN_DIGITS.finditer(v.digits)]


def test_hand_gates_hold_on_every_eval_line():
    for text in _texts():
        for v in _variants(text):
            _hand_gates_hold(v)

"""The categories' literal prefilter (memory.guards.vocabulary.simple.needed_literals) may skip a pattern only on a
line the pattern does not match: checked over every eval line, in upper case and with the characters the
regex engine matches without case in ways ``str.lower`` does not ("İ", "ſ"), and on the joining shapes."""

import json
from pathlib import Path

import pytest

from memory.guards import categories
from memory.guards.text import view
from memory.guards.vocabulary.simple import caseless, needed_literals

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
    import re

    assert set(needed_literals(re.compile(r"\b(?:la[\s\-]+france|labour)\b", re.I))) == {"la france", "labour"}
    assert needed_literals(re.compile(r"\d+\s*mg", re.I)) is None  # no literal start: always searched
    assert needed_literals(re.compile(r"\b(?:a|the)\s+x", re.I)) is None  # "a" is too short to skip on


def test_prefilter_never_skips_a_line_the_pattern_matches():
    texts = _texts()
    assert len(texts) > 1000
    matched = 0
    for text in texts:
        for variant in (text, text.upper(), text.replace("i", "İ").replace("s", "ſ")):
            try:
                plain = view(variant).plain
            except KeyError:
                continue  # a number word the normaliser cannot read in this variant: not the prefilter's case
            low = caseless(plain)
            for code, pattern, literals in _patterns():
                if pattern.search(plain):
                    matched += 1
                    assert any(literal in low for literal in literals), (code, pattern.pattern[:80], variant)
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

"""Turn the simple alternatives of a vocabulary pattern into words (a compile-time speed-up).

Most alternatives of the categories' patterns are word lists written as regular expressions
(``\\bdiabet\\w*``, ``\\b(?:mosques?|temples?)\\b``). Searching a line for each costs a regex scan; looking a
word up in a set costs nothing. ``split_pattern`` expands every alternative made only of literals, ``\\s``,
optional characters, ``(?:a|b)`` groups and a final ``\\w*`` into the words it matches, and leaves the rest
as a (smaller) pattern. What a line is refused for does not change: the words are matched whole on the
folded view, as the regex matched them on the plain one.
"""

from __future__ import annotations

import _sre
import itertools
import re
from re import _constants as _sre_c  # type: ignore[attr-defined]  # CPython's regex parser: typeshed has no stubs
from re import _parser as _sre_parse  # type: ignore[attr-defined]  # (as _sre and re._casefix, mypy.ini)
from re._casefix import _EXTRA_CASES

_MAX_EXPANSIONS = 64


class _Unsupported(Exception):
    pass


def split_alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a regex (``|`` outside groups and classes)."""
    parts, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


# The whitespace and dash atoms a vocabulary pattern writes, and what each may stand for.
_SPACE_ATOMS = (
    (r"\s+", [" "]),
    (r"\s*", [" "]),
    (r"[\s\-]?", ["", " "]),
    (r"[-\s]?", ["", " "]),
    (r"[\s-]?", ["", " "]),
)
_SHORT_ATOMS = ((r"\s?", ["", " "]), (r"\s", [" "]), (r"\-", ["-"]))


def _expand_group(s: str, i: int) -> tuple[list[str], int]:
    """A ``(?:...|...)`` group from just after its opening: every alternative's strings, and the index after it."""
    options: list[str] = []
    while True:
        option, i = _expand(s, i, stop=")|")
        options.extend(option)
        if i >= len(s):
            raise _Unsupported
        if s[i] == "|":
            i += 1
            continue
        return options, i + 1  # past ")"


def _piece(s: str, i: int) -> tuple[list[str], int]:
    """The strings the atom at s[i] may stand for, and the index after it."""
    for atom, strings in _SPACE_ATOMS + _SHORT_ATOMS:
        if s.startswith(atom, i):
            return strings, i + len(atom)
    if s.startswith("(?:", i):
        return _expand_group(s, i + 3)
    c = s[i]
    if c == "[" and "]" in s[i:]:
        end = s.index("]", i)
        chars = s[i + 1 : end]
        if not chars or not all(ch.isalpha() for ch in chars):
            raise _Unsupported
        return list(chars), end + 1
    if c.isalnum() or c in " '-":
        return [c], i + 1
    raise _Unsupported


def _expand(s: str, i: int = 0, stop: str = "") -> tuple[list[str], int]:
    """Expand s[i:] up to an unmatched ``)`` or ``|`` (when ``stop``); returns (strings, index)."""
    results = [""]
    while i < len(s):
        if stop and s[i] in ")|":
            return results, i
        piece, i = _piece(s, i)
        if i < len(s) and s[i] == "?":
            piece, i = [""] + piece, i + 1
        results = [a + b for a, b in itertools.product(results, piece)]
        if len(results) > _MAX_EXPANSIONS:
            raise _Unsupported
    return results, i


def words_of(alternative: str) -> list[str] | None:
    """The words a simple alternative matches (a stem ends in ``*``), or ``None`` if it is not simple."""
    alt = alternative.strip()
    if not alt.startswith(r"\b"):
        return None
    body = alt[2:]
    stem = False
    if body.endswith(r"\b"):
        body = body[:-2]
    elif body.endswith(r"\w*"):
        body, stem = body[:-3], True
    else:
        stem = True  # no word edge at the end: "\bstress" matches "stressful" too
    if "(?-i" in body or "(?=" in body or "(?!" in body or "(?<" in body:
        return None
    try:
        expanded, end = _expand(body)
    except _Unsupported:
        return None
    if end != len(body):
        return None
    out = []
    for word in expanded:
        word = " ".join(word.replace("-", " ").split())
        if not word:
            return None
        if stem and " " in word:
            return None  # a stem on a phrase: leave it to the regex
        out.append(word + ("*" if stem else ""))
    return out


def split_pattern(pattern: str) -> tuple[list[str], str | None]:
    """(words, the rest of the pattern or None)."""
    words, rest = [], []
    for alternative in split_alternatives(pattern):
        found = words_of(alternative)
        if found is None:
            rest.append(alternative)
        else:
            words.extend(found)
    return words, "|".join(rest) if rest else None


def _group_end(alt: str) -> int:
    """The index of the ``)`` closing the group ``alt`` opens (``len(alt)`` when none does)."""
    depth, i = 0, 0
    while i < len(alt):
        if alt[i] == "\\":
            i += 2
            continue
        if alt[i] == "(":
            depth += 1
        elif alt[i] == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return i


def _group_prefixes(alt: str) -> set[str] | None:
    i = _group_end(alt)
    if i >= len(alt) or alt[i + 1 : i + 2] in ("?", "*"):
        return None
    try:
        expanded, _ = _expand(alt[: i + 1])
    except _Unsupported:
        return None
    words = {word.replace("-", " ").split()[0] if word.strip() else "" for word in expanded}
    return None if "" in words else {w.lower() for w in words}


def _first_prefixes(alternative: str) -> set[str] | None:
    """The words one of which must start a match of the alternative (as prefixes), or ``None``."""
    alt = alternative.strip()
    if alt.startswith(r"\b"):
        alt = alt[2:]
    if alt.startswith("(?:"):
        return _group_prefixes(alt)
    prefix = ""
    for c in alt:
        if c.isalpha() or c == "'":
            prefix += c
            continue
        if c in "?*{" and prefix:
            prefix = prefix[:-1]  # the last letter is optional
        break
    return {prefix.lower()} if len(prefix) >= 2 else None


def first_prefixes(pattern: str) -> tuple[str, ...] | None:
    """For a cheap skip: a match of the pattern starts with a word beginning with one of these."""
    out: set[str] = set()
    for alternative in split_alternatives(pattern):
        found = _first_prefixes(alternative)
        if not found:
            return None
        out |= found
    return tuple(sorted(out))


# --- A literal prefilter for any compiled pattern (a run-time speed-up that changes no answer) ---------
#
# ``needed_literals(pattern)`` reads the compiled pattern's own parse and returns strings one of which every
# match starts with, in the case-less form ``caseless(text)`` gives; ``None`` when it cannot say. A line whose
# caseless form holds none of them cannot match, so the regex is not run. Case is compared as the regex engine
# compares it under IGNORECASE (its simple lower-case mapping and its equivalences such as "s"/"ſ", "i"/"ı"),
# one character for one, and runs of whitespace and "-" are one space, so the test never says no to a line the regex
# would match.

# The regex engine's own parser and case tables (CPython 3.11's re package), so the prefilter reads a
# pattern exactly as the engine does.
_EQUIVALENT: dict[int, int] = {}
for _code, _others in _EXTRA_CASES.items():
    _group = min((_code, *_others))
    for _member in (_code, *_others):
        _EQUIVALENT[_member] = min(_EQUIVALENT.get(_member, _group), _group)


def _caseless_char(code: int) -> str:
    if chr(code).isspace() or code == 0x2D:
        return " "  # whitespace and "-" are one class here: patterns join words with [\s\-]+
    low = _sre.unicode_tolower(code)
    return chr(_EQUIVALENT.get(low, low))


class _CaselessTable(dict):
    def __missing__(self, code: int) -> str:
        value = self[code] = _caseless_char(code)
        return value


_TABLE = _CaselessTable()
_SPACE_RUN = re.compile(" {2,}")
_MIN_LITERAL = 2


def caseless(text: str) -> str:
    """The text with each character as the regex engine compares it without case, spaces collapsed."""
    out = text.translate(_TABLE)
    return _SPACE_RUN.sub(" ", out) if "  " in out else out


def _append(prefix: str, ch: str) -> str:
    # In the caseless text a run of whitespace is one space, so a space after a space adds nothing.
    return prefix if ch == " " and prefix.endswith(" ") else prefix + ch


def _is_space(arg) -> bool:
    return bool(arg) and all(
        (o is _sre_c.CATEGORY and a is _sre_c.CATEGORY_SPACE) or (o is _sre_c.LITERAL and a == 0x2D) for o, a in arg
    )


def _literals(items, prefixes: set[str]) -> set[str]:
    """Extend each prefix through ``items`` (a parsed sequence) as far as what must match is literal."""
    for op, arg in items:
        if op in (_sre_c.AT, _sre_c.ASSERT, _sre_c.ASSERT_NOT):
            continue  # zero width
        if op is _sre_c.LITERAL:
            prefixes = {_append(p, _caseless_char(arg)) for p in prefixes}
            continue
        if op is _sre_c.IN and _is_space(arg):
            prefixes = {_append(p, " ") for p in prefixes}  # \s: one space (a run of them is one space)
            continue
        if op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT):
            low, _high, item = arg
            if low >= 1 and len(item) == 1 and item[0][0] is _sre_c.IN and _is_space(item[0][1]):
                prefixes = {_append(p, " ") for p in prefixes}  # \s+
                continue
            return prefixes
        if op is _sre_c.SUBPATTERN:
            return _literals(arg[-1], prefixes)
        if op is _sre_c.BRANCH:
            out: set[str] = set()
            for alternative in arg[1]:
                out |= _literals(alternative, prefixes)
            return out
        return prefixes
    return prefixes


def needed_literals(pattern: re.Pattern) -> tuple[str, ...] | None:
    """Strings (caseless) one of which starts every match of ``pattern``, or ``None``."""
    try:
        parsed = _sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - anything unusual: no prefilter
        return None
    if pattern.flags & (re.VERBOSE | re.LOCALE):
        return None
    found = _literals(list(parsed), {""})
    if not found or any(len(p.strip()) < _MIN_LITERAL for p in found):
        return None
    # A literal that holds another is redundant: keep the shortest.
    kept = sorted(found, key=len)
    out: list[str] = []
    for p in kept:
        if not any(q in p for q in out):
            out.append(p)
    return tuple(out)

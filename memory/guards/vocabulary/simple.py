"""Turn the simple alternatives of a vocabulary pattern into words (a compile-time speed-up).

Most alternatives of the categories' patterns are word lists written as regular expressions
(``\\bdiabet\\w*``, ``\\b(?:mosques?|temples?)\\b``). Searching a line for each costs a regex scan; looking a
word up in a set costs nothing. ``split_pattern`` expands every alternative made only of literals, ``\\s``,
optional characters, ``(?:a|b)`` groups and a final ``\\w*`` into the words it matches, and leaves the rest
as a (smaller) pattern. What a line is refused for does not change: the words are matched whole on the
folded view, as the regex matched them on the plain one.
"""

from __future__ import annotations

import itertools

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

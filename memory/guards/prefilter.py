"""A literal prefilter for any compiled pattern (a run-time speed-up that changes no answer).

Most of a guard's cost is regex scans of a line that cannot match: a pattern that needs "=" on a line without
one, a category phrase on a line that never says it. ``required_literals(pattern)`` reads the compiled pattern's
own parse and returns groups of strings: every match of the pattern holds one string of each group (the literal
runs a match must pass through, at its start or anywhere after), in the case-less form ``caseless(text)`` gives;
``None`` when it cannot say. A text whose caseless form misses a whole group cannot match, so the regex is not
run (``may_match``); ``prefiltered(pattern)`` is the pattern with that test before every scan.

Case is compared as the regex engine compares it under IGNORECASE (its simple lower-case mapping and its
equivalences such as "s"/"ſ", "i"/"ı"), one character for one, and runs of whitespace and "-" are one space, so
the test never says no to a text the regex would match, whatever the pattern's flags.
"""

from __future__ import annotations

import _sre
import re
from collections.abc import Iterator
from functools import lru_cache
from re import _constants as _sre_c  # type: ignore[attr-defined]  # CPython's regex parser: typeshed has no stubs
from re import _parser as _sre_parse  # type: ignore[attr-defined]  # (as _sre and re._casefix, mypy.ini)
from re._casefix import _EXTRA_CASES

__all__ = ["Prefiltered", "caseless", "caseless_of_line", "may_match", "prefiltered", "required_literals"]

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


def caseless(text: str) -> str:
    """The text with each character as the regex engine compares it without case, spaces collapsed."""
    out = text.translate(_TABLE)
    return _SPACE_RUN.sub(" ", out) if "  " in out else out


# The few texts of the line being checked (its views), each made caseless once for every pattern that reads it
# (``caseless_of_line.cache_clear()`` forgets them: the benchmark times every call as a new line).
caseless_of_line = lru_cache(maxsize=16)(caseless)

# A group is worth testing when each of its strings is two characters or more, or one symbol ("=", "@", ":"), and
# it is short enough that testing it costs less than the scan it may save.
_MIN_LITERAL = 2
_MAX_GROUP = 48
_MAX_GROUPS = 3


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


def _usable(group: frozenset[str]) -> bool:
    if not group or len(group) > _MAX_GROUP:
        return False
    for string in group:
        core = string.strip()
        if len(core) < _MIN_LITERAL and (not core or core.isalnum()):
            return False
    return True


def _strength(group: frozenset[str]) -> tuple[int, int]:
    """Longer strings first (rarer in a line), then fewer of them (cheaper to test)."""
    return min(len(string.strip()) for string in group), -len(group)


def _groups(items) -> list[frozenset[str]]:
    """Every group a match of the parsed sequence ``items`` must hold one string of."""
    items = list(items)
    found: list[frozenset[str]] = []
    for i, (op, arg) in enumerate(items):
        if not (op is _sre_c.LITERAL and i and items[i - 1][0] is _sre_c.LITERAL):  # a literal run's start
            starts = frozenset(_literals(items[i:], {""}))
            if _usable(starts):
                found.append(starts)
        if op is _sre_c.SUBPATTERN:
            found += _groups(arg[-1])
        elif op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT, _sre_c.POSSESSIVE_REPEAT) and arg[0] >= 1:
            found += _groups(arg[2])  # repeated at least once
        elif op is _sre_c.ATOMIC_GROUP:
            found += _groups(arg)
        elif op is _sre_c.BRANCH:
            found += _either(arg[1])
        elif op is _sre_c.IN and arg and all(o is _sre_c.LITERAL for o, _ in arg):
            chars = frozenset(_caseless_char(a) for _, a in arg)  # one of a few characters ("[=:]")
            if _usable(chars):
                found.append(chars)
    return found


def _either(alternatives) -> list[frozenset[str]]:
    """A match takes one alternative, so holds a group every alternative needs, and one string of any union that
    takes a group from each alternative: here the strongest of each, and the last of each (the words a phrase ends
    on), when every alternative has one."""
    groups = [_groups(alternative) for alternative in alternatives]
    if not all(groups):
        return []
    found = set(groups[0]).intersection(*groups[1:])
    found.add(frozenset().union(*(max(own, key=_strength) for own in groups)))
    found.add(frozenset().union(*(own[-1] for own in groups)))
    return [group for group in found if _usable(group)]


def required_literals(pattern: re.Pattern) -> tuple[tuple[str, ...], ...] | None:
    """Groups of strings (caseless), strongest first: every match of ``pattern`` holds one string of each group.
    ``None`` when no group is worth testing."""
    if pattern.flags & re.LOCALE:
        return None
    try:
        parsed = _sre_parse.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - anything unusual: no prefilter
        return None
    kept: list[frozenset[str]] = []
    # strongest first, ties in the groups' own order (the same groups in every process)
    for group in sorted(set(_groups(list(parsed))), key=lambda group: (_strength(group), sorted(group)), reverse=True):
        if not any(stronger <= group for stronger in kept):  # a group holding a kept one adds nothing
            kept.append(group)
    return tuple(tuple(sorted(group, key=lambda string: (len(string), string))) for group in kept[:_MAX_GROUPS]) or None


def may_match(groups: tuple[tuple[str, ...], ...] | None, low: str) -> bool:
    """Whether a text whose caseless form is ``low`` holds a string of every group (``required_literals``)."""
    return groups is None or all(any(string in low for string in group) for group in groups)


class Prefiltered:
    """A compiled pattern that is not run on a text missing one of its required literals. Its methods answer as
    the pattern's do (a text that cannot match finds nothing)."""

    def __init__(self, pattern: re.Pattern, groups: tuple[tuple[str, ...], ...]) -> None:
        self.pattern = pattern
        self.groups = groups

    def _may_match(self, text: str) -> bool:
        return may_match(self.groups, caseless_of_line(text))

    def search(self, text: str, *span: int) -> re.Match | None:
        return self.pattern.search(text, *span) if self._may_match(text) else None

    def match(self, text: str, *span: int) -> re.Match | None:
        return self.pattern.match(text, *span) if self._may_match(text) else None

    def fullmatch(self, text: str, *span: int) -> re.Match | None:
        return self.pattern.fullmatch(text, *span) if self._may_match(text) else None

    def finditer(self, text: str, *span: int) -> Iterator[re.Match]:
        return self.pattern.finditer(text, *span) if self._may_match(text) else iter(())

    def findall(self, text: str, *span: int) -> list:
        return self.pattern.findall(text, *span) if self._may_match(text) else []


def prefiltered(pattern: re.Pattern) -> re.Pattern | Prefiltered:
    """The pattern behind its literal prefilter, or the pattern itself when it has none worth testing."""
    groups = required_literals(pattern)
    return Prefiltered(pattern, groups) if groups else pattern

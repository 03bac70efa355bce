"""Excluded categories by meaning (R13, R14), in every supported language.

Each category has words (looked up token by token in the folded view: a set lookup per word and per
2-4 word phrase, and a prefix test for stems, so a long list costs nothing per word) and patterns for
structure a word list cannot say (``Is Korean-American``, ``Goes to mass every Sunday``, a first name in
``Tom picks up their parcels``). Both come from ``memory/vocabulary``; the team's instructions open a
category by name (``categories_opened_by``), and only that category opens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import cast

from memory.guards.prefilter import caseless, may_match, required_literals
from memory.guards.text import View, fold_word, view
from memory.guards.vocabulary import UNSPACED, CueGate, cue_pattern, is_unspaced, vocabulary, word_alternation

_TOKEN = re.compile(r"[\w\u0900-\u0963\u0966-\u097F]+(?:'[\w]+)?")
_ARABIC = "\u0621-\u064a\u066e-\u06d3"
_ARABIC_LETTER = re.compile(f"[{_ARABIC}]")
# the particles joined before an Arabic word (and, so, with, for, like, the) and the endings after it
_ARABIC_BEFORE = "وال|بال|فال|كال|لل|ال|و|ف|ب|ل|ك"
_ARABIC_AFTER = "ة|ه|ها|هم|هن|ي|ك|كم|نا|ين|ون|ان|ات|ا|تي|ته|تها"
_MAX_PHRASE = 7
_HAS_UNSPACED = re.compile(f"[{UNSPACED}]")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _phrase_index(phrases) -> tuple[dict[str, set[str]], dict[str, tuple[int, ...]]]:
    """The one-word phrases by their word, and for each first word the lengths of the longer phrases it starts: a
    line's word is looked up once, and only the phrase lengths that exist are cut from the line."""
    words = {parts[0]: codes for parts, codes in phrases.items() if len(parts) == 1}
    lengths: dict[str, set[int]] = {}
    for parts in phrases:
        if 1 < len(parts) <= _MAX_PHRASE:
            lengths.setdefault(parts[0], set()).add(len(parts))
    return words, {first: tuple(sorted(found)) for first, found in lengths.items()}


class _WordIndex:
    """Every category's words, as sets of token tuples and a tuple of stems per category."""

    def __init__(self, words_by_code: Mapping[str, Sequence[str]]) -> None:
        self.phrases: dict[tuple[str, ...], set[str]] = {}
        self.stems: dict[str, list[str]] = {}
        # Words of unspaced scripts (Chinese, Japanese, Korean, Arabic, Thai) are found anywhere in the line.
        self.unspaced: dict[str, set[str]] = {}
        for code, words in words_by_code.items():
            for word in words:
                folded = fold_word(word.strip())
                if is_unspaced(folded):
                    self.unspaced.setdefault(folded.rstrip("*").strip(), set()).add(code)
                    continue
                stem = folded.endswith("*")
                parts = tuple(_tokens(folded.rstrip("*")))
                if not parts:
                    continue
                if stem and len(parts) == 1:
                    self.stems.setdefault(code, []).append(parts[0])
                    continue
                self.phrases.setdefault(parts, set()).add(code)
        # a stem's codes, and the stems by their first two letters: a token is tested against the few stems
        # that start as it does, not against all of them
        self.stem_codes: dict[str, set[str]] = {}
        for code, code_stems in self.stems.items():
            for word_stem in code_stems:
                self.stem_codes.setdefault(word_stem, set()).add(code)
        by_start: dict[str, list[str]] = {}
        for word_stem in self.stem_codes:
            if len(word_stem) < 2:
                raise ValueError(f"a vocabulary stem needs two letters or more: {word_stem!r}*")
            by_start.setdefault(word_stem[:2], []).append(word_stem)
        self.stems_by_start = {start: tuple(stems) for start, stems in by_start.items()}
        self.words, self.longer = _phrase_index(self.phrases)
        # Arabic is written with spaces, but with particles joined before a word ("لأمي") and endings after it
        # ("مكتئبة"): a word there is found between those, not inside another word ("أمي" in "أمين", "جدي" in
        # "جديد"). The other unspaced scripts (Chinese, Japanese, Korean, Thai) anywhere.
        arabic = [word for word in self.unspaced if _ARABIC_LETTER.search(word)]
        others = [word for word in self.unspaced if not _ARABIC_LETTER.search(word)]
        alternatives = []
        if arabic:
            alternatives.append(
                f"(?<![{_ARABIC}])(?:{_ARABIC_BEFORE})?(?P<arabic>{word_alternation(arabic)})(?:{_ARABIC_AFTER})?(?![{_ARABIC}])"
            )
        if others:
            alternatives.append(f"(?:{word_alternation(others)})")
        self.unspaced_words = re.compile("|".join(alternatives) or "(?!)")

    def codes_in(self, folded: str) -> set[str]:
        # "their mother's house" holds "their mother": a possessive's "'s" is not part of the word
        tokens = _tokens(folded)
        if "'s" in folded:
            tokens = [token[:-2] if token.endswith("'s") else token for token in tokens]
        found = self._unspaced_codes(folded) if _HAS_UNSPACED.search(folded) else set()
        words = set(tokens)
        for word in words & self.words.keys():
            found |= self.words[word]
        for i, token in enumerate(tokens):
            for n in self.longer.get(token, ()):
                if i + n > len(tokens):
                    break
                codes = self.phrases.get(tuple(tokens[i : i + n]))
                if codes:
                    found |= codes
        for word in words:
            stems = self.stems_by_start.get(word[:2])
            if stems and word.startswith(stems):
                found.update(*(self.stem_codes[stem] for stem in stems if word.startswith(stem)))
        return found

    def _unspaced_codes(self, folded: str) -> set[str]:
        found: set[str] = set()
        for match in self.unspaced_words.finditer(folded):
            word = match.groupdict().get("arabic") or match.group(0)
            found |= self.unspaced.get(word, set()) | self.unspaced.get(re.sub(r"[\s\-]+", " ", word), set())
        return found


_PIECE_END = re.compile(r"[.;!?\u0964\u3002\uff1b\uff01\uff1f\u061f]+(?:\s|$)|[\u0964\u3002\uff1b\uff01\uff1f\u061f]")


class _Together:
    """The ``[[together.CODE]]`` rules: a word of each group in one sentence of the line. Each group is a key
    ("\x00RULE:GROUP") of the one word index, so a line is read once whatever the number of rules."""

    def __init__(self, rules_by_code) -> None:
        self.codes: list[str] = []
        self.sizes: list[int] = []
        self.keys: dict[str, list[str]] = {}
        for code, rules in rules_by_code.items():
            for groups in rules:
                rule = len(self.codes)
                self.codes.append(code)
                self.sizes.append(len(groups))
                for number, group in enumerate(groups):
                    self.keys[f"\x00{rule}:{number}"] = list(group)

    def rules_met(self, found: set[str]) -> set[int]:
        seen: dict[int, set[str]] = {}
        for key in found:
            if key.startswith("\x00"):
                rule, group = key[1:].split(":")
                seen.setdefault(int(rule), set()).add(group)
        return {rule for rule, groups in seen.items() if len(groups) == self.sizes[rule]}

    def codes_in(self, folded: str, found: set[str]) -> set[str]:
        """The codes of the rules met, given what the index found in the whole line: every group in the same
        sentence ("Always pays first; recommended by a friend" is two matters)."""
        if not self.rules_met(found):
            return set()
        codes: set[str] = set()
        for piece in _PIECE_END.split(folded):
            codes |= {self.codes[rule] for rule in self.rules_met(_INDEX.codes_in(piece))}
        return codes


_TOGETHER = _Together(vocabulary().together)
_INDEX = _WordIndex({**vocabulary().category_words, **_TOGETHER.keys})
# A pattern whose letters are all of one script that is not Latin (a Hebrew pattern whose prefixed particles
# hide its literals): a line with no letter of that script cannot match it, so it is not searched.
_SCRIPTS = tuple(
    (low, high, re.compile(f"[{chr(low)}-{chr(high)}]"))
    for low, high in ((0x0370, 0x03FF), (0x0400, 0x04FF), (0x0590, 0x05FF), (0x0600, 0x06FF), (0x0900, 0x097F))
)
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)")


def _script_gate(pattern: re.Pattern) -> re.Pattern | None:
    letters = [c for c in _ESCAPE.sub("", pattern.pattern) if c.isalpha()]
    for low, high, gate in _SCRIPTS:
        if letters and all(low <= ord(c) <= high for c in letters):
            return gate
    return None


_PATTERNS = {
    code: tuple(
        zip(
            category.patterns,
            category.needs,
            [frozenset(s) if s else None for s in category.starts],
            [required_literals(pattern) for pattern in category.patterns],
            [_script_gate(pattern) for pattern in category.patterns],
            strict=True,
        )
    )
    for code, category in vocabulary().categories.items()
}
# Every pattern by its number (``_PATTERNS``' order), and the numbers of each code's patterns.
_ENTRIES = tuple(entry for patterns in _PATTERNS.values() for entry in patterns)
_CODES = tuple(code for code, patterns in _PATTERNS.items() for _ in patterns)
_NUMBERS = {code: frozenset(n for n, of in enumerate(_CODES) if of == code) for code in _PATTERNS}


def _gate_index(position: int) -> tuple[dict[str, frozenset[int]], frozenset[int]]:
    """The patterns by each word of one of their prefilters (``needs`` at 1, ``starts`` at 2), numbered in
    ``_PATTERNS``' order, and those without that prefilter: a line looks its words up once, instead of every
    pattern testing its own set against the line."""
    by_word: dict[str, set[int]] = {}
    ungated: set[int] = set()
    for number, entry in enumerate(_ENTRIES):
        gate = cast("frozenset[str] | None", entry[position])
        if gate is None:
            ungated.add(number)
        for word in gate or ():
            by_word.setdefault(word, set()).add(number)
    return {word: frozenset(numbers) for word, numbers in by_word.items()}, frozenset(ungated)


_BY_NEED, _NO_NEED = _gate_index(1)
_BY_START, _NO_START = _gate_index(2)
# The start words by their first two letters: a line's word is tested against the few that begin as it does, not
# cut into every prefix (a start word shorter than two letters never opens a pattern: no prefix that short is read).
_STARTS_BY_TWO: dict[str, tuple[str, ...]] = {}
for _start in sorted(word for word in _BY_START if len(word) >= 2):
    _STARTS_BY_TWO[_start[:2]] = (*_STARTS_BY_TWO.get(_start[:2], ()), _start)
_PLAIN_TOKEN = re.compile(r"[\w\u0900-\u0963\u0966-\u097F]+")

# A person named by a common first name is someone else, unless the line says what the person themself is
# called ("Prefers to be called Meera").
_FIRST_NAMES: frozenset[str] = frozenset()
_OWN_NAME = re.compile(r"(?:called|named|name\s+is|goes\s+by|addressed\s+as|call\s+(?:them|me))\s*$", re.I)
# A capitalised word, found from its capital (\b before it, written as a look back).
_NAME_TOKEN = re.compile(r"[A-Z](?<!\w[A-Z])[\w\-]+")


def _load_first_names() -> frozenset[str]:
    import tomllib

    from memory.guards.text import plain
    from memory.guards.vocabulary import HERE

    with open(HERE / "lists.toml", "rb") as handle:
        return frozenset(plain(name) for name in tomllib.load(handle)["lists"]["first_name"])


_FIRST_NAMES = _load_first_names()


# A saint's name in a place's name is not a person ("San Francisco", "São Paulo", "Saint-Denis", "St. Helena").
_PLACE_SAINT = re.compile(r"(?:\b(?:San|Santa|Santo|Sao|Saint|Sainte|St|Ste|Sankt|Sant|Sveti|Sveta|Svaty)\.?[\s\-]+)$")


# Letters only Vietnamese writes: on such a line a name is read as written, since the plain view makes common
# words of it names ("Tìm" is "find", not Tim; "Hà" is not Ha).
_VIETNAMESE = re.compile(r"[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", re.I)


def _names_someone(v: View) -> bool:
    text = v.plain
    for match in _NAME_TOKEN.finditer(text):
        name = match.group(0)
        if name not in _FIRST_NAMES or _PLACE_SAINT.search(text, max(0, match.start() - 8), match.start()):
            continue
        if _OWN_NAME.search(text[: match.start()]):
            continue
        if _VIETNAMESE.search(v.surface) and not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", v.surface):
            continue
        return True
    return False


class _LineParts:
    """The parts of a line the patterns' prefilters read, each made once and only when one asks."""

    def __init__(self, v: View) -> None:
        self.v = v
        self.tokens = v.words
        self._open: frozenset[int] | None = None
        self._low: str | None = None

    @property
    def open(self) -> frozenset[int]:
        """The numbers of the patterns whose word prefilters the line passes: a word one needs, and a word
        start one needs (a match starts with one of them: a line holding none is not searched)."""
        if self._open is None:
            needed = self.tokens & _BY_NEED.keys()
            needs = _NO_NEED.union(*(_BY_NEED[word] for word in needed))
            prefixes = {
                start
                for two in self.v.starts & _STARTS_BY_TWO.keys()
                for token in self.v.by_start[two]
                for start in _STARTS_BY_TWO[two]
                if token.startswith(start)
            }
            starts = _NO_START.union(*(_BY_START[prefix] for prefix in prefixes))
            self._open = needs & starts
        return self._open

    @property
    def low(self) -> str:
        if self._low is None:
            self._low = caseless(self.v.plain)
        return self._low

    def may_match(self, number: int, literals) -> bool:
        """Whether a pattern's prefilters let it match: its words (``open``), then the literals it needs."""
        return number in self.open and may_match(literals, self.low)


def _pattern_code(parts: _LineParts, code: str) -> bool:
    """Whether one of the code's patterns matches the line: only those its word prefilters let through (one
    set intersection), then their literal and script gates, are searched."""
    holds = parts.low.__contains__
    for number in parts.open.intersection(_NUMBERS.get(code, ())):
        pattern, _needs, _starts, literals, script = _ENTRIES[number]
        # the literal gate (prefilter.may_match), written out: it runs for every open pattern of every line
        if literals and not all(any(map(holds, group)) for group in literals):
            continue
        if (script is None or script.search(parts.v.plain)) and pattern.search(parts.v.plain):
            return True
    return False


# A job said as a job ("Trabaja como abogada", "Lavora come avvocato", "avocate de métier", "works as the payroll
# administrator"): the profession is a role, which the defaults keep, not its field. Only a word (or two) that
# alone reads as one of these categories is set aside, so "works as a volunteer for the Greens" still reads as
# politics.
_ROLE_FIELDS = ("health", "legal", "authority")
_PERSONAL = vocabulary().personal
_ROLE_GATE = CueGate(_PERSONAL["role_before"] + _PERSONAL["role_after"])
_ROLE_ARTICLE = rf"(?:(?:{word_alternation(_PERSONAL['role_articles'])})(?:\s+|(?<=')))?"
_ROLE_JOB = r"[^\W\d_][\w\-]*(?:\s+[^\W\d_][\w\-]*)?"
_JOB_AFTER_CUE = re.compile(rf"(?:{cue_pattern(_PERSONAL['role_before'])})\s+{_ROLE_ARTICLE}(?P<job>{_ROLE_JOB})")
_CUE_AFTER_JOB = re.compile(cue_pattern(_PERSONAL["role_after"]))
_LAST_WORD = re.compile(rf"(?P<job>{_ROLE_JOB})\s+$")


def _cue_starts(v: View):
    """Where a role cue may start: each place a cue's first word stands in the line (a regex tried there only)."""
    text = v.folded
    for first in _ROLE_GATE.first_words.intersection(v.words):
        at = text.find(first)
        while at >= 0:
            yield at
            at = text.find(first, at + 1)


def _jobs(v: View):
    """The spans of the words a job is said with: after "trabaja como", before "de métier"."""
    text = v.folded
    for at in _cue_starts(v):
        match = _JOB_AFTER_CUE.match(text, at)
        if match:
            yield match.span("job")
        match = _CUE_AFTER_JOB.match(text, at)
        if match:
            word = _LAST_WORD.search(text, max(0, at - 40), at)
            if word:
                yield word.span("job")


# A profession said of oneself ("I'm a paralegal", "أنا محامي", "main doctor hoon"): only the words of the
# professions list, so "I'm a diabetic" stays health; with it, the workplace it is said with ("at a criminal
# defence firm", "clinic ke time") is set aside too.
_PROFESSIONS = _PERSONAL["professions"]
_PROFESSION_GATE = CueGate(_PROFESSIONS)
_PROFESSION = re.compile(cue_pattern(_PROFESSIONS))
_SELF_BEFORE = re.compile(rf"(?:{cue_pattern(_PERSONAL['self_before'])})\s*$")
_SELF_AFTER = re.compile(rf"\s*(?:{cue_pattern(_PERSONAL['self_after'])})")
_WORKPLACE = re.compile(cue_pattern(_PERSONAL["workplaces"]))


def _professions_said(v: View) -> list[tuple[int, int]]:
    if not _PROFESSION_GATE.open(v):
        return []
    text = v.folded
    spans = [
        match.span()
        for match in _PROFESSION.finditer(text)
        if _SELF_BEFORE.search(text, max(0, match.start() - 24), match.start()) or _SELF_AFTER.match(text, match.end())
    ]
    if spans:
        spans += [match.span() for match in _WORKPLACE.finditer(text)]
    return spans


# A subject studied or taught ("Estuda Ciência Política", "Teaches Religious Education"): a course, not a belief;
# a document, donation or sale named with a category's word ("salary slip", "monthly gift", "Diwali sale").
_SUBJECT_GATE = CueGate(_PERSONAL["subjects"])
_SUBJECT = re.compile(cue_pattern(_PERSONAL["subjects"]))


def _subjects_said(v: View) -> list[tuple[int, int]]:
    return [match.span() for match in _SUBJECT.finditer(v.folded)] if _SUBJECT_GATE.open(v) else []


def without_professions(v: View) -> View:
    """The line with a profession said as a job set aside, when its word alone reads as health or legal, and a
    subject studied or taught."""
    said = _professions_said(v) + _subjects_said(v)
    if not said and not _ROLE_GATE.open(v):
        return v
    text = v.folded
    jobs = list(_jobs(v)) if _ROLE_GATE.open(v) else []
    cut = sorted({span for span in jobs if category_of(view(text[span[0] : span[1]]), _ROLE_FIELDS, frozenset())})
    cut = sorted(set(cut) | set(said))
    # overlapping spans (a workplace holding a profession's word): the outer one
    merged: list[tuple[int, int]] = []
    for begin, end in cut:
        if merged and begin < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((begin, end))
    cut = merged
    if not cut:
        return v
    for begin, end in reversed(cut):
        text = text[:begin] + text[end:]
    return view(text)


def category_of(v: View, order, opened: frozenset[str]) -> str | None:
    """The first category in ``order`` (not in ``opened``) the line recognisably belongs to."""
    found = _INDEX.codes_in(v.folded)
    if found:
        found = {code for code in found if not code.startswith("\x00")} | _TOGETHER.codes_in(v.folded, found)
    if "other_people" not in found and "other_people" not in opened and _names_someone(v):
        found.add("other_people")
    parts = _LineParts(v)
    for code in order:
        if code in opened:
            continue
        if code in found or _pattern_code(parts, code):
            return code
    return None

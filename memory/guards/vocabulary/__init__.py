"""The guards' vocabulary: data files per language, read once and compiled here.

Files (TOML, one per language plus shared tables):

* ``en.toml``, ``es.toml``, ``fr.toml``, ``de.toml``, ``pt.toml``, ``hi.toml``: ``[credentials]`` (the words
  that name a secret, the words between a secret word and its value, ...) and, per excluded category,
  ``[categories.CODE]`` / ``[more.CODE]`` tables of ``words`` and ``patterns``;
* ``lists.toml``: lists the patterns insert with ``{name}`` (medicines, parties, demonyms, first names);
* ``ids.toml``: identifier shapes, checksums and context words (``memory.guards.identifiers``);
* ``keys.toml``: vendor key and token shapes (``memory.guards.credentials``).

``words`` are matched whole on the folded view (``memory.guards.text``): lower case, Latin accents off, leet undone;
a trailing ``*`` matches any ending; a space matches spaces or hyphens. ``patterns`` are regular expressions
matched case-insensitively on the plain view (the surface with Latin accents off, case kept). Adding a
language is adding a file: nothing in code names one.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from memory.guards.text import UNSPACED, WORD_END, WORD_START, fold_word, plain, register_keywords
from memory.guards.vocabulary.simple import first_prefixes, split_pattern

HERE = Path(__file__).resolve().parent
_LANGUAGE_LINE = re.compile(r'(?m)^language\s*=\s*"')


def _languages() -> tuple[str, ...]:
    """Every file that says ``language = "xx"`` is a language (English first, then by name): adding a
    language is adding a file."""
    found = sorted(path.stem for path in HERE.glob("*.toml") if _LANGUAGE_LINE.search(path.read_text(encoding="utf-8")))
    return tuple(sorted(found, key=lambda code: (code != "en", code)))


LANGUAGES = _languages()
CREDENTIAL_LISTS = (
    "strong",
    "weak",
    "links",
    "soft_links",
    "possessives",
    "value_stop",
    "not_secret_before",
    "trailing_links",
    "security_questions",
    "login",
    "not_secret_after",
    "not_a_code_before",
    "totp_cues",
    "seed_cues",
    "about_secret",
    "access_cues",
    "pair_joins",
)
# Per language, ``[personal]``: the words that make a number an id, and the phrasings of a home address
# and a date of birth (``memory.guards.identifiers``); ``postcode_words``, the words a postcode is given after
# ("woont in Amsterdam, postcode 1012 AB" says no house number).
# ``role_before`` / ``role_after``: the words a job is said with ("trabajo como", "de métier"), ``role_articles`` the
# articles that may stand between (``memory.guards.categories``: a profession is a role, not its field);
# ``subjects``, words set aside before the categories are read: a subject studied or taught ("political science",
# "Religious Education": a course, not a belief), and a document, donation or sale named with a category's word
# ("salary slip", "monthly gift", "Diwali sale").
PERSONAL_LISTS = (
    "id_words",
    "address_cues",
    "postcode_words",
    "birth_cues",
    "not_an_id_before",
    "number_words",
    "bank_words",
    "role_before",
    "role_after",
    "subjects",
    "role_articles",
    "professions",
    "self_before",
    "self_after",
    "workplaces",
)
_CATEGORY_CODES = (
    "other_people",
    "small_talk",
    "health",
    "religion",
    "politics",
    "sexuality",
    "ethnicity",
    "money",
    "job_loss",
    "legal",
    "emotional_state",
    "relationships",
    "bond_with_agent",
    "authority",
    "ranking",
)
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
_TOKENS = re.compile(r"[\w\u0900-\u0963\u0966-\u097F]+")


def _load(name: str) -> dict:
    with open(HERE / name, "rb") as handle:
        return tomllib.load(handle)


_UNSPACED = re.compile(f"[{UNSPACED}]")  # the scripts written without spaces (memory.guards.text)


def is_unspaced(word: str) -> bool:
    return bool(_UNSPACED.search(word))


def cue_pattern(words) -> str:
    """A regex (one group-free alternative) matching any of the words: between word edges, or, for a word of
    an unspaced script, anywhere."""
    words = list(words)
    spaced = word_alternation(w for w in words if not is_unspaced(w))
    unspaced = word_alternation(w for w in words if is_unspaced(w))
    parts = [f"{WORD_START}(?:{spaced}){WORD_END}"] if spaced else []
    if unspaced:
        parts.append(f"(?:{unspaced})")
    return "|".join(parts) or "(?!)"


class CueGate:
    """A cheap test before a cue regex (issue 24's cost): a line may hold one of the words only if one of its
    words is a word's first word and it holds that word's other words, or starts with a stem, or the line holds
    an unspaced script. Reads the view's word set, found once per line."""

    def __init__(self, words) -> None:
        firsts: dict[str, list[frozenset[str]]] = {}
        stems: set[str] = set()
        self.unspaced = False
        for word in words:
            folded = fold_word(word.strip())
            if is_unspaced(folded):
                self.unspaced = True
                continue
            parts = _TOKENS.findall(folded.rstrip("*"))
            if not parts:
                continue
            if folded.endswith("*"):
                stems.add(parts[0])  # a stem of several words: any word starting as its first one may begin it
                continue
            firsts.setdefault(parts[0], []).append(frozenset(parts[1:]))
            if len(parts) > 1:  # "pin-kod" matches "pinkod" too
                firsts.setdefault("".join(parts), []).append(frozenset())
        self.firsts = {first: tuple(rests) for first, rests in firsts.items()}
        self.first_words = frozenset(self.firsts)
        self.stems = tuple(sorted(stems))
        # a word starts with a stem only if it starts with the stem's first two letters: only the line's words
        # that begin as a stem does are tried (``View.by_start``), all of them if a stem is shorter
        self.stem_starts = frozenset(stem[:2] for stem in stems)
        self.short_stem = any(len(stem) < 2 for stem in stems)

    def open(self, view) -> bool:
        words = view.words
        if self.unspaced and view.unspaced:
            return True
        for first in self.first_words.intersection(words):
            if any(rest <= words for rest in self.firsts[first]):
                return True
        if not self.stems:
            return False
        if self.short_stem:
            return any(word.startswith(self.stems) for word in words)
        return any(
            word.startswith(self.stems) for start in self.stem_starts & view.starts for word in view.by_start[start]
        )


def word_alternation(words) -> str:
    """A regex alternation (no group) for vocabulary words, longest first, as the folded view spells them."""
    parts = set()
    for word in words:
        word = fold_word(word.strip())
        if not word:
            continue
        stem = word.endswith("*")
        body = re.escape(word.rstrip("*")).replace(r"\-", "[\\s\\-]?").replace(r"\ ", "[\\s\\-]+")
        parts.add(body + (r"\w*" if stem else ""))
    return "|".join(sorted(parts, key=len, reverse=True))


def _list_alternation(items) -> str:
    parts = []
    for item in items:
        item = plain(item.strip())
        parts.append(re.escape(item).replace(r"\?", "?").replace(r"\-", "[\\s\\-]?").replace(r"\ ", "[\\s\\-]+"))
    return "|".join(sorted(parts, key=len, reverse=True))


@dataclass(frozen=True)
class Category:
    words: re.Pattern | None  # on the folded view
    patterns: tuple[re.Pattern, ...]  # on the plain view
    # For each pattern, the words one of which a line must hold for it to be tried (the first words of the
    # lists it inserts), or None: a cheap skip for patterns with long lists (parties, demonyms).
    needs: tuple[frozenset[str] | None, ...] = ()
    # For each pattern, the prefixes one of which a word of the line must start with (the first words of its
    # alternatives), or None.
    starts: tuple[tuple[str, ...] | None, ...] = ()


@dataclass(frozen=True)
class Vocabulary:
    credentials: dict[str, tuple[str, ...]]
    personal: dict[str, tuple[str, ...]]
    categories: dict[str, Category]
    # Every category's words, the simple alternatives of its patterns included (see ``simple``).
    category_words: dict[str, tuple[str, ...]]
    ids: tuple[dict, ...]
    keys: tuple[dict, ...]
    # ``[[together.CODE]]`` tables: a line belongs to CODE when it holds a word of each of a rule's groups
    # (``groups = [["sempre", "always"], ["primeiro", "first"], ["indic*", "recommend*"]]``): what a category
    # is when no one word says it (a ranking as an instruction, authority as scope, a check to skip).
    together: dict[str, tuple[tuple[tuple[str, ...], ...], ...]] = field(default_factory=dict)


class _Lists:
    """The lists patterns insert with ``{name}`` (lists.toml, and any a language file adds)."""

    def __init__(self, files: list[dict]) -> None:
        self.raw = _load("lists.toml")["lists"]
        self.alternations = {name: _list_alternation(items) for name, items in self.raw.items()}
        for data in files:
            for name, value in data.get("lists", {}).items():
                self.alternations[name] = value if isinstance(value, str) else _list_alternation(value)

    def expand(self, pattern: str) -> str:
        known = self.alternations
        return _PLACEHOLDER.sub(lambda m: f"(?:{known[m.group(1)]})" if m.group(1) in known else m.group(0), pattern)

    def needs_of(self, pattern: str) -> frozenset[str] | None:
        names = [name for name in _PLACEHOLDER.findall(pattern) if name in self.raw]
        if not names:
            return None
        # The first word of each item: a match needs the whole item, so it needs its first word, in each way
        # the item may be written ("conservatives?" is also "conservative", "lib-dem" also "libdem").
        return frozenset(
            tokens[0]
            for name in names
            for item in self.raw[name]
            for written in _written_forms(item)
            if (tokens := _TOKENS.findall(fold_word(written)))
        )


def _written_forms(item: str) -> set[str]:
    """The ways a list item matches as ``_list_alternation`` compiles it: a character before ``?`` there or
    not, a hyphen as nothing or as a space."""
    forms = {item}
    while any("?" in form or "-" in form for form in forms):
        forms = {
            variant
            for form in forms
            for variant in (
                (re.sub(r".\?", "", form, count=1), form.replace("?", "", 1))
                if "?" in form
                else (form.replace("-", "", 1), form.replace("-", " ", 1))
            )
        }
    return forms


def _category_entry(lists: _Lists, entry: dict, words: list[str], patterns: list[tuple]) -> None:
    """One ``[categories|more|phrasings.CODE]`` table into its category's words and patterns."""
    for word in entry.get("words", []):
        if word.startswith("{") and word.endswith("}"):
            words.extend(w.replace("?", "") for w in lists.raw[word[1:-1]])
        else:
            words.append(word)
    # ``gate_words``: word starts one of which every match of the table's patterns holds (an amount's
    # "ahorrados" after it): a line with none of them is not searched (a pattern that starts with a number
    # has no first word to skip by).
    gate = tuple(sorted(fold_word(w) for w in entry.get("gate_words", []))) or None
    for pattern in entry.get("patterns", []):
        simple, rest = split_pattern(lists.expand(pattern))
        words.extend(simple)
        if rest:
            patterns.append((rest, lists.needs_of(pattern), first_prefixes(rest) or gate))


def _read_categories(files: list[dict], lists: _Lists) -> tuple[dict[str, list[str]], dict[str, list[tuple]]]:
    words: dict[str, list[str]] = {}
    patterns: dict[str, list[tuple]] = {}
    for data in files:
        for table in ("categories", "more", "phrasings"):
            for name, entry in data.get(table, {}).items():
                # "[phrasings.CODE_more]": another table of the same category (a table cannot be reopened)
                code = next((c for c in _CATEGORY_CODES if name == c or name.startswith(c + "_")), name)
                _category_entry(lists, entry, words.setdefault(code, []), patterns.setdefault(code, []))
    return words, patterns


def _read_together(files: list[dict], lists: _Lists) -> dict[str, tuple[tuple[tuple[str, ...], ...], ...]]:
    """Every language's ``[[together.CODE]]`` rules; a group's ``"{name}"`` is that list's words."""
    found: dict[str, list[tuple[tuple[str, ...], ...]]] = {}
    for data in files:
        for name, rules in data.get("together", {}).items():
            code = next((c for c in _CATEGORY_CODES if name == c or name.startswith(c + "_")), name)
            for rule in rules:
                groups = tuple(
                    tuple(
                        expanded
                        for word in group
                        for expanded in (
                            [w.replace("?", "") for w in lists.raw[word[1:-1]]]
                            if word.startswith("{") and word.endswith("}")
                            else [word]
                        )
                    )
                    for group in rule["groups"]
                )
                found.setdefault(code, []).append(groups)
    return {code: tuple(rules) for code, rules in found.items()}


def _read_lists_of(files: list[dict], table: str, names: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """``[credentials]`` or ``[personal]`` of every language, list by list, without repeats."""
    found: dict[str, list[str]] = {name: [] for name in names}
    for data in files:
        for name in names:
            found[name].extend(data.get(table, {}).get(name, []))
    return {name: tuple(dict.fromkeys(values)) for name, values in found.items()}


def _register_keywords(words: dict[str, list[str]], credentials: dict[str, tuple[str, ...]]) -> None:
    keywords = {fold_word(w) for ws in words.values() for w in ws if " " not in w and "*" not in w}
    keywords |= {fold_word(w) for name in ("strong", "weak") for w in credentials[name] if " " not in w}
    stems = {fold_word(w).rstrip("*") for ws in words.values() for w in ws if " " not in w and w.endswith("*")}
    register_keywords(keywords, stems)


@lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """Every file read and compiled once per process."""
    files = [_load(f"{language}.toml") for language in LANGUAGES]
    credentials = _read_lists_of(files, "credentials", CREDENTIAL_LISTS)
    lists = _Lists(files)
    words, patterns = _read_categories(files, lists)
    categories = {
        code: Category(
            words=None,
            patterns=tuple(re.compile(p, re.I) for p, _, _ in patterns.get(code, [])),
            needs=tuple(n for _, n, _ in patterns.get(code, [])),
            starts=tuple(s for _, _, s in patterns.get(code, [])),
        )
        for code in words.keys() | patterns.keys()
    }
    _register_keywords(words, credentials)
    return Vocabulary(
        credentials=credentials,
        personal=_read_lists_of(files, "personal", PERSONAL_LISTS),
        categories=categories,
        category_words={code: tuple(dict.fromkeys(ws)) for code, ws in words.items()},
        ids=tuple(_load("ids.toml")["id"]),
        keys=tuple(_load("keys.toml")["key"]),
        together=_read_together(files, lists),
    )


@lru_cache(maxsize=1)
def relative_days() -> dict[int, str]:
    """A day said relative to the chat's, by how many days before it (``months.toml``): one regex over folded
    text for its words and its patterns."""
    table = _load("months.toml")
    patterns = table.get("relative_day_patterns", {})
    return {
        int(days): "|".join([cue_pattern(words), *patterns.get(days, [])])
        for days, words in table["relative_days"].items()
    }


@lru_cache(maxsize=1)
def month_patterns() -> dict[int, str]:
    """Each month's words (``months.toml``, folded) as one regex alternative (group-free); a word ending in
    ``*`` is a stem. Read by the dates of birth and by the writer's dated actions."""
    table = _load("months.toml")["months"]
    return {
        int(number): "|".join(
            re.escape(fold_word(w.rstrip("*"))) + (r"\w*" if w.endswith("*") else "")
            for w in sorted(words, key=len, reverse=True)
        )
        for number, words in table.items()
    }

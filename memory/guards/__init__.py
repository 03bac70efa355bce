"""The memory's privacy guards (R6, R7, R10, R13, R14), enforced in code.

Every path that writes a memory line calls this module after any model has spoken: the quiet-window
writer, the Memory tab, the API's ``set``, a review of what is already kept. A model follows the
written instructions and can slip; these functions are the part that cannot.

What is guaranteed here, and nothing more:

* a memory is at most ``MAX_LINES`` lines of at most ``MAX_LINE_CHARS`` characters (R6);
* a line that looks like a password, a key or token, a card number or a government id number is
  refused (R7): the number-shaped ids are checked with python-stdnum, keys with our own patterns plus
  detect-secrets;
* a line that recognisably belongs to a category the default instructions rule out (R13) is
  reported, unless the team's instructions opened that category. Recognition is by word lists, so it
  leans towards refusing: R10 says to miss a detail rather than keep one it should not.

Pure Python: this module imports no Django and no other app module, so it can be called (and
tested) from anywhere.

Cost of one ``line_refusal`` (``bench/guards.py``, CPU p50, Python 3.11, python-stdnum 2.2,
detect-secrets 1.5.0; docs/performance.md, issue 24's tenth round): about 0.4 ms for a 300-character
ordinary English sentence, about 0.85 ms for one in Hindi and Spanish (the category word index and the
patterns its words open, many of them since the vocabulary was broadened, are most of it); about 0.8 ms
for one packed with numbers, dates, a phone and an e-mail (the id table's shapes, python-stdnum's
candidates); about 0.4 ms
for one holding a key-like run of 16+ characters (digits or mixed case), the only runs handed to
detect-secrets, whose scan stops at its first hit that counts; 0.1-0.2 ms for a short line. The worst
case found, a 300-character line packed with fifteen random mixed-case tokens, about 5 ms (detect-secrets
reads every token). A 30-line memory is checked in well under 30 ms. Every regex that may not match is
kept behind a cheaper test that can only say no when it cannot (``memory.guards.prefilter``, the cue
gates, the id shapes' one scan), so no cost cut changes a decision.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from memory.guards.categories import category_of, without_professions
from memory.guards.credentials import detect_secrets_in, key_in, password_in
from memory.guards.identifiers import identifier_refusal
from memory.guards.sources import source_refusal as _structural_source_refusal
from memory.guards.sources import sources_from_payload
from memory.guards.text import SENTENCE_END, sentences, view, without_said_once

__all__ = [
    "CATEGORIES",
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "SECRET_REASONS",
    "MemoryRefused",
    "categories_opened_by",
    "check_memory_text",
    "decision_uses_in",
    "find_category",
    "find_secret",
    "instructions_refusal",
    "line_refusal",
    "reason_label",
    "source_refusal",
    "sources_from_payload",
    "typed_secret_values",
    "split_lines",
]

MAX_LINES = 30
MAX_LINE_CHARS = 300

CATEGORIES: dict[str, str] = {
    "other_people": "Other people, including anything bought or asked for someone else",
    "small_talk": "Small talk, fiction, what-if questions and one-off requests",
    "health": "Health, including allergies, conditions and medicines",
    "religion": "Religion",
    "politics": "Politics",
    "sexuality": "Sexuality",
    "ethnicity": "Ethnicity",
    "money": "What they earn or have saved, or money troubles",
    "job_loss": "Losing a job",
    "legal": "Legal trouble",
    "emotional_state": "Emotional state or loneliness",
    "relationships": "Close relationships",
    "bond_with_agent": "A bond with the agent",
    "authority": "Claims of access or authority",
    "ranking": 'Rankings such as "always recommend X"',
}

# Which categories the consent guidance (R28) treats as special: the sensitive ones need a narrow
# legal ground, the emotional ones have rules of their own. `consent` names the topics, not the codes.
SENSITIVE_CATEGORIES = frozenset({"health", "religion", "politics", "sexuality", "ethnicity"})
EMOTION_CATEGORIES = frozenset({"emotional_state", "relationships", "bond_with_agent"})


def category_topics(opened: frozenset[str]) -> frozenset[str]:
    """The consent topics ("sensitive", "emotion") a set of opened categories touches: what
    `consent.notice.guidance_for` is given by its caller (`instructions.instruction_checks`)."""
    topics = set()
    if opened & SENSITIVE_CATEGORIES:
        topics.add("sensitive")
    if opened & EMOTION_CATEGORIES:
        topics.add("emotion")
    return frozenset(topics)


SECRET_REASONS: dict[str, str] = {
    "password": "a password, PIN, one-time code or security answer",
    "api_key": "a key or access token",
    "card_number": "a card number",
    "bank_account": "a bank account, IBAN or wallet number",
    "government_id": "a government id number",
    "personal_identifier": "a date of birth, home address, device or medical record number",
}

_OTHER_REASONS: dict[str, str] = {
    "too_long": f"a line longer than {MAX_LINE_CHARS} characters",
    "too_many_lines": f"more than {MAX_LINES} lines",
    "unsourced": "not from anything the person typed or an action that ran",
    "added_in_review": "a new line, and a review can only change or remove lines",
    "failed_action": "an action that did not succeed, or without the date it ran",
    "not_in_source": "a detail that is not in what the person typed or the action it cites",
}


def reason_label(code: str) -> str:
    """A short human label for any reason code this module (or the writer) uses.

    Covers the secret codes, the category codes, ``too_long``, ``too_many_lines``, ``unsourced`` and
    ``added_in_review``; an unknown code comes back readable rather than raising.
    """
    for table in (SECRET_REASONS, CATEGORIES, _OTHER_REASONS):
        if code in table:
            return table[code]
    return code.replace("_", " ")


# ---------------------------------------------------------------------------------------------
# Lines
# ---------------------------------------------------------------------------------------------

_BULLET = re.compile(r"^(?:[-*\u2022](?:\s+|$))+")
_SPACES = re.compile(r"\s+")


def split_lines(text: str) -> list[str]:
    """Split a memory's text into its lines, one fact each.

    Each line is stripped, its inner whitespace collapsed to single spaces, and a leading ``- ``,
    ``* `` or ``• `` bullet removed; lines left blank are dropped. Nothing else is changed, so the
    result is what gets counted against ``MAX_LINES`` and stored.
    """
    lines = []
    for raw in (text or "").splitlines():
        line = _SPACES.sub(" ", raw).strip()
        line = _BULLET.sub("", line).strip()
        if line:
            lines.append(line)
    return lines


# ---------------------------------------------------------------------------------------------
# Secrets (R7) and excluded categories (R13): memory.guards.credentials, .identifiers, .categories
# ---------------------------------------------------------------------------------------------


def find_secret(text: str) -> str | None:
    """Return the ``SECRET_REASONS`` code of the first kind of secret the text holds, or ``None``.

    The text is normalised first (``memory.guards.text.view``): other scripts' digits, zero-width and no-break
    characters, separators inside numbers, number words, leetspeak and spaced-out letters change nothing.
    Checked in this order: passwords, PINs, one-time codes, door codes, wifi keys, security answers, login
    pairs and URL credentials in every supported language (``credentials.password_in``); card-shaped runs,
    Luhn or not, bank and wallet numbers, the government ids of ``vocabulary/ids.toml``, dates of birth,
    street addresses, IMEIs and record numbers (``identifiers.identifier_refusal``); keys and tokens by
    vendor shape, then detect-secrets (``credentials.key_in``). Ordinary sentences, dates, prices, order
    numbers, phone numbers and short numbers are not flagged.
    """
    if not text:
        return None
    v = view(text)
    if key_in(v):
        return "api_key"
    if password_in(v):
        return "password"
    return identifier_refusal(v) or detect_secrets_in(v)


# ---------------------------------------------------------------------------------------------
# What the person typed as a secret stays a secret wherever a model puts it (R7 on the writer's path)
# ---------------------------------------------------------------------------------------------

# A token of what was typed: letters, digits and the symbols a password holds, cut at spaces and at the
# punctuation that ends a clause.
_TYPED_TOKEN = re.compile(r"[^\s,;:()\[\]{}\"'«»“”]+")
# Stand-ins of a password's shapes (a mixed token, an ordinary word): a value swapped for one still reads as
# a secret, the word that named it ("password", "PIN") swapped for either does not.
_STAND_INS = ("Qv7-Lmx-42", "lantern")
_DIGIT_RUN = re.compile(r"\d{4,}")


def _refused_prefix(sentence: str) -> str | None:
    """The shortest start of the sentence, ending at a token's end, that holds a secret: its last token is
    the value or the word that names it, and nothing after it can be misread as the value instead."""
    for match in _TYPED_TOKEN.finditer(sentence):
        if find_secret(sentence[: match.end()]) is not None:
            return sentence[: match.end()]
    return None


def _value_tokens(sentence: str, reason: str) -> set[str]:
    """The tokens that hold a sentence's secret, read in its shortest refused start (``_refused_prefix``):
    without one that start is no longer refused, and (for a token without digits) with a stand-in in its
    place it still is, so it was the value and not the word that named it ("password", "PIN"). A group of
    digits stands for the whole number it is part of."""
    prefix = _refused_prefix(sentence) or sentence
    values: set[str] = set()
    for token in {t.strip(".!?-") for t in _TYPED_TOKEN.findall(prefix)}:
        if len(token) < 3:
            continue
        pattern = re.compile(rf"(?<!\S){re.escape(token)}")
        if find_secret(pattern.sub(" ", prefix)) is not None:
            continue  # the start is a secret without it too
        if token.isdigit():  # one group of a number written in groups: the whole number is the value
            values.update(run for run in _DIGIT_RUN.findall(view(sentence).digits) if token in run)
        elif any(c.isdigit() for c in token) or any(
            find_secret(pattern.sub(stand_in, prefix)) is not None for stand_in in _STAND_INS
        ):
            values.add(token)
    if not values:  # a value told in pieces (a card in groups, a code digit by digit): its digits
        values = set(_DIGIT_RUN.findall(view(prefix).digits))
    return values


@functools.lru_cache(maxsize=2048)
def typed_secret_values(text: str) -> tuple[tuple[str, str], ...]:
    """(value, reason) for each secret what the person typed holds, sentence by sentence: the value a
    password, a code, a card or an id was given as, so a line that carries it is refused however a model
    words the rest ("my password for the shop is Tulip-Harbor-93" makes "Shop login: Tulip-Harbor-93" a
    password line)."""
    found: list[tuple[str, str]] = []
    for sentence in sentences(text, limit=40):
        for piece in _pieces(sentence):
            reason = find_secret(piece.strip())
            if reason:
                found.extend((value, reason) for value in sorted(_value_tokens(piece, reason)))
    return tuple(dict.fromkeys(found))


_PIECE_CHARS = 300  # a line's length: a cue and its value stand within one
_PIECE_OVERLAP = 100


def _pieces(sentence: str) -> list[str]:
    """A long sentence in overlapping pieces of at most a line's length, cut at spaces, so that finding a
    value costs a bounded number of checks of a bounded length however long the message is."""
    if len(sentence) <= _PIECE_CHARS:
        return [sentence]
    pieces, start = [], 0
    while start < len(sentence):
        end = min(len(sentence), start + _PIECE_CHARS)
        if end < len(sentence):
            end = (
                sentence.rfind(" ", start + _PIECE_OVERLAP, end)
                if " " in sentence[start + _PIECE_OVERLAP : end]
                else end
            )
        pieces.append(sentence[start:end])
        if end >= len(sentence):
            break
        start = max(start + 1, end - _PIECE_OVERLAP)
    return pieces


def _typed_secret_refusal(line: str, sources: Iterable[dict]) -> str | None:
    line_view = view(line)
    folded, digits = line.casefold(), line_view.digits
    for source in sources:
        if source.get("kind") != "message":
            continue
        for value, reason in typed_secret_values(str(source.get("text") or "")):
            if value.casefold() in folded:
                return reason
            value_digits = view(value).digits
            if len(value_digits) >= 4 and value_digits.isdigit() and value_digits in digits:
                return reason
    return None


def source_refusal(line: str, sources: list[dict]) -> str | None:
    """The reason a line may not be kept given the sources it cites (R7, R12), or ``None``: a secret the
    person typed in a cited message, however the line words it (``typed_secret_values``), then the
    structural checks of ``memory.guards.sources.source_refusal`` (a failed action, a detail not said)."""
    return _typed_secret_refusal(line, sources) or _structural_source_refusal(line, sources)


# The order categories are tried in: the more specific first ("Has a girlfriend" is a relationship before
# it is another person).
_CHECK_ORDER = (
    "relationships",
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
    "bond_with_agent",
    "authority",
    "ranking",
)
assert set(_CHECK_ORDER) == set(CATEGORIES)

# The "(said once, 3 Nov)" note is ours: "once" in it must not read as a one-off request.


def find_category(line: str, *, opened: frozenset[str] = frozenset()) -> str | None:
    """Return the excluded ``CATEGORIES`` code the line recognisably belongs to, or ``None``.

    Categories in ``opened`` (see ``categories_opened_by``) are skipped. Recognition is by the vocabulary
    of every supported language (``memory/vocabulary``) on the normalised line, and leans towards flagging
    (R10), while the kinds of line the default instructions keep pass: preferences, contact channel,
    language, office or location, role, setup (device, plan, OS, integration), goals, work in progress,
    dated successful actions and said-once notes.
    """
    text = without_said_once(line or "")
    return category_of(without_professions(view(text)), _CHECK_ORDER, opened)


# ---------------------------------------------------------------------------------------------
# Team instructions
# ---------------------------------------------------------------------------------------------

_CLAUSE_SPLIT = re.compile(rf"{SENTENCE_END}|,?\s+\b(?:but|however|though|although|whereas)\b\s*", re.I)
_POSITIVE = re.compile(
    r"\b(?:keep|keeps|kept|remember|remembers|store|stores|save|saves|note|notes|record|records|track|tracks|"
    r"log|include|includes|capture|captures|retain|retains|hold|holds|allow|allowed|open|opens|"
    r"fine|ok|okay|welcome|want\s+(?:you|it)\s+to\s+know)\b",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:do\s+not|don'?t|dont|never|not|no|avoid|without|except|excluding|exclude|excludes|leave\s+out|"
    r"leave\s+off|leaves\s+out|skip|ignore|forget|stop|omit|drop|remove|nothing\s+about|rather\s+than|"
    r"instead\s+of|neither|nor)\b",
    re.I,
)
_OPENING_VOCABULARY: dict[str, str] = {
    "health": r"allerg\w*|health\w*|medical|medic\w*|conditions?|diet\w*|disabilit\w*|accessibility\s+needs|"
    r"intoleran\w*|symptoms?|illness\w*",
    "religion": r"religio\w*|faith|festivals?|beliefs?",
    "politics": r"politic\w*|voting|party\s+affiliation",
    "sexuality": r"sexual\w*|gender\s+identity|pronouns",
    "ethnicity": r"ethnic\w*|caste|race|heritage",
    "money": r"salar(?:y|ies)|income|earnings|savings|finances|financial\s+\w+|debts?|loans?|budget|"
    r"credit\s+scores?|money",
    "job_loss": r"job\s+loss|unemploy\w*|employment\s+status|laid\s+off|lay-?offs?",
    "legal": r"legal\s+\w+|lawsuits?|court\s+cases?|criminal\s+\w+",
    "emotional_state": r"moods?|emotion\w*|feelings|stress|frustration|loneliness",
    "relationships": r"relationships?|marital\s+status|spouses?|partners?|wedding\w*",
    "other_people": r"family(?:\s+members)?|colleagues|other\s+people|who\s+they\s+buy\s+for|gifts?|"
    r"recipients?|children|kids|dependents",
    "small_talk": r"small\s+talk|hobb(?:y|ies)|interests|weekends?|chit-?chat|personal\s+life",
    "bond_with_agent": r"bond\s+with|rapport",
    "authority": r"access\s+levels?|admin\s+status|permissions?|authority",
    "ranking": r"rankings?|favou?rite\s+products?|product\s+opinions",
}
_COMPILED_OPENING = {code: re.compile(rf"\b(?:{pattern})\b", re.I) for code, pattern in _OPENING_VOCABULARY.items()}


def _clauses(instructions: str) -> Iterable[str]:
    for clause in _CLAUSE_SPLIT.split(instructions or ""):
        clause = clause.strip()
        if clause:
            yield clause


# The categories a clause can open without naming them (``Remember if they feel lonely``, ``Keep
# whether they are pregnant``): the sensitive ones, read by the guards' own vocabulary, so that the
# check on the Memory tab and the guards on every line agree on what the instructions keep.
# Other people, small talk, authority and rankings open only by name (a clause about them is rarely a wish to
# keep them).
_OPENED_ONLY_BY_NAME = frozenset({"other_people", "small_talk", "authority", "ranking"})
_OPENED_BY_MEANING = tuple(code for code in CATEGORIES if code not in _OPENED_ONLY_BY_NAME)


def _opened_by_name(clause: str) -> tuple[set[str], bool]:
    """(the categories a clause opens by name, whether it names any, negated or not)."""
    opened: set[str] = set()
    named = False
    for code, vocabulary in _COMPILED_OPENING.items():
        for match in vocabulary.finditer(clause):
            named = True
            if not _NEGATION.search(clause[: match.start()]):
                opened.add(code)
                break
    return opened, named


def categories_opened_by(instructions: str) -> frozenset[str]:
    """Which excluded categories the team's plain-words instructions open.

    A category opens when a clause asks to keep it ("Keep food allergies.", "Remember their religion
    for holiday greetings", "Allergies are fine to keep") and no negation comes before the mention
    ("Do not keep allergies", "leave out health", "Keep allergies but not religion" opens only
    health). "Keep everything" names no category and opens none: sensitive categories open by name,
    or, in a clause that names none and negates nothing, by what it asks to keep read with the
    guards' own vocabulary ("Remember if they feel lonely" opens emotional state).
    """
    opened: set[str] = set()
    for clause in _clauses(instructions):
        positive = _POSITIVE.search(clause)
        if not positive:
            continue
        by_name, named = _opened_by_name(clause)
        opened |= by_name
        if not named and not _NEGATION.search(clause):
            code = category_of(view(clause[positive.end() :]), _OPENED_BY_MEANING, frozenset())
            if code is not None:
                opened.add(code)
    return frozenset(opened)


_DECISION_USES: dict[str, str] = {
    "hiring": r"\bhir(?:e|es|ed|ing)\b|\brecruit\w*|\bcandidates?\b|\bjob\s+applica\w*|\bapplicants?\b|"
    r"\bemployment\s+decisions?\b|\binterview\w*|\bshortlist\w*|\bpromot(?:e|ion)\s+(?:them|staff|employees)\b",
    "lending": r"\bloans?\b|\blend\w*|\bcredit\b|\bmortgages?\b|\bunderwrit\w*|\bborrow\w*|\bbnpl\b|"
    r"\bcreditworth\w*|\bfinanc(?:e|ing)\s+(?:approval|application)s?\b",
    "housing": r"\bhousing\b|\btenan\w*|\brent(?:al|als|ing)?\b|\blandlords?\b|\bleas(?:e|es|ing)\b|"
    r"\bapartments?\b|\bflats?\b",
    "schooling": r"\bschool\w*|\badmissions?\b|\benrol\w*|\bstudents?\b|\buniversit\w*|\bcolleges?\b|"
    r"\bscholarships?\b|\bexams?\b|\bgrades?\b|\btuition\b",
    "medical care": r"\bmedical\b|\btreatments?\b|\bpatients?\b|\btriage\w*|\bdiagnos\w*|\bclinical\b|"
    r"\bhealth\s?care\b|\bcare\s+plans?\b|\bprescri\w*|\binsurance\s+claims?\b|\bhealth\s+insurance\b",
}
_COMPILED_DECISION_USES = {label: re.compile(pattern, re.I) for label, pattern in _DECISION_USES.items()}
_DECISION_WORDS = re.compile(
    r"\bdecid\w*|\bdecision\w*|\bassess\w*|\bevaluat\w*|\beligib\w*|\bqualif\w*|\bapprov\w*|\breject\w*|"
    r"\bden(?:y|ied|ies)\b|\bscreen\w*|\bscor(?:e|es|ed|ing)\b|\bshortlist\w*|\bprioriti[sz]\w*|\bdetermin\w*|"
    r"\bjudg\w*|\bvet(?:ting|ted)?\b|\bselect\w*|\bwhether\b|\bfilter\w*|\brank\w*|\baccept\w*|\bwho\s+gets\b|"
    r"\bworth\w*",
    re.I,
)
_DECISION_NEGATION = re.compile(r"\b(?:never|not|don'?t|do\s+not|must\s+not|mustn'?t|no)\b", re.I)


def decision_uses_in(instructions: str) -> list[str]:
    """Labels of the automated decisions about people the instructions ask memory to feed (R28).

    Returns, in a fixed order, those of "hiring", "lending", "housing", "schooling" and "medical
    care" named in a clause that also speaks of deciding, scoring, screening, approving or the like
    ("Note their credit score so we can decide on loans" gives ``["lending"]``). A clause that says
    not to ("Never use memory to decide on loans") gives nothing.
    """
    found: set[str] = set()
    for sentence in sentences(instructions):
        if not _DECISION_WORDS.search(sentence) or _DECISION_NEGATION.search(sentence):
            continue
        for label, pattern in _COMPILED_DECISION_USES.items():
            if pattern.search(sentence):
                found.add(label)
    return [label for label in _DECISION_USES if label in found]


# ---------------------------------------------------------------------------------------------
# Whole lines and whole memories
# ---------------------------------------------------------------------------------------------


def line_refusal(line: str, *, opened: frozenset[str] = frozenset(), check_categories: bool = True) -> str | None:
    """The reason a single line may not be kept, or ``None`` when it may.

    In order: ``"too_long"`` (more than ``MAX_LINE_CHARS`` characters once stripped), a
    ``SECRET_REASONS`` code, then, when ``check_categories`` is true, a ``CATEGORIES`` code not in
    ``opened``.
    """
    text = (line or "").strip()
    if len(text) > MAX_LINE_CHARS:
        return "too_long"
    secret = find_secret(text)
    if secret:
        return secret
    if check_categories:
        return find_category(text, opened=opened)
    return None


class MemoryRefused(Exception):
    """A memory text that may not be stored (R7): it would hold a secret, a too-long line, or too many lines.

    ``reason`` is the code, ``message`` a sentence for a person (it names the line but never repeats
    what was on it), ``line_number`` the 1-based line it is about, or ``None``.
    """

    def __init__(self, reason: str, message: str, line_number: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.line_number = line_number


def check_memory_text(text: str) -> list[str]:
    """Normalise a memory set by a team member or the API (R7), or refuse it whole.

    Returns ``split_lines(text)``. Raises ``MemoryRefused`` with ``"too_many_lines"`` for more than
    ``MAX_LINES`` lines, and with ``"too_long"`` or a secret code for the first line that is too long
    or holds a secret. Categories are not checked: a team may write what it wants, only secrets and
    size are refused here.
    """
    lines = split_lines(text)
    if len(lines) > MAX_LINES:
        raise MemoryRefused(
            "too_many_lines",
            f"A memory holds at most {MAX_LINES} lines, and this one has {len(lines)}. Shorten it and try again.",
        )
    for number, line in enumerate(lines, start=1):
        reason = line_refusal(line, check_categories=False)
        if reason == "too_long":
            raise MemoryRefused(
                reason,
                f"Line {number} is longer than {MAX_LINE_CHARS} characters. Keep one short fact per line.",
                number,
            )
        if reason:
            raise MemoryRefused(
                reason,
                f"Line {number} looks like {SECRET_REASONS[reason]}, and a memory never keeps one. "
                "Remove it and try again.",
                number,
            )
    return lines


def instructions_refusal(instructions: str) -> str | None:
    """A message refusing memory instructions that hold a secret (the Builder, the Memory tab and the API
    write them; the model reads them on every run), or ``None``. Each line is checked as a memory line is."""
    for line in (instructions or "").splitlines():
        reason = find_secret(line)
        if reason:
            return (
                f"The memory instructions hold what looks like {SECRET_REASONS[reason]}, and a memory never "
                "keeps one. Remove it and try again."
            )
    return None

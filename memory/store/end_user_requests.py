"""What an end user can ask of the memory in any chat (R22), answered before any model is asked.

* "stop remembering me" (and what people say for it: "delete my data", "forget everything", "I'd
  rather you didn't keep anything about me", "सब कुछ भूल जाओ"), anywhere in a message: exactly
  `memory_stop`, with an audit row of kind `end_user_request`; the commit empties the notes of
  their chats, this one included, so the rest of it does not lean on it.
* "forget that I work from Pune" / "remove what you know about my phone" / "can you forget how I
  like to be contacted?": the line(s) about it are removed (`actions.memory_forget`, audit row
  of kind `end_user_request`), the reply says what was removed, and what they said before that is not
  read yet is read later with it excluded.
* "remember me again" (after a stop): `memory_resume` and their yes recorded as consent; the
  next chat uses memory again, and nothing said before it is read.
* "what do you remember about me?": the lines, as the chat's agent would see them; in a chat that
  does not use memory, that this chat does not use it (and how to manage it).

Stop and forget work whether or not memory is used for the conversation. Recognition is plain
rules over the text, read from one data file per language (memory/store/request_phrases/<lang>.toml:
English, Spanish, French, German, Portuguese and Hindi in Devanagari and romanised; a new language
is a new file, and its replies a gettext catalogue in memory/locale/). A request is recognised by
its parts (a wish or refusal, a memory verb, what about), not by one fixed sentence; a message that
only looks like one ("don't forget to email me the receipt", "I forgot my password", "never mind,
forget it") is left to the normal reply.

Which lines a forget is about is read by meaning as far as plain rules can: the subject's words, the
English form of a name said in another language or script ("पुणे" is Pune: the guards' name table),
and the topic its words name ("how I like to be contacted" is the contact line, whatever channel it
names). When a subject cannot be compared with the lines at all, the reply says so instead of
claiming nothing about it is remembered.

Every chat surface asks `end_user_request` first (`surfaces.chat.send`).
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from agents.models import Conversation
from consent.models import Consent
from consent.services import consent_set
from memory import guards as policy
from memory.guards.sources import with_english_names
from memory.guards.text import plain, sentences, surface, words
from memory.models import Memory, MemoryRun
from memory.store.actions import memory_forget, memory_resume, memory_stop
from memory.store.note import note_lines, render_note
from memory.store.rows import memory_locked
from memory.store.selectors import memory_of

MAX_REQUEST_CHARS = 500  # a forget or show request is a short message; longer ones are not parsed for them
MAX_MESSAGE_CHARS = 4000  # a stop is looked for in any chat message (surfaces.chat.send.MAX_MESSAGE_CHARS)
MAX_PARTS = 60  # sentences per message, clauses per sentence
MIN_MATCH_SHARE = 0.5  # a line is "about" the subject when it holds at least half its words


@dataclass(frozen=True)
class EndUserRequest:
    kind: str  # "stop", "forget", "show" or "resume" ("remember me again")
    lang: str  # the phrase file it matched ("en", "es", "hi", ...): the language of the reply
    subject: str = ""  # for "forget": what to remove, in their words
    # "forget that ..." (explicit) vs a bare "forget the receipt", which is a request only when a
    # line holds its words (never by topic: "forget how much it costs" never takes the plan line)
    explicit: bool = True


# --- Recognising a request ------------------------------------------------------------------
# The phrases are data: memory/store/request_phrases/<lang>.toml, one file per language (patterns,
# politeness, stopwords). This code only compiles and applies them. The replies are below.

PHRASES_DIR = Path(__file__).resolve().parent / "request_phrases"
LANGUAGES = ("en", "es", "fr", "de", "pt", "hi")  # the order patterns are tried in; other files follow
_EDGE_CHARS = " \t.!?¿¡,;:\"'।"
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def _folded(value):
    """The file's text in NFKC, as the messages are matched: a Devanagari letter with a nukta typed
    in its one-character form ("ड़") is then the same as the two characters NFKC makes of it."""
    if isinstance(value, str):
        return unicodedata.normalize("NFKC", value)
    if isinstance(value, list):
        return [_folded(item) for item in value]
    if isinstance(value, dict):
        return {key: _folded(item) for key, item in value.items()}
    return value


def _load_phrases() -> dict[str, dict]:
    found = {path.stem: path for path in PHRASES_DIR.glob("*.toml")}
    order = [lang for lang in LANGUAGES if lang in found] + sorted(set(found) - set(LANGUAGES))
    phrases = {}
    for lang in order:
        with open(found[lang], "rb") as handle:
            phrases[lang] = _folded(tomllib.load(handle))
    return phrases


PHRASES = _load_phrases()


def _expand(pattern: str, words: dict) -> str:
    """The pattern with each {name} of the file's [words] put in, also inside another word's text."""
    for _round in range(5):
        expanded = _PLACEHOLDER.sub(lambda m: words[m.group(1)] if m.group(1) in words else m.group(0), pattern)
        if expanded == pattern:
            break
        pattern = expanded
    return pattern


def _alternation(key: str) -> str:
    items = [item for data in PHRASES.values() for item in data.get("polite", {}).get(key, [])]
    return "|".join(sorted(items, key=len, reverse=True))


_LEADING = re.compile(rf"^(?:{_alternation('leading')})\b[\s,!.]*")
_TRAILING = re.compile(rf"[\s,]*\b(?:{_alternation('trailing')})$")
_COMPILED_STOP, _COMPILED_SHOW, _COMPILED_RESUME, _COMPILED_FORGET = [], [], [], []
_FIRST_PERSON: dict[str, re.Pattern] = {}  # a subject about the person ("how I like ..."), per language
for _lang, _data in PHRASES.items():
    _vocab = _data.get("words", {})
    _requests = _data.get("requests", {})
    _COMPILED_STOP += [(_lang, re.compile(_expand(p, _vocab))) for p in _requests.get("stop", [])]
    _COMPILED_SHOW += [(_lang, re.compile(_expand(p, _vocab))) for p in _requests.get("show", [])]
    _COMPILED_RESUME += [(_lang, re.compile(_expand(p, _vocab))) for p in _requests.get("resume", [])]
    # explicit: true, false, or "first_person" (explicit when the subject is about the person)
    _COMPILED_FORGET += [
        (_lang, re.compile(_expand(f["pattern"], _vocab)), f.get("explicit", True)) for f in _requests.get("forget", [])
    ]
    if _vocab.get("first_person"):
        _FIRST_PERSON[_lang] = re.compile(_expand(_vocab["first_person"], _vocab))
# A word's end in any script: Devanagari's vowel signs are not \w, so \b cannot say where its words end.
_WORD_END = r"(?![\w\u0900-\u097F])"
# Each language's idioms apply to its own patterns only ("wo" is Hindi's "that", German's "where").
_IDIOMS = {
    lang: re.compile(rf"(?:{'|'.join(sorted(idioms, key=len, reverse=True))}){_WORD_END}(?!\s+(?:i|my|you)\b)")
    for lang, data in PHRASES.items()
    if (idioms := data.get("polite", {}).get("idiom", []))
}
_STOPWORDS = frozenset(
    word for data in PHRASES.values() for word in data.get("polite", {}).get("stopwords", "").split()
)
_CLAUSE = re.compile(rf",|\s(?:{_alternation('conjunctions')})\s")


def _normalise(text: str) -> str:
    """The folded form every pattern is matched on: the guards' surface view (NFKC, invisible
    characters out, digits in ASCII, spaces collapsed), lower case, quotes straightened, and
    greetings and politeness taken off both ends."""
    out = surface(text).lower()
    out = out.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    out = re.sub(r"\s+", " ", out).strip(_EDGE_CHARS)
    previous = None
    while previous != out:
        previous = out
        out = _LEADING.sub("", out).strip(_EDGE_CHARS)
        out = _TRAILING.sub("", out).strip(_EDGE_CHARS)
    return out


def _parts(text: str) -> list[str]:
    """A message's sentences, and each sentence's clauses, in order: where a stop request inside a
    longer message is looked for ("Thanks for the help. Please stop remembering me, I don't like
    it."). Each must still be the request as a whole, so "if you stop remembering me" is not one."""
    parts: list[str] = []
    for sentence in sentences(text, limit=MAX_PARTS):
        parts.append(sentence)
        parts.extend(clause for clause in _CLAUSE.split(sentence)[:MAX_PARTS] if clause.strip() and clause != sentence)
    return parts


def _stop_in(text: str) -> EndUserRequest | None:
    for part in _parts(text):
        normal = _normalise(part)
        for lang, pattern in _COMPILED_STOP:
            if normal and pattern.fullmatch(normal):
                return EndUserRequest("stop", lang)
    return None


def _whole(normal: str, *, bare_forget: bool = True) -> EndUserRequest | None:
    """The show or forget request `normal` (folded) is as a whole, or None."""
    if not normal:
        return None
    for lang, pattern in _COMPILED_SHOW:
        if pattern.fullmatch(normal):
            return EndUserRequest("show", lang)
    for lang, pattern in _COMPILED_RESUME:
        if pattern.fullmatch(normal):
            return EndUserRequest("resume", lang)
    for lang, pattern, explicit in _COMPILED_FORGET:
        if explicit is False and not bare_forget:
            continue
        match = pattern.fullmatch(normal)
        if match:
            subject = match.group("subject").strip(_EDGE_CHARS)
            idiom = _IDIOMS.get(lang)
            if not _words(subject) or (idiom and idiom.match(subject)):  # "forget it", "forget about that, it's fine"
                return None
            if explicit == "first_person":  # "forget how I like to be contacted", not "forget how much it costs"
                explicit = lang in _FIRST_PERSON and bool(_FIRST_PERSON[lang].search(subject))
                if not explicit and not bare_forget:
                    return None
            return EndUserRequest("forget", lang, subject=subject, explicit=bool(explicit))
    return None


def recognise(text: str) -> EndUserRequest | None:
    """The memory request this message makes, or None. A stop ("stop remembering me", "delete my
    data", "forget everything", "सब कुछ भूल जाओ", in the languages above) counts anywhere in a message,
    as one of its sentences or clauses. "What do you remember" and "forget that ..." count as the
    whole message (after greetings and "please") or as one of its sentences ("Thanks! Also, forget
    that I work from Pune."); a bare "forget the receipt" only as the whole message; a forget said
    as one clause of a sentence only when a line holds its words. So ordinary chat is never
    mistaken for one."""
    if not isinstance(text, str) or len(text) > MAX_MESSAGE_CHARS:
        return None
    stop = _stop_in(text)
    if stop is not None:
        return stop
    if len(text) <= MAX_REQUEST_CHARS:
        whole = _whole(_normalise(text))
        if whole is not None:
            return whole
    parts = sentences(text, limit=MAX_PARTS)
    if len(parts) >= 2:
        for sentence in parts:
            if len(sentence) <= MAX_REQUEST_CHARS:
                found = _whole(_normalise(sentence), bare_forget=False)
                if found is not None:
                    return found
    return _in_a_clause(parts)


def _in_a_clause(parts: list[str]) -> EndUserRequest | None:
    """A show or forget said as one clause of a sentence ("I changed my mind, forget that I'm
    moving"). A forget found there is taken only when a line holds its words (as a bare "forget"):
    a clause is too short a context to answer "nothing about that is remembered" to."""
    for sentence in parts:
        clauses = [clause for clause in _CLAUSE.split(sentence)[:MAX_PARTS] if clause.strip()]
        if len(clauses) < 2 or len(sentence) > MAX_REQUEST_CHARS:
            continue
        for clause in clauses:
            found = _whole(_normalise(clause), bare_forget=False)
            if found is not None and found.kind == "forget":
                return replace(found, explicit=False)
            if found is not None and found.kind == "show":
                return found
    return None


# --- Which lines a "forget" is about --------------------------------------------------------


def _stem(word: str) -> str:
    for suffix in ("ences", "ence", "ings", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
                word = word[:-1]  # preferred -> prefer, stopping -> stop
            return word
    if re.search(r"(?:ss|sh|ch|x)es$", word):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _words(text: str) -> set[str]:
    found = words(text.lower().replace("'s", ""), stopwords=_STOPWORDS)
    return {_stem(w) for w in found if not w.isdigit() or len(w) <= 4}


def _same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 3 and long_.startswith(short) and len(long_) - len(short) <= 2  # move ~ mov(ed)


def _topic_key(word: str) -> str:
    return _stem(plain(surface(word).lower()))


def _load_topics() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """(a word that names a topic, in any language -> its topics; a topic -> the English words of a
    memory line on it). Lines are written in English, so the line side is en.toml's [topic_lines]."""
    naming: dict[str, set[str]] = {}
    line_words: dict[str, set[str]] = {}
    for data in PHRASES.values():
        for topic, listed in data.get("topics", {}).items():
            for word in listed.split():
                naming.setdefault(_topic_key(word), set()).add(topic)
        for topic, listed in data.get("topic_lines", {}).items():
            line_words.setdefault(topic, set()).update(_topic_key(word) for word in listed.split())
    return (
        {word: frozenset(topics) for word, topics in naming.items()},
        {topic: frozenset(found) for topic, found in line_words.items()},
    )


_TOPIC_OF_WORD, _TOPIC_LINE_WORDS = _load_topics()
_LATIN = re.compile(r"[0-9a-z\u00c0-\u024f'-]+")


@dataclass(frozen=True)
class _Concept:
    """One word of a forget's subject: the forms a line may hold it in (its own, and the English
    form of a name said in another language or script), and the topics it names."""

    forms: frozenset[str]
    topics: frozenset[str]

    @property
    def comparable(self) -> bool:
        """Whether an English line could hold it: a Latin-script word, a known name or a topic."""
        return bool(self.topics) or any(_LATIN.fullmatch(form) for form in self.forms)


def _concepts(subject: str) -> list[_Concept]:
    folded = surface(subject).lower()
    concepts = []
    for word in words(folded.replace("'s", ""), stopwords=_STOPWORDS):
        if word.isdigit() and len(word) > 4:
            continue
        english = with_english_names(word)[len(word) :].split()  # "पुणे" -> "pune"
        forms = frozenset({_stem(word), *(_stem(name) for name in english)})
        topics = frozenset(topic for form in (word, *english) for topic in _TOPIC_OF_WORD.get(_topic_key(form), ()))
        concepts.append(_Concept(forms=forms, topics=topics))
    return [c for c in concepts if not all(form.isdigit() for form in c.forms)] or concepts


def _line_topics(line_words: set[str]) -> frozenset[str]:
    return frozenset(topic for topic, listed in _TOPIC_LINE_WORDS.items() if line_words & listed)


def lines_about(subject: str, lines: list[str], *, by_topic: bool = True) -> list[str]:
    """The lines a "forget <subject>" is about: those sharing the largest part of the subject's
    words, when that is at least half of them. A word counts as shared when the line holds it, the
    English form of a name it is ("पुणे", "zap"), or (with `by_topic`) a word of the topic it names
    ("contacted" and "Prefers email over phone."). Failing that, with `by_topic`, every line on a
    topic the subject names. Removing one line too many is the safe side (R10)."""
    concepts = _concepts(subject)
    if not concepts:
        return []
    scored = []
    for line in lines:
        said = words(line.lower().replace("'s", ""), stopwords=_STOPWORDS)
        have = {_stem(word) for word in said}
        topics = _line_topics({_topic_key(word) for word in said}) if by_topic else frozenset()
        shared = sum(
            1
            for concept in concepts
            if any(_same_word(form, word) for form in concept.forms for word in have) or concept.topics & topics
        )
        scored.append((shared / len(concepts), topics, line))
    best = max((share for share, _, _ in scored), default=0)
    if best >= MIN_MATCH_SHARE:
        return [line for share, _, line in scored if share == best]
    named = frozenset().union(*(concept.topics for concept in concepts)) if by_topic else frozenset()
    return [line for _, topics, line in scored if topics & named]


def subject_unreadable(subject: str) -> bool:
    """Whether some word of the subject could not be compared with English lines at all (a word in
    another script that is neither a known name nor a topic word): then "nothing matched" would be a
    guess, and the reply says it could not tell instead."""
    return any(not concept.comparable for concept in _concepts(subject))


# --- Replies --------------------------------------------------------------------------------
# In English here; the other languages are gettext catalogues, memory/locale/<lang>/LC_MESSAGES/
# django.po (compiled .mo committed beside it). A reply is in the language of the phrase file the
# request matched; a reply a language has no translation for is in English.

REPLIES = {
    "stopped": _(
        "Done. I've forgotten what I remembered about you, and I won't remember anything more from our chats."
    ),
    "already_stopped": _("I've already stopped remembering you. I keep nothing from our chats."),
    "removed": _("Done. I've removed this from what I remember about you: {lines}"),
    "hidden": _("{count} line(s) I can't repeat here"),
    "nothing_matched": _(
        "I don't have anything about that in what I remember about you, so there was nothing to remove. I won't keep it from what you said earlier either."
    ),
    "unclear": _(
        'I couldn\'t tell which of the things I remember about you that is, so I haven\'t removed anything yet. Ask "what do you remember about me?" to see them, then say "forget" with the words of the one to remove. I won\'t keep it from what you said earlier either.'
    ),
    "nothing_remembered": _(
        "I don't remember anything about you, so there was nothing to remove. I won't keep it from what you said earlier either."
    ),
    "show": _(
        'Here is what I remember about you:\n{lines}\nSay "forget ..." to remove one of these, or "stop remembering me" and I will keep nothing.'
    ),
    "show_empty": _("I don't remember anything about you yet."),
    "resumed": _("Done. I'll remember details from our chats again from now on. Nothing from before is brought back."),
    "not_stopped": _("You haven't asked me to stop remembering you, so nothing needs to change."),
    "show_stopped": _("I don't remember anything about you: you asked me to stop, so I keep nothing from our chats."),
    "show_off": _(
        'This chat does not use memory: nothing remembered about you is used here, and nothing from it is kept. In any chat you can say "forget ..." to remove something, or "stop remembering me" and I will keep nothing.'
    ),
}


def _reply(key: str, lang: str, **values) -> str:
    with translation.override(lang):
        return str(REPLIES[key]).format(**values)


def _quotable(line: str) -> bool:
    """A reply never quotes a line the policy would refuse (R7), even back to its owner."""
    return policy.line_refusal(line, check_categories=False) is None


def _quoted(lines: list[str], lang: str) -> str:
    shown = [f'"{line}"' for line in lines if _quotable(line)]
    hidden = len(lines) - len(shown)
    if hidden:
        shown.append(_reply("hidden", lang, count=hidden))
    return "; ".join(shown)


# --- Answering it ---------------------------------------------------------------------------


def _stop(conversation: Conversation, memory: Memory | None, lang: str, now: datetime) -> str:
    if memory is not None and memory.stopped_at is not None:
        return _reply("already_stopped", lang)
    memory_stop(end_user=conversation.end_user, kind=MemoryRun.Kind.END_USER_REQUEST, now=now)
    conversation.memory_note = ""  # the commit emptied their chats' notes: this one too
    return _reply("stopped", lang)


MAX_FORGET_SUBJECTS = 20
MAX_SUBJECT_CHARS = 300


def _pending_with(pending: dict | None, *, now: datetime, subject: str, removed: list[str]) -> dict:
    """The pending forget after one more: the chats before `now` are read with every subject and
    removed line excluded (kept only until the writer has read past it, then dropped)."""
    pending = pending or {"subjects": [], "lines": []}
    return {
        "before": now.isoformat(),
        "subjects": (pending["subjects"] + [subject[:MAX_SUBJECT_CHARS]])[-MAX_FORGET_SUBJECTS:],
        "lines": list(dict.fromkeys(pending["lines"] + removed))[-policy.MAX_LINES :],
    }


def _forget(conversation: Conversation, request: EndUserRequest, now: datetime) -> str | None:
    """Remove the lines about the subject now, and keep the rest of what they said: their chats
    not yet read are read later with the forgotten fact excluded (`Memory.forget_pending`), so
    nothing from before the forget brings it back, and nothing else said there is lost."""
    lang = request.lang
    with memory_locked(conversation.end_user, now) as memory:
        if memory.stopped_at is not None:
            return _reply("show_stopped", lang)
        lines = memory.lines
        removed = lines_about(request.subject, lines, by_topic=request.explicit)
        if not removed and not request.explicit:
            return None  # a bare "forget the receipt" that is about nothing remembered is ordinary chat
        gone = set(removed)
        kept = [line for line in lines if line not in gone and _quotable(line)]
        pending = _pending_with(memory.forget_pending, now=now, subject=request.subject, removed=removed)
        memory_forget(memory=memory, kept=kept, removed=removed, pending=pending, now=now)
    conversation.memory_note = render_note(note_lines(memory)) if conversation.uses_memory else ""
    if not removed:
        return _reply(_nothing_removed(request, lines), lang)
    return _reply("removed", lang, lines=_quoted(removed, lang))


def _nothing_removed(request: EndUserRequest, lines: list[str]) -> str:
    """Which reply says that no line was removed: never that nothing about it is remembered when
    the subject could not be compared with the lines (the person may be right)."""
    if not lines:
        return "nothing_remembered"
    return "unclear" if subject_unreadable(request.subject) else "nothing_matched"


def _resume(conversation: Conversation, memory: Memory | None, lang: str, now: datetime) -> str:
    """Their "remember me again" after a stop: exactly `memory.stop(false)`, a new horizon (nothing
    said before it is ever read), and their yes recorded as consent (source `chat_prompt`), as the
    chat's own question records it. What they say from now on, in this chat too, may be kept."""
    if memory is None or memory.stopped_at is None:
        return _reply("not_stopped", lang)
    memory_resume(end_user=conversation.end_user, kind=MemoryRun.Kind.END_USER_REQUEST, now=now)
    consent_set(end_user=conversation.end_user, agreed=True, source=Consent.Source.CHAT_PROMPT, now=now)
    return _reply("resumed", lang)


def _show(conversation: Conversation, memory: Memory | None, lang: str) -> str:
    if not conversation.uses_memory:
        return _reply("show_off", lang)  # this chat uses nothing remembered: it does not list it either
    if memory is not None and memory.stopped_at is not None:
        return _reply("show_stopped", lang)
    lines = memory.lines if memory else []
    if not lines:
        return _reply("show_empty", lang)
    shown = note_lines(memory)  # exactly what a chat's agent may see
    listed = "\n".join(f"- {line}" for line in shown)
    if len(shown) < len(lines):
        listed += "\n- (" + _reply("hidden", lang, count=len(lines) - len(shown)) + ")"
    return _reply("show", lang, lines=listed)


def end_user_request(conversation: Conversation, text: str, now: datetime | None = None) -> str | None:
    """The reply to an end user's memory request, having done what it asks; None when the
    message is not one. Works whether or not the conversation uses memory."""
    request = recognise(text)
    if request is None:
        return None
    now = now or timezone.now()
    memory = memory_of(conversation.end_user)
    if request.kind == "stop":
        return _stop(conversation, memory, request.lang, now)
    if request.kind == "show":
        return _show(conversation, memory, request.lang)
    if request.kind == "resume":
        return _resume(conversation, memory, request.lang, now)
    return _forget(conversation, request, now)


def end_user_memory_state(end_user) -> dict:
    """What the website chat shows an end user about their own memory: stopped or not."""
    memory = memory_of(end_user)
    stopped_at = memory.stopped_at if memory else None
    return {"stopped": stopped_at is not None, "stoppedAt": stopped_at.isoformat() if stopped_at else None}

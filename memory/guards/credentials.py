"""Credentials by meaning (R7): passwords, PINs, one-time codes, door codes, wifi keys, UPI PINs, security
answers, login pairs, URL credentials, and keys and tokens by vendor shape.

The words come from ``memory/guards/vocabulary/*.toml`` (every supported language); the grammar is here, once:

* a secret word, then at most four linking or possessive words, then a value: refused when the value holds a
  digit or a symbol (``PIN 4821``, ``pw hunter2``, ``code: 482913``), or, for a word that always names a
  secret, when a link stands before it and the value is not an ordinary word about the secret
  (``password is sunshine``, ``contraseña es girasol``; not ``password is reset``);
* the other order, value first (``hunter2 is my password``, ``hunter2 est mon mot de passe``), and Hindi's
  verb-last order (``mera password hunter2 hai``);
* a one-time code told in passing (``the code you sent me was 482913``): a secret word and a 4-8 digit
  number within a few words;
* security questions with an answer, login pairs (``login bob / hunter2``), ``user:pass@`` in a URL;
* vendor keys and tokens (``keys.toml``), then detect-secrets for what is left, only on lines holding a run
  of 16+ key characters.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Generator, Iterable, Mapping
from contextlib import closing
from functools import lru_cache
from typing import Any

from memory.guards.prefilter import prefiltered
from memory.guards.text import _LEET as _LEET_TABLE
from memory.guards.text import WORD_END, WORD_START, View, fold_word
from memory.guards.vocabulary import CueGate, cue_pattern, is_unspaced, vocabulary, word_alternation

_V = vocabulary().credentials
_STRONG = word_alternation(_V["strong"])
_WEAK = word_alternation(_V["weak"])
_SECRET_WORD = re.compile(rf"(?P<strong>{cue_pattern(_V['strong'])})|(?P<weak>{cue_pattern(_V['weak'])})")


def _folded_set(name: str) -> frozenset[str]:
    """A vocabulary list as the folded view spells its words (a file may write them with their accents: "là", "på")."""
    return frozenset(fold_word(w) for w in _V[name])


_LINKS = _folded_set("links")
_POSSESSIVES = _folded_set("possessives")
_SOFT_LINKS = _folded_set("soft_links")
_VALUE_STOP = _folded_set("value_stop")
_NOT_BEFORE = _folded_set("not_secret_before")
_TRAILING = _folded_set("trailing_links")
# In an unspaced script a label is written onto the cue ("予約番号" is a booking number, "注文番号" an order's).
_UNSPACED_LABELS = tuple(w for w in _NOT_BEFORE | _folded_set("not_a_code_before") if is_unspaced(w))
_LINK_PHRASES = tuple(sorted((link.split() for link in _LINKS if " " in link), key=len, reverse=True))

_TOKEN = re.compile(r"[^\s]+")
# Words joined by hyphens ("parental-control PIN", "auto-arm", "онлайн-банка"): a thing's name, not a password,
# unless a word that always names a secret says so ("password: purple-monkey-dishwasher").
_HYPHENATED_WORDS = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
# Sentence and clause marks of every script (the danda, CJK full stops and commas) are no symbol of a value.
_EDGE = ".,;!?()[]{}\u201c\u201d\u2018\u2019\"'\u00ab\u00bb\u201e\u0964\u0965\u3001\u3002\uff01\uff0c\uff1a\uff1b\uff1f\u060c\u061f"
# Words about a secret, not a secret ("reset", "réinitialisé", "बदला", "変更"), in every language: never a value.
_ABOUT_SECRET = re.compile(rf"(?:{word_alternation(_V['about_secret'])})")
_NOT_A_VALUE = re.compile(
    r"^(?:(?:19|20)\d\d|(?:19|20)\d\d[/.\-]\d{1,2}[/.\-]\d{1,2}|\d{1,2}(?:st|nd|rd|th|er|re|eme|[eºªo])?|(?:0?[1-9]|[12]\d|3[01])[/.\-](?:0?[1-9]|[12]\d|3[01])(?:[/.\-]\d{2,4})?|\d{1,2}[:.]\d{2}(?:am|pm)?|"
    r"\d{1,2}(?:am|pm)|[$\u00a3\u20ac\u20b9\u00a5]\S*|\S*%|\d+(?:x|k|gb|mb|tb|min|mins|s|h|hrs|days?)|"
    r"v?\d+(?:\.\d+)+|[\u05d1\u05dc\u05de\u05d4]-?\d{1,2})$"  # last: a Hebrew "on the 3rd" ("ב-3")
)
_OTP_NUMBER = re.compile(r"(?<![\d.,/\-])\d{4,8}(?![\d.,/\-]*\d)")
# Words that may open a short phrase between a secret word and its link ("for the portal", "on the app").
_ABOUT = frozenset(
    "for on of to at in from with para pour fur für furs fürs zum zur vom beim de do da du au aux sur dans en auf im am "
    "no na pro pra от для від bei hinten vorne atras derriere peeche".split()
)
_GET_IN = prefiltered(
    re.compile(
        r"(?<![\d.,/\-])\d{4,8}(?![\d.,/\-]*\d)\W+(?:\w+\s+){0,3}(?:to\s+)?(?:get|let|gets|lets|open|opens|unlock|unlocks)\s+"
        r"(?:me\s+|them\s+|you\s+|us\s+|him\s+|her\s+)?(?:in|into|the\s+(?:door|gate|lock|safe|locker))\b"
        r"|\b(?:get|let|gets|lets|open|opens|unlock|unlocks)\s+(?:\w+\s+){0,4}(?:with|using)\s+\d{4,8}\b"
    )
)
_CLAUSE_END = re.compile(r"[;.!?](?:\s|$)|,\s+(?:and|but|or)\s|\s(?:and|but)\s")
_OTP_WINDOW = 8  # words after a secret word in which a one-time code may be told

_QUESTION = re.compile(
    rf"{WORD_START}(?:{word_alternation(_V['security_questions'])}){WORD_END}[^\w(\[]*"
    # a note in brackets between the question and its answer ("maiden name (for verification): Castellanos")
    r"(?:[(\[][^)\]]{0,40}[)\]]\W*)?"
    rf"(?:(?:was|is|es|est|ist|e|era|war|lautet|hai)\b|[:=\-])?\s*\S+"
)
_LOGIN_PAIR = re.compile(
    rf"{WORD_START}(?:{word_alternation(_V['login'])}){WORD_END}\s*[:=]?\s*(?P<user>[^\s/|:]+)\s*"
    rf"(?:[/|:]|\s(?:pass|pw|pwd|password|passwort|contrase(?:n|ñ)a|senha|mot de passe|mdp)\s*[:=]?)\s*(?P<pw>[^\s]{{3,}})"
)
_URL_CREDENTIALS = prefiltered(re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:[^\s@/]+@", re.I))
# One regex for every vendor rule: one scan of the line instead of one per rule.
_KEYS = re.compile("|".join(f"(?:{rule['regex']})" for rule in vocabulary().keys))
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-+/=.:$~%]{16,}")
_AWS_PREFIXES = ("AKIA", "ABIA", "ACCA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "A3T")
_COMPOUND = re.compile(r"-[^\W\d_]")
_ORDER_NUMBER = re.compile(r"[A-Z0-9\-]{1,24}")
_KEY_RUN = re.compile(r"[A-Za-z0-9_\-+/=.:$~%{}\"]{12,}")
_KEY_WORD = re.compile(r"(?i)\b(?:bearer|basic|token|key|secret|sig|signature|session|sessionid|cookie|sid)\b")
_PRIVATE_KEY = prefiltered(re.compile(r"PRIVATE KEY|PuTTY-User-Key|AGE-SECRET-KEY", re.I))


def _clean(token: str) -> str:
    return token.strip(_EDGE)


def _labelled_cue(text: str, match: re.Match) -> bool:
    """The cue is part of another thing's name: "promo code", "código postal" (the word before it), "予約番号"
    (a label written onto it)."""
    before = text[: match.start()].split()
    named = match.group("strong") is not None and " " in match.group(0).strip()
    if before and _clean(before[-1]) in _NOT_BEFORE and not named:
        return True  # a secret's name of two words or more ("alarm code") is named already: "room alarm code" is one
    if _UNSPACED_LABELS:
        head = text[max(0, match.start() - 8) : match.end()]
        return head.endswith(_UNSPACED_LABELS) or text[match.start() : match.end() + 8].startswith(_UNSPACED_LABELS)
    return False


# A site's name ("mot de passe impots.gouv", "senha do gov.br"): what the password is for, not the password.
_SITE_NAME = re.compile(r"(?:[a-z][a-z\-]*\.)+(?:com|org|net|gov|gouv|gob|gv|br|fr|de|es|pt|in|it|nl|pl|uk|co|io|app)")


def _has_secret_shape(value: str) -> bool:
    """A value with a digit or a symbol, not a date, a time, a year, a price, a small count or a site's name."""
    if len(value) < 3 or _NOT_A_VALUE.match(value) or _ELIDED_WORD.fullmatch(value) or _is_s10(value):
        return False
    if _SITE_NAME.fullmatch(value):
        return False
    # a vowel sign (Devanagari's, say) is part of a word, not a symbol
    return any(c.isdigit() for c in value) or any(
        not c.isalnum() and not unicodedata.category(c).startswith("M") for c in value
    )


def _is_word_value(value: str) -> bool:
    """An ordinary word may be a password ("sunshine") when a link names it as one."""
    return (
        len(value) >= 3
        and value not in _VALUE_STOP
        and not _ABOUT_SECRET.fullmatch(value)
        and value not in _POSSESSIVES
        and not (value.isalpha() and value.isascii() and value.endswith(("ed", "ing")))
    )


def _after_word(tokens: list[str], start: int) -> tuple[bool, int]:
    """Skip links and possessives after a secret word: (a link was seen, index of the value token)."""
    linked = False
    index = start
    skipped = 0
    while index < len(tokens) and skipped < 4:
        token = _clean(tokens[index]) if tokens[index] not in (":", "=", "-", "#", ":-") else tokens[index]
        if token in (":", "=", "-", "#", ":-", "->", "\u2192") or not token:
            linked = linked or token in (":", "=", "-", ":-", "->", "\u2192")
            index, skipped = index + 1, skipped + 1
            continue
        phrase = next((p for p in _LINK_PHRASES if [_clean(t) for t in tokens[index : index + len(p)]] == p), None)
        if phrase:
            linked, index, skipped = True, index + len(phrase), skipped + 1
            continue
        if token in _LINKS:
            linked, index, skipped = True, index + 1, skipped + 1
            continue
        if token in _POSSESSIVES or token in _SOFT_LINKS:
            index, skipped = index + 1, skipped + 1
            continue
        break
    return linked, index


def _value_after_word(value: str, quoted: bool, linked: bool, strong: bool, tokens: list[str], index: int) -> bool:
    if not strong and not quoted and _HYPHENATED_WORDS.fullmatch(value):
        return False  # "alarm to auto-arm": words joined by a hyphen after a word that is not always a secret's
    if _has_secret_shape(value) or (quoted and len(value) >= 2):
        return True
    if (linked or strong) and re.fullmatch(r"\d{4,8}", value):
        return True  # "PIN is 1987", "गेट का कोड 1974": after a link or a strong word, a year-shaped number is the code
    if strong and linked and _is_word_value(value):
        return True
    return index + 1 < len(tokens) and _clean(tokens[index + 1]) in _TRAILING and _is_word_value(value)


def _skip_cue(folded: str, match: re.Match) -> bool:
    """A cue that names something else: a label's ("promo code"), a compound ("password-manager", "pin-less"),
    a postcode ("code postal 75011", "código postal")."""
    if _labelled_cue(folded, match):
        return True
    rest = folded[match.end() :]
    if _COMPOUND.match(rest):
        return True
    return _names_something_else(rest)


def _names_something_else(rest: str) -> bool:
    """The word or two after a cue make it another thing's name ("código postal", "código de rastreio")."""
    following = [_clean(word) for word in rest.split(maxsplit=2)[:2]]
    return bool(following) and (following[0] in _NOT_AFTER_CUE or " ".join(following) in _NOT_AFTER_CUE)


# The cues that name a secret made of words ("passphrase", "frase de acceso", "phrase secrète", "Merksatz").
_PHRASE_CUE = re.compile(r"phras|frase|satz|fraza|ifade|фраз")
# A short note in brackets right after a cue ("security code (back of card) is 417"): passed over.
_NOTE_AFTER_CUE = re.compile(r"\s*[(\[][^)\]]{0,40}[)\]]")
# An opening quote standing alone before a value ("phrase secrète : « le chat ... »"): joined to it.
_LONE_QUOTES = ("\u00ab", "\u201e", "\u201c", '"', "\u300c")


def _digits_joined(tokens: list[str]) -> list[str]:
    """Three or more digits told one by one ("CVC: 0 4 4", "सीवीवी 5 1 3"): one value."""
    joined: list[str] = []
    run: list[str] = []
    for token in [*tokens, ""]:
        if len(_clean(token)) == 1 and _clean(token).isdigit():
            run.append(token)
            continue
        if len(run) >= 3:
            joined.append("".join(_clean(digit) for digit in run) + run[-1][len(_clean(run[-1])) :])
        else:
            joined.extend(run)
        run = []
        if token:
            joined.append(token)
    return joined


def _phrase_value(words: list[str]) -> bool:
    """Three words that read as a chosen phrase, not as a sentence about it ("set in the app")."""
    cleaned = [_clean(word) for word in words]
    return (
        len(cleaned) == 3
        and sum(word in _VALUE_STOP for word in cleaned) <= 1
        and not any(_ABOUT_SECRET.fullmatch(word) for word in cleaned)
    )


def _tokens_after(rest: str) -> tuple[list[str], bool]:
    """The tokens after a cue, and whether a colon or equals sign is glued to it ("password: x", "pin=1234")."""
    note = _NOTE_AFTER_CUE.match(rest)
    if note:
        rest = rest[note.end() :]
    glued = rest[:1] in (":", "=")
    tokens = _TOKEN.findall(rest)
    for i in range(len(tokens) - 1):
        if tokens[i] in _LONE_QUOTES:
            tokens[i : i + 2] = ['"' + tokens[i + 1], ""]
    tokens = _digits_joined([token for token in tokens if token])
    if glued and tokens and tokens[0] not in (":", "="):
        tokens[0] = tokens[0][1:]
        if not tokens[0]:
            tokens.pop(0)
    return tokens, glued


_LINK_AFTER_ABOUT = 7  # words of a phrase ("for the ...") between a secret word and its link


# Spanish "del", "al" open a phrase after a word that always names a secret ("frase secreta del broker: ..."),
# not after "clave" or "chave", which are also "key" ("la clave del éxito es la paciencia").
_ABOUT_STRONG = _ABOUT | {"del", "al"}
_ALSO_KEY = frozenset({"clave", "chave", "la clave", "a chave"})


def _link_and_value(tokens: list[str], glued: bool, strong: bool = False) -> tuple[bool, int]:
    linked, index = _after_word(tokens, 0)
    if linked or glued:
        return True, index
    # "the password for the portal is bluebird", "the passphrase for the password manager vault is ...": a link
    # a few words on
    if not tokens or _clean(tokens[0]) not in (_ABOUT_STRONG if strong else _ABOUT):
        return False, index
    for skip in range(1, min(_LINK_AFTER_ABOUT, len(tokens))):
        if _clean(tokens[skip]) in _LINKS:
            return _after_word(tokens, skip)
        if tokens[skip - 1].endswith(":"):  # "gate code for the back yard: 1936*"
            return True, skip
    return False, index


# Japanese and Korean particles joined between the secret word and a word about it ("パスワードを変更済み").
_JOINED_PARTICLES = "をはがもの을를은는이가도"


def _value_verdict(match: re.Match, rest: str) -> bool | None:
    """Whether the value after the cue is the secret; ``None`` for a postcode after "PIN code"."""
    tokens, glued = _tokens_after(rest)
    strong = match.group("strong") is not None
    linked, index = _link_and_value(tokens, glued, strong and match.group("strong").strip() not in _ALSO_KEY)
    if index >= len(tokens):
        return False
    raw = tokens[index]
    value = _clean(raw)
    if _postcode_after_pin(match.group(0), value):
        return None
    if is_unspaced(value) and _ABOUT_SECRET.match(value.lstrip(_JOINED_PARTICLES)):
        return False  # "パスワード変更済み": a word about the secret written onto it, in a script without spaces
    if linked and _PHRASE_CUE.search(match.group(0)) and _phrase_value(tokens[index : index + 3]):
        return True  # a pass phrase is words, whatever the first one ("frase de acceso: tres tristes tigres")
    # a word about the secret ("password reset", "logs in with the 2FA app"): only a code told later counts
    quoted = raw[:1] in "\"'\u201c\u2018\u00ab\u201e\u300c"
    return value not in _VALUE_STOP and _value_after_word(value, quoted, linked, strong, tokens, index)


def _code_told_later(match: re.Match, rest: str) -> bool:
    """A one-time code told a few words later ("the code you sent me was 482913")."""
    clause = _CLAUSE_END.split(rest, maxsplit=1)[0]
    window = " ".join(_TOKEN.findall(clause)[:_OTP_WINDOW])
    for number in _CODE.finditer(window):
        if _NOT_A_VALUE.match(number.group(0)) or window[: number.start()].rstrip().endswith("+"):
            continue
        if _postcode_after_pin(match.group(0), number.group(0)) or _number_label_before(window[: number.start()]):
            continue
        return True
    return False


def _word_then_value(folded: str) -> bool:
    for match in _SECRET_WORD.finditer(folded):
        if _skip_cue(folded, match):
            continue
        rest = folded[match.end() :]
        verdict = _value_verdict(match, rest)
        if verdict is None:
            continue
        if verdict or _code_told_later(match, rest):
            return True
    return False


_VALUE_FIRST = re.compile(
    rf"(?P<value>[^\s]{{3,}})\s+(?:(?:{word_alternation(_V['links'])})\s+)?(?:(?:{word_alternation(_V['possessives'])})\s+)*"
    rf"(?:(?P<strong>{_STRONG})|(?P<weak>{_WEAK})){WORD_END}(?P<after>\s+\S+)?"
)


def _value_then_word(folded: str) -> bool:
    for match in _VALUE_FIRST.finditer(folded):
        value = _clean(match.group("value"))
        if value in _LINKS or value in _POSSESSIVES or value in _VALUE_STOP or value in _COMMON_SUBJECTS:
            continue
        if _ABOUT_SECRET.fullmatch(value):
            continue
        words = folded[
            match.start("value") : match.start("strong") if match.group("strong") else match.start("weak")
        ].split()
        # a word that is both a link and a possessive right before the cue is the possessive ("zijn wachtwoord")
        links_seen = [i for i, w in enumerate(words[1:], start=1) if _clean(w) in _LINKS]
        has_link = any(i < len(words) - 1 or _clean(words[i]) not in _POSSESSIVES for i in links_seen)
        trailing = _clean((match.group("after") or "").strip()) in _TRAILING
        if not (has_link or trailing):
            continue
        if _has_secret_shape(value):
            return True
        if match.group("strong") and _is_word_value(value):
            return True
    return False


# Words that start an ordinary sentence about a secret ("This is the password manager they use").
_COMMON_SUBJECTS = frozenset(
    "this that which what it there here who where why how when email phone sms app login account card security "
    "mine yours theirs his hers ours name word code pin key number sso okta google microsoft apple".split()
)


_LEET_CHARS = frozenset("0134578!|@$9+")
_STRONG_SINGLE = frozenset(fold_word(w).rstrip("*") for w in _V["strong"] if " " not in w)


def _obfuscated_secret_word(surface: str) -> bool:
    """A secret word written in leetspeak (``P@$$w0rd!``): the obfuscation is itself the tell."""
    for token in surface.casefold().split():
        if _LEET_CHARS.isdisjoint(token):
            continue  # no look-alike in it
        core = token.strip(_EDGE)
        if core.translate(_LEET_TABLE).strip("!|") in _STRONG_SINGLE:
            if any(c.isalpha() for c in core) and not core.isalpha():
                return True
    return False


# ---------------------------------------------------------------------------------------------
# Find the value, then the reason (issue 24): a password- or code-shaped value near a secret word of any
# language in the same clause, with up to several words between, in either order.
# ---------------------------------------------------------------------------------------------

_CLAUSE_BREAK = re.compile(
    r"(?<=[^\W\d_]{2})[.;!?](?:\s|$)|;\s|[\u3002\uff01\uff1f\uff1b\u061f\u0964]|\s(?:but|pero|mais|aber|mas|lekin|ama|но|maar|ale|tapi)\s"
)
# A code: 4-8 digits, written whole or in groups of two to four ("41 07 93", "4821-9930").
_CODE = re.compile(
    r"(?<![\w@/.,:+#\-])(?<!\d\s)(?<!\+\d\d\s)(?:\d{2,4}(?:[ \-]\d{2,4}){1,3}|\d(?:[ .\-]\d){3,7}|\d{4,8})(?![\w@/:%]|[.,]\d|-\w|\s\d)"
)
# A password: 4 to 64 characters of letters, digits and symbols, with a digit or a symbol among letters.
# Letters of the alphabetic scripts (Latin, Greek, Cyrillic: "Берёзка_2023"), not of the unspaced ones, where a
# digit beside a word ("2024年に") is no password.
_PASSWORD_CHARS = r"0-9A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u052f!@#$%^&*_+=~?.\-"
_WORDISH = re.compile(rf"(?<![\w@/.:\-])[{_PASSWORD_CHARS}]{{4,64}}(?<![.?\-])(?![\w@/])")
_NOT_A_PASSWORD = re.compile(
    r"^(?:\d+(?:[.,:/\-]\d+)*(?:[a-z]{1,3})?|v?\d+(?:\.\w+)+|\d+-[a-z]+(?:-[a-z]+)*|[a-z]+-\d{1,2}|[a-z]+\d?|"
    r"[a-z]{1,3}\d{1,2}|\d{1,2}[a-z]{1,3}|(?:i?os|android|windows|win|macos|ubuntu|iphone|ipad|pixel|galaxy|wifi|wi-fi|"
    r"python|java|php|html|css|usb|hdmi|mp|gpt|web|office|ms|oauth|http|https|utf|sha|md|aes|rsa|tls|ssl|ipv)[\w.\-]*)$",
    re.I,
)
_NOT_A_CODE_BEFORE = _folded_set("not_a_code_before")
_NOT_AFTER_CUE = _folded_set("not_secret_after")
_NEAR_AFTER = 12  # words between a secret word and its value
_NEAR_BEFORE = 5  # words between a value and the secret word after it
_LAST_FOUR = re.compile(r"(?:ending|ends|last|final|terminad[ao]|termine|endet|finais|finale)\W+(?:\w+\W+)?$")


def _postcode_after_pin(cue: str, value: str) -> bool:
    """India's "PIN code 560001" is a postcode: six digits after "pin code" or "pincode"."""
    return ("pin" in cue or "पिन" in cue) and ("code" in cue or "कोड" in cue) and len(value) == 6 and value.isdigit()


# Between a value and the secret word after it: "as the", "is my", "for their", "(" ("sunflower (password)").
_POSSESSIVE_WORDS = word_alternation(_V["possessives"])
_AS_THE = re.compile(
    rf"^\s*(?:\(|(?:as|for|als|como|comme|come|is|was|es|est|ist|e|era|war)\s+(?:(?:{_POSSESSIVE_WORDS})\s+){{0,2}})\s*$"
)
_WORD_AS_SECRET = re.compile(
    rf"(?P<value>[^\s()]{{3,40}})\s+(?:\(\s*|(?:as|for|als|como|comme|come)\s+(?:(?:{_POSSESSIVE_WORDS})\s+){{0,2}})"
    rf"(?:{_STRONG}){WORD_END}(?!\s+(?:manager|managers|app|vault|reset|policy|generator|field|box|screen|page|link|rules))"
)
# A token holding a secret word is a product or a compound ("1Password", "passwordless"), not a value.
_HOLDS_SECRET_WORD = re.compile(
    "|".join(
        re.escape(w)
        for w in sorted({fold_word(w).rstrip("*") for w in _V["strong"]}, key=len, reverse=True)
        if " " not in w and len(w) >= 4
    )
)


def _word_as_secret(folded: str) -> bool:
    """An ordinary word named as the secret after it: "uses sunflower as their password", "sunflower
    (password)"."""
    for match in _WORD_AS_SECRET.finditer(folded):
        value = _clean(match.group("value"))
        if _postcode_after_pin(match.group(0) + folded[match.end() : match.end() + 6], value):
            continue  # "110001 (PIN code)": India's postcode named after it
        if value and _is_word_value(value) and value not in _LINKS and value not in _COMMON_SUBJECTS:
            if value not in _VALUE_STOP_BEFORE and not _HOLDS_SECRET_WORD.search(value):
                return True
    return False


# A UPU S10 item number ("NL994580734BR": two letters, eight digits and their check digit, two letters), the
# shape of every postal tracking code: a parcel, not a password, when its check digit holds.
_S10 = re.compile(r"[a-z]{2}(\d{8})(\d)[a-z]{2}", re.I)
_S10_WEIGHTS = (8, 6, 4, 2, 3, 5, 9, 7)


def _is_s10(token: str) -> bool:
    match = _S10.fullmatch(token)
    if not match:
        return False
    check = 11 - sum(int(d) * w for d, w in zip(match.group(1), _S10_WEIGHTS, strict=True)) % 11
    return int(match.group(2)) == {10: 0, 11: 5}.get(check, check)


# A word with an elided article or a contraction ("l'app", "dell'account", "don't"): letters and one apostrophe
# are a word, not a symbol-bearing secret.
_ELIDED_WORD = re.compile(r"[^\W\d_]{1,6}['\u2019][^\W\d_]+")


def _password_shaped(token: str) -> bool:
    if len(token) < 4 or _NOT_A_PASSWORD.match(token) or _NOT_A_VALUE.match(token) or _is_s10(token):
        return False
    if _SITE_NAME.fullmatch(token.lower()):
        return False
    letters = any(c.isalpha() for c in token)
    digits = any(c.isdigit() for c in token)
    symbols = any(not c.isalnum() for c in token.strip(".-"))
    return (letters and digits) or (symbols and (letters or digits) and len(token) >= 6)


def _number_label_before(text: str) -> bool:
    words = text.split()[-2:]
    return any(_clean(word) in _NOT_A_CODE_BEFORE for word in words) or bool(_LAST_FOUR.search(text))


def _cues(clause: str):
    for match in _SECRET_WORD.finditer(clause):
        if _labelled_cue(clause, match):
            continue
        if _names_something_else(clause[match.end() :]):
            continue
        if _COMPOUND.match(clause[match.end() :]):
            continue
        yield match


def _words_between(text: str) -> int:
    # Unspaced scripts: every two characters count as a word.
    count = 0
    for token in text.split():
        unspaced = sum(1 for c in token if ord(c) >= 0x3040)
        count += 1 + unspaced // 2 if unspaced else 1
    return count


def _values_in(clause: str) -> list[tuple[int, int, str, str]]:
    """Every code-shaped and password-shaped value of a clause: (start, end, shape, token)."""
    values = []
    for match in _CODE.finditer(clause):
        digits = re.sub(r"\D", "", match.group(0))
        if 4 <= len(digits) <= 8 and not _NOT_A_VALUE.match(match.group(0)):
            if not _number_label_before(clause[: match.start()]):
                values.append((match.start(), match.end(), "code", match.group(0)))
    for match in _WORDISH.finditer(clause):
        token = match.group(0)
        if _password_shaped(token) and not _HOLDS_SECRET_WORD.search(token) and not _HYPHENATED_WORDS.fullmatch(token):
            if not _number_label_before(clause[: match.start()]):  # "serial NK4-2291-8830", "model X7-22"
                values.append((match.start(), match.end(), "password", token))
    return values


def _value_before_cue(gap: str, shape: str, token: str = "", cue: str = "") -> bool:
    """A value then its cue: a password a few words before ("Tulip-93 is what I use as the password"), a code
    named by "as the" or "is the" ("uses 4821 as the PIN", "4821 is the code"); not India's postcode named
    after it ("560034 (PIN code)")."""
    if _postcode_after_pin(cue, token) or set(gap.split()) & _VALUE_STOP_BEFORE:
        return False
    if not gap.strip() and _HYPHENATED_WORDS.fullmatch(token):
        return False
    if shape == "password":
        return _words_between(gap) <= _NEAR_BEFORE
    return bool(_AS_THE.match(gap))


def _value_after_cue(gap: str, cue: re.Match, token: str) -> bool:
    if _postcode_after_pin(cue.group(0), token):
        return False
    return _words_between(gap) <= _NEAR_AFTER and not (set(map(_clean, gap.split())) & _GAP_STOP)


def _near(clause: str, cue: re.Match, value: tuple[int, int, str, str]) -> bool:
    start, end, shape, token = value
    if end <= cue.start():
        return _value_before_cue(clause[end : cue.start()], shape, token, cue.group(0))
    return start >= cue.end() and _value_after_cue(clause[cue.end() : start], cue, token)


def _value_near_cue(folded: str) -> bool:
    for clause in _CLAUSE_BREAK.split(folded):
        cues = list(_cues(clause))
        if cues and any(_near(clause, cue, value) for value in _values_in(clause) for cue in cues):
            return True
    return False


# Between a value and the secret word after it, words that make the value something else ("iOS17 then
# reset the password"); between a secret word and a value, words that start another matter.
_VALUE_STOP_BEFORE = frozenset(
    "reset resets changed changes change update updated forgot forgotten recover recovered then and via using "
    "without no not never".split()
)
_GAP_STOP = frozenset(
    "order tracking invoice ticket booking flight room ref reference version model plan seats users orders "
    "days hours minutes weeks months years".split()
)


# ---------------------------------------------------------------------------------------------
# Seed phrases (BIP-39 word lists, from the mnemonic package) and TOTP setup keys
# ---------------------------------------------------------------------------------------------

_SEED_ALONE = 12  # words of one BIP-39 list in a row: a seed phrase whatever is said around it
_SEED_NEAR_CUE = 6  # in a row beside a seed word ("wallet", "recovery phrase", ...)
_SEED_CUES = re.compile(cue_pattern(_V["seed_cues"]))
_TOTP_CUES = re.compile(cue_pattern(_V["totp_cues"]))
_SEED_GATE = CueGate(_V["seed_cues"])
_TOTP_GATE = CueGate(_V["totp_cues"])
_SECRET_GATE = CueGate(_V["strong"] + _V["weak"])
_QUESTION_GATE = CueGate(_V["security_questions"])
_LOGIN_GATE = CueGate(_V["login"])
_BASE32_KEY = re.compile(r"(?<![A-Za-z0-9])(?:[A-Za-z2-7]{4}[ \-]?){3,15}[A-Za-z2-7]{4,}=*(?![A-Za-z0-9])")
_OTPAUTH = prefiltered(re.compile(r"otpauth://", re.I))
_SEED_EDGE = ".,;:!?()[]\"'\u3001\u3002"


@lru_cache(maxsize=1)
def _bip39_words() -> dict[str, int]:
    """Every BIP-39 word (folded) and a bit for each list it is in."""
    from mnemonic import Mnemonic

    from memory.guards.text import fold_word

    masks: dict[str, int] = {}
    for bit, language in enumerate(Mnemonic.list_languages()):
        for word in Mnemonic(language).wordlist:
            masks[fold_word(word)] = masks.get(fold_word(word), 0) | (1 << bit)
    return masks


_SPACED_HAN = re.compile(r"(?:[\u4e00-\u9fff][\s\u3000]+){5,}[\u4e00-\u9fff]")


def _bip39_run(tokens: list[str]) -> int:
    """The longest run of tokens sharing a BIP-39 list."""
    masks = _bip39_words()
    run = best = mask = 0
    for raw in tokens:
        token = raw.strip(_SEED_EDGE)
        found = masks.get(token, 0)
        if not found:  # not a list's word: the run ends, unless it is numbering
            if token and not token.rstrip(".)").isdigit():
                run = mask = 0
            continue
        shared = mask & found
        run, mask = (run + 1, shared) if run and shared else (1, found)
        best = max(best, run)
    return best


def seed_phrase_in(v: View) -> bool:
    """A run of words all from one BIP-39 list: twelve in a row, or six beside a seed word. Numbering
    ("1. abandon 2. ability") is skipped. One look-up a word: each word carries the lists it is in, and a
    run goes on while the words share a list."""
    best = _bip39_run(v.folded.split())
    if best < _SEED_NEAR_CUE and _SPACED_HAN.search(v.surface):
        # the folded view joins characters typed one by one ("双 痕 斗" is "双痕斗"): a Chinese list's words are
        # characters, read where the person spaced them
        best = _bip39_run(v.surface.split())
    if best >= _SEED_ALONE:
        return True
    return best >= _SEED_NEAR_CUE and (_cue_in(v, _SEED_GATE, _SEED_CUES) or _cue_in(v, _SECRET_GATE, _SECRET_WORD))


def totp_key_in(v: View) -> bool:
    """An ``otpauth://`` URL, or a base32 key (16+ characters of A-Z and 2-7, grouped or not, with a digit)
    beside a TOTP word ("setup key", "authenticator", "2FA")."""
    if _OTPAUTH.search(v.surface):
        return True
    if not (_cue_in(v, _TOTP_GATE, _TOTP_CUES) or _cue_in(v, _SECRET_GATE, _SECRET_WORD)):
        return False  # a key counts only beside one of these words: without them, none is looked for
    for match in _BASE32_KEY.finditer(v.surface):
        key = re.sub(r"[ \-=]", "", match.group(0))
        groups = re.split(r"[ \-]", match.group(0).rstrip("="))
        uneven = len({len(group) for group in groups[:-1]}) > 1 or len(groups[0]) > 8
        if len(groups) > 1 and uneven:
            continue  # a key is shown in even groups or whole, not as a word then a code ("confirmation HX7Q2P")
        if not (key.isupper() or key.islower() or key.isdigit()):
            continue  # nor in mixed case
        if len(key) >= 16 and any(c.isdigit() for c in key) and any(c.isalpha() for c in key):
            return True
    return False


def _cue_in(v: View, gate: CueGate, pattern: re.Pattern) -> bool:
    """The cue regex, searched only when the line's words let one of its words be there."""
    return gate.open(v) and pattern.search(v.folded) is not None


# ---------------------------------------------------------------------------------------------
# A credential without its name (issue 24): "Portal access works with Nieve_2024x", "Sarenka_55 gets them
# into the shop account". An access word (sign-in, account, opens, банкинг ...) in the clause and a value
# only a password looks like: letters, digits and a symbol or a capital, lower case among them.
# ---------------------------------------------------------------------------------------------

_ACCESS_CUES = re.compile(cue_pattern(_V["access_cues"]))
_ACCESS_GATE = CueGate(_V["access_cues"])
# Not "_" nor ".": a user name ("priya_s2") has those; a handle starts with "@".
_STRONG_SYMBOLS = frozenset("!@#$%^&*+=~?")


def _strong_password(token: str) -> bool:
    core = token.strip(".")
    if len(core) < 6 or core[0] == "@" or not _password_shaped(core):
        return False
    if "@" in core and "." in core.split("@")[-1]:
        return False  # an e-mail address is a way to reach them
    lower = any(c.islower() for c in core)
    digit = any(c.isdigit() for c in core)
    marked = any(c in _STRONG_SYMBOLS for c in core) or any(c.isupper() for c in core)
    return lower and digit and marked and not _HOLDS_SECRET_WORD.search(core.casefold())


def unnamed_credential_in(v: View) -> bool:
    """A password-only value beside an access word in the same clause, whatever the order."""
    if not _ACCESS_GATE.open(v) or not _ACCESS_CUES.search(v.folded):
        return False
    for clause in _CLAUSE_BREAK.split(v.surface):
        tokens = [
            m.group(0)
            for m in _WORDISH.finditer(clause)
            if _strong_password(m.group(0)) and not _USER_BEFORE.search(fold_word(clause[: m.start()]))
        ]
        if tokens and _ACCESS_CUES.search(fold_word(clause)):
            return True
    return False


# "logs in as PriyaS2", "username PriyaS2": a user name, not the password
_USER_BEFORE = re.compile(rf"(?:{WORD_START}(?:as|{word_alternation(_V['login'])}){WORD_END})\W*$")


# A user name and a password said as a pair without a word naming either ("fürs Portal nehm ich j.becker und
# Ahornblatt9", "Login: j.becker, Ahornblatt9"): a user-name-shaped token (letters joined by "." or "_", or an
# e-mail address), a comma, slash or joining word of any language, then a token only a password looks like.
_USER_THEN_PASSWORD = re.compile(
    r"(?<![\w@.\-])(?P<user>[a-z][a-z0-9]*(?:[._][a-z0-9]+)+(?:@[a-z0-9\-]+(?:\.[a-z0-9\-]+)+)?"
    r"|[a-z0-9][a-z0-9._%+\-]*@[a-z0-9\-]+(?:\.[a-z0-9\-]+)+)"
    rf"\s*(?:[,/|]\s*|\s+(?:{word_alternation(_V['pair_joins'])})\s+)(?P<pw>\S+)",
    re.I,
)
# A name ending in one of these is a site or a file, not a user ("example.com, Shop2024", "node.js and Python3").
_SITE_ENDINGS = frozenset(
    "com net org io de fr es it nl pl pt br in uk co app dev info biz eu ru tr jp cn kr id se "
    "js ts py rb go php txt pdf csv doc docx xls xlsx png jpg zip exe json".split()
)


# A "." "_" or "@" between two letters or digits, found from the mark (a scan that jumps between marks).
_INNER_MARK = re.compile(r"[._@](?<=[^\W_][._@])(?=[^\W_])")


def _user_and_password(surface: str) -> bool:
    if not _INNER_MARK.search(surface):
        return False
    # A user name holds a "." "_" or "@" and no space: no pair starts before the word the first of them is in.
    first_mark = min(at for at in (surface.find("."), surface.find("_"), surface.find("@")) if at >= 0)
    for match in _USER_THEN_PASSWORD.finditer(surface, surface.rfind(" ", 0, first_mark) + 1):
        user = match.group("user")
        if sum(c.isalpha() for c in user) < 3 or (
            "@" not in user and re.split(r"[._]", user)[-1].lower() in _SITE_ENDINGS
        ):
            continue  # "i.e.", "e.g.", a site's name
        if _pair_password(match.group("pw").strip(_EDGE)):
            return True
    return False


def _pair_password(token: str) -> bool:
    """The second of a pair: 6+ characters with letters and a digit, and a capital among lower case or a symbol (a
    word and one digit, "Ahornblatt9", is enough here: the pair already says what it is)."""
    if len(token) < 6 or "@" in token or _NOT_A_VALUE.match(token) or _HOLDS_SECRET_WORD.search(token.casefold()):
        return False
    letters = any(c.isalpha() for c in token)
    digit = any(c.isdigit() for c in token)
    mixed = any(c.isupper() for c in token) and any(c.islower() for c in token)
    return letters and digit and (mixed or any(c in _STRONG_SYMBOLS for c in token))


def _question_answered(folded: str) -> bool:
    """A security question with its answer after it; "change the security question on the account" names none:
    the word after it is a preposition, an article or a word about the secret."""
    for match in _QUESTION.finditer(folded):
        answer = _clean(match.group(0).split()[-1])
        if answer and answer not in _ABOUT and answer not in _VALUE_STOP and answer not in _POSSESSIVES:
            if not _ABOUT_SECRET.fullmatch(answer) and answer not in _QUESTION_NOT_ANSWER:
                return True
    return False


_QUESTION_NOT_ANSWER = frozenset("and or but please too also again as".split())


def password_in(v: View) -> bool:
    """A password, PIN, one-time code, door code, wifi key, security answer or login pair, in any language."""
    folded = v.folded
    has_word = _cue_in(v, _SECRET_GATE, _SECRET_WORD)
    return bool(
        (
            has_word
            and (
                _word_then_value(folded)
                or _value_then_word(folded)
                or _value_near_cue(folded)
                or _word_as_secret(folded)
            )
        )
        or (_QUESTION_GATE.open(v) and _question_answered(folded))
        or _GET_IN.search(folded)
        or _obfuscated_secret_word(v.surface)
        or (_LOGIN_GATE.open(v) and _login_pair(folded))
        or unnamed_credential_in(v)
        or _user_and_password(v.surface)
        or totp_key_in(v)
        or seed_phrase_in(v)
        or _URL_CREDENTIALS.search(v.surface)
    )


def _login_pair(folded: str) -> bool:
    for match in _LOGIN_PAIR.finditer(folded):
        user = _clean(match.group("user"))
        if user in _VALUE_STOP or user in _LINKS or user in _POSSESSIVES or len(user) < 2:
            continue
        if _clean(match.group("pw")) in _VALUE_STOP:
            continue
        return True
    return False


# "STRIPE_SECRET=...", "API_KEY: 123e4567-e89b-...", npm's "_authToken=...": a setting named as a secret,
# with a value.
_NAMED_SETTING = prefiltered(
    re.compile(
        r"(?<![A-Za-z0-9_])_*[A-Za-z][A-Za-z0-9]*(?:[_\-.][A-Za-z0-9]+)*[_\-.]?(?i:key|token|secret|password|passwd|pwd|pass|auth|credential|credentials|apikey)"
        r"(?:[_\-.][A-Za-z0-9]+)*\s*[=:]\s*[\"']?(?P<value>[A-Za-z0-9_\-+/=.]{8,})"
    )
)
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_UUID_KEY_WORD = re.compile(r"(?i)\b(?:api|key|token|secret|license|licence|client|access|auth)\b")


def key_in(v: View) -> bool:
    """A key or token by vendor shape (``keys.toml``), a private key, a bearer or basic header, a setting
    named as a secret with a value (``API_KEY=...``), a UUID beside a key word."""
    text = v.surface
    if _PRIVATE_KEY.search(text):
        return True
    for match in _NAMED_SETTING.finditer(text):
        value = match.group("value")
        if (
            any(c.isdigit() for c in value)
            or any(c in "_-+/=" for c in value.strip("=-"))
            or (value.lower() != value and value.upper() != value)
        ):
            return True
    uuid = _UUID.search(text) if "-" in text else None
    if uuid and _UUID_KEY_WORD.search(text[max(0, uuid.start() - 40) : uuid.start()]):
        return True
    # Every vendor rule ends in a run of 12+ key characters: search only around such runs (with the 40
    # characters before each, for "Bearer ", "api key = " and the like), not the whole line.
    for run in _KEY_RUN.finditer(text):
        start = max(0, run.start() - 40)
        if (
            _ORDER_NUMBER.fullmatch(run.group(0).rstrip(".:"))
            and not run.group(0).startswith(_AWS_PREFIXES)
            and not _KEY_WORD.search(text, start, run.start())
        ):
            continue  # upper case and digits, no key word before: an order or tracking number
        if _KEYS.search(text, start, run.end()):
            return True
    return False


def detect_secrets_in(v: View) -> str | None:
    """What detect-secrets finds in the line's key-like runs (``"api_key"`` or ``"password"``), or ``None``.
    Only runs of 16+ key characters with a digit, mixed case or padding are shown to it: the rest cannot
    pass its entropy limits, and each call costs about a millisecond."""
    runs = [run for run in _TOKEN_RUN.findall(v.surface) if _worth_scanning(run)]
    return _detect_secrets_finds_key(" ".join(runs)) if runs else None


# ---------------------------------------------------------------------------------------------
# detect-secrets, for keys no rule of ours names
# ---------------------------------------------------------------------------------------------

_DETECT_SECRETS_LOCK = threading.Lock()
_DETECT_SECRETS_IGNORED = frozenset({"Public IP (ipv4)"})  # an address is not a key
_DETECT_SECRETS_PASSWORD_TYPES = frozenset({"Secret Keyword", "Basic Auth Credentials"})
_SHORT_WORD_CHARS = 20


@lru_cache(maxsize=1)
def _detect_secrets() -> tuple[
    Callable[[str], Generator[Any, None, None]], tuple[Callable[[], Any], Callable[[], Iterable[Any]]], tuple[str, ...]
]:
    """Import detect-secrets once and note every plugin it ships (what ``default_settings`` enables)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.plugins.base import BasePlugin
    from detect_secrets.settings import get_plugins, get_settings

    # Its return type names an unbound TypeVar; every value is a plugin class.
    plugins: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    names = tuple(cls.__name__ for cls in plugins.values())
    return scan_line, (get_settings, get_plugins), names


def _detect_secrets_finds_key(text: str) -> str | None:
    """Run detect-secrets' ad-hoc line scan and keep only hits that look like real secrets.

    ``with default_settings():`` costs about 1.5 ms on every entry (it rebuilds settings, plugins
    and filters), more than the scan itself (about 0.3-1 ms). So the same configuration (every
    plugin, the default filters) is applied to detect-secrets' process-wide settings once, and again
    only if something else has changed them. The lock serialises scans: detect-secrets swaps plugin
    regexes in place while scanning, so two threads must not share it at once.

    The hits are read as the scan makes them (plugin by plugin, each after its filters), and the scan is
    closed at the first that counts: the answer is that hit's, and the plugins and filters after it, which
    cost as much again, could not change it.
    """
    scan_line, (get_settings, get_plugins), names = _detect_secrets()
    with _DETECT_SECRETS_LOCK:
        settings = get_settings()
        if set(settings.plugins) != set(names):
            settings.configure_plugins([{"name": name} for name in names])
        plugins = {plugin.secret_type: plugin for plugin in get_plugins()}
        with closing(scan_line(text)) as hits:
            for hit in hits:
                if _counts(hit, plugins.get(hit.type)):
                    return "password" if hit.type in _DETECT_SECRETS_PASSWORD_TYPES else "api_key"
    return None


def _counts(hit: Any, plugin: Any) -> bool:
    """Whether a hit of detect-secrets looks like a real secret."""
    if hit.type in _DETECT_SECRETS_IGNORED:
        return False
    value = hit.secret_value or ""
    limit = getattr(plugin, "entropy_limit", None)
    if plugin is not None and limit is not None:
        # scan_line reports every word it looked at; only values above the plugin's own limit
        # are candidates, and a short run of letters is a word, not a key.
        if plugin.calculate_shannon_entropy(value) <= limit:
            return False
        if value.isalpha() and len(value) < _SHORT_WORD_CHARS:
            return False
        if len(value) < 16:
            return False
    return True


def _worth_scanning(run: str) -> bool:
    """Whether a token-like run could be a key detect-secrets knows and our patterns do not.

    Keys carry digits, mixed case, ``=`` padding or ``user:pass@``; a run of one-case letters and
    punctuation ("zendesk-to-intercom-migration", a plain URL or email address) cannot pass the
    entropy limit and matches none of detect-secrets' prefixes, so it is not worth a millisecond.
    """
    if _ORDER_NUMBER.fullmatch(run.rstrip(".:")):
        return False  # upper case and digits only: an order, tracking or SKU number, not a key
    return (
        any(char.isdigit() for char in run)
        or (any(char.isupper() for char in run) and any(char.islower() for char in run))
        or "=" in run
        or ("@" in run and ":" in run)
    )

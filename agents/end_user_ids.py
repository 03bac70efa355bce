"""The one form of an end-user id, on every surface: the API (paths and bodies), the website chat
(before its signed hash is checked), the Memory tab's search and note preview, the export.

An id is taken exactly as sent or refused, never repaired: trimming or folding it after a
signature was checked on the original lets a hash for one person open another (" bob" is not
"bob"). Normal is: 1 to 200 characters, Unicode NFC, no whitespace at either end, and no control
characters (Unicode category Cc, NUL, line breaks and tabs included) nor lone surrogates anywhere.
Format characters such as the zero-width joiner stay allowed inside: scripts need them. No Django."""

import unicodedata

from agents.errors import AppError

MAX_END_USER_ID_CHARS = 200

INVALID = "invalid_end_user_id"  # missing, empty, too long, not text
NOT_NORMAL = "end_user_id_not_normal"  # text, but not in the one form

NOT_NORMAL_MESSAGE = (
    "endUserId must be sent in its one normal form: Unicode NFC, no whitespace at the start or end, "
    "no control characters (it is never trimmed or changed for you)."
)


def end_user_id_refusal(value) -> tuple[str, str] | None:
    """(code, message) when `value` is not a usable end-user id in its normal form, else None."""
    if not isinstance(value, str) or not value or len(value) > MAX_END_USER_ID_CHARS:
        return INVALID, f"endUserId must be 1 to {MAX_END_USER_ID_CHARS} characters."
    characters = _character_refusal(value)
    if characters:
        return NOT_NORMAL, characters
    if value != value.strip():
        return NOT_NORMAL, NOT_NORMAL_MESSAGE + " It starts or ends with whitespace."
    return None


def end_user_id_part_refusal(value: str) -> tuple[str, str] | None:
    """The same rules for part of an id (a search): no control characters, NFC; whitespace at
    its ends is kept as typed ("bob " is the start of "bob smith"), never trimmed."""
    refusal = _character_refusal(value)
    return (NOT_NORMAL, refusal) if refusal else None


def _character_refusal(value: str) -> str | None:
    for char in value:
        if unicodedata.category(char) in ("Cc", "Cs"):
            return NOT_NORMAL_MESSAGE + f" It holds U+{ord(char):04X}."
    if not unicodedata.is_normalized("NFC", value):
        return NOT_NORMAL_MESSAGE + " It is not in NFC (compose it: unicodedata.normalize('NFC', id))."
    return None


def end_user_id_check(value, *, field: str = "endUserId") -> str:
    """`value` itself when it is a normal end-user id; AppError (400, `field` named) otherwise."""
    refusal = end_user_id_refusal(value)
    if refusal is not None:
        raise AppError(refusal[0], refusal[1], field=field)
    return value

"""The version of a memory a person's write was made on: compare-and-set for every write a person
makes (the Memory tab's hidden field, the API's `ETag` / `If-Match`).

A version names what the person saw: the text and whether the memory is stopped. Two memories
reading the same (an empty row and no row at all, or a text changed and changed back) have the
same version, so a write made on what is there now is never refused; a write made on anything
else is ("changed", nothing changed)."""

import hashlib

from django.utils.http import parse_etags, quote_etag


def memory_version(*, text: str, stopped: bool) -> str:
    """The version of a memory reading `text` (stopped or not): 20 hex digits."""
    return hashlib.sha256(f"{int(stopped)}\n{text}".encode()).hexdigest()[:20]


def version_of(memory) -> str:
    """The version of a `Memory` row, or of no row (None: nothing remembered)."""
    if memory is None:
        return memory_version(text="", stopped=False)
    return memory_version(text=memory.text, stopped=memory.stopped_at is not None)


def etag(version: str) -> str:
    """The version as an HTTP entity tag (strong, quoted)."""
    return quote_etag(version)


def versions_from_if_match(header: str) -> list[str] | None:
    """The versions an `If-Match` header accepts: None when it accepts any (absent, or `*`), else
    the strong tags it names, unquoted (a weak tag never matches, RFC 9110 13.1.1)."""
    if not header or not header.strip():
        return None
    tags = parse_etags(header)
    if tags == ["*"]:
        return None
    return [tag.strip('"') for tag in tags if not tag.startswith("W/")]

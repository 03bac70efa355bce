"""The one keyset paginator: a page of rows ordered by some keys descending (the last of them unique,
the id), continued strictly after the last row's keys, never with OFFSET, so a deep page costs what
the first does; and the one cursor that carries (a time, an id) between pages.

Every newest-first list uses it: the API's lists and the audit log (`surfaces.http.pagination`,
which adds the query's shape and error), the versions, and the Memory tab's people. The memories
page is the one raw-SQL keyset (`memory.store.selectors.memories_page`, a hot read): it takes the
same cursor. It sits in the lowest app so that the domain and the surfaces share it.
"""

import base64
import binascii
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime


class BadCursor(ValueError):
    """A cursor this paginator did not make."""


def cursor_encode(at: datetime, pk: int) -> str:
    """The cursor after a row whose keys are (at, pk): opaque to callers, URL-safe."""
    return base64.urlsafe_b64encode(f"{at.isoformat()}|{pk}".encode()).decode().rstrip("=")


def cursor_decode(cursor: str) -> tuple[datetime, int]:
    """(at, pk) from `cursor_encode`'s cursor, or BadCursor."""
    try:
        when, _, pk = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().partition("|")
        at = parse_datetime(when)
        if at is None or timezone.is_naive(at):
            raise ValueError("not an aware time")
        return at, int(pk)
    except (ValueError, UnicodeDecodeError, binascii.Error, OverflowError):
        raise BadCursor("not a cursor from this paginator") from None


def after_q(keys: Sequence[str], values: Sequence[Any]) -> Q:
    """Rows strictly after `values` in the order of `keys` (Django's spelling: "-created_at" is
    descending, "external_id" ascending). With fewer values than keys, strictly past the values given
    (a `before` time). Written `k <= v AND (k < v OR ...)`, so the leading key bounds an index scan."""
    key, value = keys[0].lstrip("-"), values[0]
    past, up_to = ("lt", "lte") if keys[0].startswith("-") else ("gt", "gte")
    if len(values) == 1:
        return Q(**{f"{key}__{past}": value})
    return Q(**{f"{key}__{up_to}": value}) & (Q(**{f"{key}__{past}": value}) | after_q(keys[1:], values[1:]))


def keyset_page(
    rows: QuerySet, *, order: Sequence[str], limit: int, after: Sequence[Any] | None = None
) -> tuple[list, bool]:
    """(a page of at most `limit` rows in `order` (Django's spelling, the last key unique), whether
    more follow): the rows strictly after `after` (the last row's keys, or a prefix of them), or from
    the first."""
    if after:
        rows = rows.filter(after_q(order, after))
    page = list(rows.order_by(*order)[: limit + 1])
    return page[:limit], len(page) > limit


def newest_first(
    rows: QuerySet, *, keys: Sequence[str], limit: int, after: Sequence[Any] | None = None
) -> tuple[list, bool]:
    """(a page of at most `limit` rows ordered by `keys` descending, whether more follow): the rows
    strictly after `after` (the last row's keys, or a prefix of them), or from the first."""
    return keyset_page(rows, order=[f"-{key}" for key in keys], limit=limit, after=after)

"""One keyset page for the API's newest-first lists: rows ordered by (a time, id) descending, a
page continued with `before` (a time: rows strictly older) or exactly with `cursor` (after a
row, even when several share its time). Never OFFSET: a deep page costs what the first does."""

import base64
import binascii
from datetime import datetime

from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework import serializers

from surfaces.http.base import StrictQuerySerializer

MAX_LIMIT = 200


def cursor_encode(at: datetime, pk: int) -> str:
    return base64.urlsafe_b64encode(f"{at.isoformat()}|{pk}".encode()).decode().rstrip("=")


def cursor_decode(cursor: str) -> tuple[datetime, int]:
    try:
        when, _, pk = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().partition("|")
        at = parse_datetime(when)
        if at is None or timezone.is_naive(at):
            raise ValueError("not an aware time")
        return at, int(pk)
    except (ValueError, UnicodeDecodeError, binascii.Error, OverflowError):
        raise serializers.ValidationError(
            {"cursor": ["Not a cursor from this API: pass next.cursor as it came."]}
        ) from None


class PageQueryIn(StrictQuerySerializer):
    """limit, and before or cursor (not both)."""

    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=MAX_LIMIT)
    before = serializers.DateTimeField(
        required=False, help_text="A time from the previous page's next.before: older rows."
    )
    cursor = serializers.CharField(required=False, max_length=200, help_text="next.cursor of the previous page.")

    def validate(self, data):
        if "before" in data and "cursor" in data:
            raise serializers.ValidationError({"cursor": ["Pass before or cursor, not both."]})
        return data


class PageNext(serializers.Serializer):
    before = serializers.DateTimeField(help_text="The last row's time.")
    cursor = serializers.CharField(help_text="Exact continuation after the last row.")


def keyset_page(rows: QuerySet, *, field: str, query: dict) -> tuple[list, dict | None]:
    """A page of `rows`, newest `field` first, and the next page's query (None on the last)."""
    if "cursor" in query:
        at, pk = cursor_decode(query["cursor"])
        rows = rows.filter(**{f"{field}__lte": at}).filter(Q(**{f"{field}__lt": at}) | Q(pk__lt=pk))
    elif query.get("before") is not None:
        rows = rows.filter(**{f"{field}__lt": query["before"]})
    limit = query["limit"]
    page = list(rows.order_by(f"-{field}", "-pk")[: limit + 1])
    if len(page) <= limit:
        return page, None
    last = page[limit - 1]
    return page[:limit], {"before": getattr(last, field), "cursor": cursor_encode(getattr(last, field), last.pk)}

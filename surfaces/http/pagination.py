"""The API's keyset pages (`agents.keyset`, the one paginator): rows ordered by (a time, id)
descending, a page continued with `before` (a time: rows strictly older) or exactly with `cursor`
(after a row, even when several share its time). Never OFFSET: a deep page costs what the first does."""

from datetime import datetime

from django.db.models import QuerySet
from rest_framework import serializers

from agents import keyset
from surfaces.http.base import StrictQuerySerializer

MAX_LIMIT = 200


def cursor_encode(at: datetime, pk: int) -> str:
    return keyset.cursor_encode(at, pk)


def cursor_decode(cursor: str) -> tuple[datetime, int]:
    """(at, pk) from a cursor, or the API's invalid_request on `cursor`."""
    try:
        return keyset.cursor_decode(cursor)
    except keyset.BadCursor:
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
    after: tuple | None = None
    if "cursor" in query:
        after = cursor_decode(query["cursor"])
    elif query.get("before") is not None:
        after = (query["before"],)
    page, more = keyset.newest_first(rows, keys=(field, "pk"), limit=query["limit"], after=after)
    if not more:
        return page, None
    last = page[-1]
    return page, {"before": getattr(last, field), "cursor": cursor_encode(getattr(last, field), last.pk)}

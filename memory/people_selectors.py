"""Reads about the people an agent remembers: the remembered end users (keyset-paged, never
OFFSET), runs per day for the activity chart, one person's memory facts, what erasing them removes,
a conversation's transcript. Every rule comes from `policy`; nothing here decides anything of its own."""
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents.errors import AppError
from agents.models import ActionRun, Agent, Conversation, EndUser, Message
from consent.models import Consent

from . import policy
from .models import Memory, MemoryRun
from .selectors import memories_after, memories_present, memory_cursor, memory_cursor_decode

PAGE_SIZE = 50
CHART_DAYS = 30
MAX_SEARCH_CHARS = 200


# --- Remembered end users --------------------------------------------------------------------


def remembered_queryset(agent: Agent):
    """Who is remembered: a memory with lines, or one they asked to stop (empty, but kept as a record)."""
    return memories_present(agent)


@dataclass
class MemoryPage:
    rows: list[Memory]
    next_cursor: str | None
    total: int
    query: str


def remembered_page(agent: Agent, *, query: str = "", after: str = "", limit: int = PAGE_SIZE) -> MemoryPage:
    """Newest change first, `limit` at a time. The page after a row is found by (updated_at, id)
    below that row's, on the (agent, -updated_at, -id) index: no OFFSET, stable under inserts."""
    query = (query or "").strip()
    if len(query) > MAX_SEARCH_CHARS:
        raise AppError("invalid_search", f"Search for an end-user id of at most {MAX_SEARCH_CHARS} characters.", field="q")
    rows = remembered_queryset(agent)
    if query:
        rows = rows.filter(end_user__external_id__icontains=query)
    total = rows.count()
    if after:
        at, pk = memory_cursor_decode(after)
        rows = memories_after(rows, at, pk)
    page = list(
        rows.select_related("end_user", "end_user__consent").order_by("-updated_at", "-id")[: limit + 1]
    )
    next_cursor = memory_cursor(page[limit - 1]) if len(page) > limit else None
    return MemoryPage(rows=page[:limit], next_cursor=next_cursor, total=total, query=query)


def consent_of(memory: Memory) -> Consent | None:
    try:
        return memory.end_user.consent
    except Consent.DoesNotExist:
        return None


# --- The chart -------------------------------------------------------------------------------


@dataclass
class ChartDay:
    day: date
    added: int = 0
    replaced: int = 0
    removed: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.added + self.replaced + self.removed + self.failed


@dataclass
class Chart:
    days: list[ChartDay]
    width: int = 320
    height: int = 110
    bars: list[dict] = field(default_factory=list)

    @property
    def peak(self) -> int:
        return max((d.total for d in self.days), default=0)

    @property
    def totals(self) -> dict:
        return {k: sum(getattr(d, k) for d in self.days) for k in ("added", "replaced", "removed", "failed")}


SERIES = (("added", "#15803d"), ("replaced", "#4f46e5"), ("removed", "#b91c1c"), ("failed", "#d97706"))


def runs_per_day(agent: Agent, *, today: date | None = None, days: int = CHART_DAYS) -> Chart:
    """Lines added, replaced and removed, and failed runs, per day over the last `days` days
    (all kinds of run: quiet windows, team edits, the API, Apply). Laid out as stacked bars for
    an inline SVG drawn on the server."""
    today = today or timezone.localdate()
    first = today - timedelta(days=days - 1)
    start = timezone.make_aware(datetime.combine(first, datetime.min.time()))
    rows = (
        MemoryRun.objects.filter(memory__agent=agent, started_at__gte=start)
        .annotate(day=TruncDate("started_at"))
        .values("day")
        .annotate(
            added=Sum("added", filter=Q(status=MemoryRun.Status.SUCCEEDED)),
            replaced=Sum("replaced", filter=Q(status=MemoryRun.Status.SUCCEEDED)),
            removed=Sum("removed", filter=Q(status=MemoryRun.Status.SUCCEEDED)),
            failed=Count("id", filter=Q(status=MemoryRun.Status.FAILED)),
        )
    )
    by_day = {row["day"]: row for row in rows}
    chart = Chart(days=[])
    for offset in range(days):
        day = first + timedelta(days=offset)
        row = by_day.get(day, {})
        chart.days.append(
            ChartDay(day, row.get("added") or 0, row.get("replaced") or 0, row.get("removed") or 0, row.get("failed") or 0)
        )
    peak = max(chart.peak, 1)
    plot_height, slot = chart.height - 18, chart.width / days
    for index, day in enumerate(chart.days):
        y = plot_height
        segments = []
        for name, colour in SERIES:
            value = getattr(day, name)
            if not value:
                continue
            h = max(1.0, value * plot_height / peak)
            y -= h
            segments.append({"name": name, "value": value, "colour": colour, "y": round(y, 1), "h": round(h, 1)})
        chart.bars.append(
            {
                "x": round(index * slot + 1.5, 1),
                "w": round(slot - 3, 1),
                "day": day,
                "segments": segments,
                "label": day.day.strftime("%-d %b") if index in (0, days // 2, days - 1) else "",
            }
        )
    return chart


# --- One memory ------------------------------------------------------------------------------


def end_user_for_agent(agent: Agent, end_user_id: int) -> EndUser | None:
    return EndUser.objects.filter(agent=agent, pk=end_user_id).first()


def memory_facts(end_user: EndUser) -> dict:
    """Everything one memory's page shows beside the lines."""
    memory = Memory.objects.filter(end_user=end_user).first()
    conversations = list(
        Conversation.objects.filter(end_user=end_user)
        .annotate(message_count=Count("messages"))
        .select_related("version")
        .order_by("-started_at", "-id")[:100]
    )
    with_messages = Conversation.objects.filter(end_user=end_user, messages__isnull=False).distinct().count()
    runs = list(memory.runs.select_related("actor").order_by("-started_at", "-id")[:50]) if memory else []
    for run in runs:
        run.dropped_labels = [(policy.reason_label(code), count) for code, count in sorted((run.dropped or {}).items())]
    last_run, last_failure = (memory.last_run or {}) if memory else {}, (memory.last_failure or {}) if memory else {}
    return {
        "memory": memory,
        "last_run_at": parse_datetime(last_run["at"]) if last_run.get("at") else None,
        "last_failure_at": parse_datetime(last_failure["at"]) if last_failure.get("at") else None,
        "lines": memory.lines if memory else [],
        "conversations": conversations,
        "conversation_count": with_messages,
        "runs": runs,
        "consent": Consent.objects.filter(end_user=end_user).first(),
    }


def erase_summary(end_user: EndUser) -> dict:
    """What erasing this end user removes, counted, for the confirmation."""
    memory = Memory.objects.filter(end_user=end_user).first()
    return {
        "lines": len(memory.lines) if memory else 0,
        "has_memory": memory is not None,
        "conversations": Conversation.objects.filter(end_user=end_user).count(),
        "messages": Message.objects.filter(conversation__end_user=end_user).count(),
        "actions": ActionRun.objects.filter(conversation__end_user=end_user).count(),
        "runs": MemoryRun.objects.filter(memory__end_user=end_user).count(),
        "consent": Consent.objects.filter(end_user=end_user).first(),
    }


def conversation_for_agent(agent: Agent, public_id: str) -> Conversation | None:
    return (
        Conversation.objects.filter(agent=agent, public_id=public_id).select_related("end_user", "version").first()
    )


def transcript(conversation: Conversation) -> list[dict]:
    """The conversation's messages and action runs, in order, for the transcript page."""
    items = [
        {"at": m.created_at, "kind": m.kind, "label": m.get_kind_display(), "text": m.text, "id": m.pk}
        for m in conversation.messages.order_by("created_at", "id")
    ]
    items += [
        {"at": a.created_at, "kind": "action", "label": "Action", "text": f"{a.name}: {a.status}", "status": a.status, "id": a.pk}
        for a in conversation.action_runs.order_by("created_at", "id")
    ]
    return sorted(items, key=lambda item: (item["at"], item["kind"] == "action", item["id"]))

"""Reads about the people an agent talks to, for the Memory tab and one person's page: the People
list (everyone who chatted or is remembered, filtered, newest change first or in another order,
keyset-paged, never OFFSET), runs per day for the activity chart, one person's memory facts, what
erasing them removes, a conversation's transcript. Every rule comes from `policy`; nothing here
decides anything of its own."""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Case, Count, Exists, IntegerField, OuterRef, Q, QuerySet, Sum, Value, When
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from agents import keyset
from agents.end_user_ids import end_user_id_part_refusal
from agents.errors import AppError
from agents.models import ActionRun, Agent, Conversation, EndUser, Message
from consent.selectors import consent_of
from memory import guards as policy
from memory.models import ApplyJob, Memory, MemoryRun
from memory.store.selectors import memory_of

CHART_DAYS = 30
CHAT_MESSAGE_KINDS = (Message.Kind.USER, Message.Kind.AGENT)

# --- The People list: every end user who chatted with the agent or is remembered, not only those
# with lines, so that someone whose memory was emptied can still be found, opened and erased.

PAGE_SIZE = 50
MAX_SEARCH_CHARS = 200

# The filters the list offers: (value in the address, words on the page).
FILTERS = (
    ("", "Everyone"),
    ("remembered", "Remembered"),
    ("stopped", "Stopped"),
    ("consent_yes", "Consent given"),
    ("consent_no", "Said no"),
    ("apply", "Changed by the last Apply"),
)
_FILTER_Q = {
    "": Q(),
    "remembered": Q(has_lines=True),
    "stopped": Q(memory__stopped_at__isnull=False),
    "consent_yes": Q(consent__agreed_at__isnull=False),
    "consent_no": Q(consent__declined_at__isnull=False),
    "apply": Q(),  # see changed_by_last_apply
}


# The orders the list offers: (value in the address, words on the page). Newest change first is
# the default (R16): those with a memory by its updatedAt, then those with none yet by first seen.
ORDERS = (
    ("changed", "Newest change first"),
    ("first_seen", "Newest first seen"),
    ("id", "End-user id, A to Z"),
)
# Each order's keys (Django's spelling, the last unique), for `agents.keyset`.
_ORDER_KEYS: dict[str, tuple[str, ...]] = {
    "changed": ("-has_memory_row", "-changed_at", "-pk"),
    "first_seen": ("-created_at", "-pk"),
    "id": ("external_id", "pk"),
}


@dataclass
class PeoplePage:
    rows: list[EndUser]
    total: int
    first: int  # 1-based position of the first row shown
    last: int
    next_cursor: str | None
    query: str
    show: str
    order: str = "changed"


def people_queryset(agent: Agent) -> QuerySet[EndUser]:
    chats = Conversation.objects.filter(end_user=OuterRef("pk"))
    memory = Memory.objects.filter(end_user=OuterRef("pk"))
    return (
        EndUser.objects.filter(agent=agent)
        .annotate(
            has_chats=Exists(chats),
            has_memory=Exists(memory.filter(~Q(text="") | Q(stopped_at__isnull=False))),
            has_lines=Exists(memory.filter(~Q(text=""))),
        )
        .filter(Q(has_chats=True) | Q(has_memory=True))
    )


def changed_by_last_apply(agent: Agent) -> QuerySet[EndUser]:
    """Those whose memory the agent's latest Apply changed (its audit rows: kind apply, succeeded,
    a line replaced or removed, from its start on). Counts only: the removed words are kept nowhere."""
    job = ApplyJob.objects.filter(agent=agent).order_by("-created_at", "-id").first()
    if job is None:
        return people_queryset(agent).none()
    runs = MemoryRun.objects.filter(
        memory__end_user=OuterRef("pk"),
        kind=MemoryRun.Kind.APPLY,
        status=MemoryRun.Status.SUCCEEDED,
        started_at__gte=job.created_at,
    ).filter(Q(replaced__gt=0) | Q(removed__gt=0))
    return people_queryset(agent).filter(Exists(runs))


def _in_order(rows: QuerySet[EndUser], order: str) -> QuerySet[EndUser]:
    """The rows with the columns `order` sorts on (the newest change: the memory's updatedAt, or
    first seen for someone with no memory yet, who come after everyone with one)."""
    if order != "changed":
        return rows
    return rows.annotate(
        has_memory_row=Case(When(memory__isnull=False, then=Value(1)), default=Value(0), output_field=IntegerField()),
        changed_at=Coalesce("memory__updated_at", "created_at"),
    )


def _search_refusal(query: str) -> AppError | None:
    if len(query) > MAX_SEARCH_CHARS:
        return AppError(
            "invalid_search", f"Search for an end-user id of at most {MAX_SEARCH_CHARS} characters.", field="q"
        )
    # A search is for part of an id, so it follows the id's rules (agents.end_user_ids): typed as is,
    # never trimmed; what no id can hold is said so.
    refusal = end_user_id_part_refusal(query)
    return AppError("invalid_search", "Search: " + refusal[1], field="q") if refusal is not None else None


def people_page(
    agent: Agent, *, query: str = "", show: str = "", order: str = "", after: str = "", limit: int = PAGE_SIZE
) -> PeoplePage:
    """One page of the People list: filtered (`FILTERS`), searched by part of the id, in one of
    `ORDERS` (newest change first unless another is asked for), keyset-paged (`agents.keyset`) after
    the row whose id is the cursor, on that row's values of the order's keys."""
    query = query or ""
    refusal = _search_refusal(query)
    if refusal is not None:
        raise refusal
    show = show if show in _FILTER_Q else ""
    order = order if order in _ORDER_KEYS else "changed"
    rows = people_queryset(agent).filter(_FILTER_Q[show]) if show != "apply" else changed_by_last_apply(agent)
    if query:
        rows = rows.filter(external_id__icontains=query)
    total = rows.count()
    rows, keys = _in_order(rows, order), _ORDER_KEYS[order]
    before, after_key = 0, None
    if after:
        last = (
            rows.filter(pk=int(after)).values(*(key.lstrip("-") for key in keys)).first() if after.isdigit() else None
        )
        if last is None:
            raise AppError(
                "invalid_cursor", "That page link is not valid. Start again from the first page.", field="after"
            )
        after_key = list(last.values())
        before = rows.count() - rows.filter(keyset.after_q(keys, after_key)).count()
    page, more = keyset.keyset_page(rows.select_related("memory", "consent"), order=keys, limit=limit, after=after_key)
    return PeoplePage(
        rows=page,
        total=total,
        first=before + 1 if page else 0,
        last=before + len(page),
        next_cursor=str(page[-1].pk) if more else None,
        query=query,
        show=show,
        order=order,
    )


# --- The chart's numbers (drawn by memory.templatetags.memory_charts) -------------------------


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


def runs_per_day(agent: Agent, *, today: date | None = None, days: int = CHART_DAYS) -> list[ChartDay]:
    """Lines added, replaced and removed, and failed runs, per day over the last `days` days, oldest
    first, every day present (all kinds of run: quiet windows, team edits, the API, Apply)."""
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
    by_day: dict[date, Mapping[str, Any]] = {row["day"]: row for row in rows}
    out = []
    for offset in range(days):
        day = first + timedelta(days=offset)
        row = by_day.get(day, {})
        out.append(
            ChartDay(
                day, row.get("added") or 0, row.get("replaced") or 0, row.get("removed") or 0, row.get("failed") or 0
            )
        )
    return out


# --- One memory ------------------------------------------------------------------------------


def end_user_for_agent(agent: Agent, end_user_id: int) -> EndUser | None:
    return EndUser.objects.filter(agent=agent, pk=end_user_id).first()


def memory_facts(end_user: EndUser) -> dict:
    """Everything one memory's page shows beside the lines."""
    memory = memory_of(end_user)
    conversations = list(
        Conversation.objects.filter(end_user=end_user)
        .annotate(message_count=Count("messages"))
        .select_related("version")
        .order_by("-started_at", "-id")[:100]
    )
    # R21: chats that hold a message, from the person or the agent; one holding only a tool result,
    # a file or a web page holds none.
    with_messages = (
        Conversation.objects.filter(end_user=end_user, messages__kind__in=CHAT_MESSAGE_KINDS).distinct().count()
    )
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
        "consent": consent_of(end_user),
    }


def erase_summary(end_user: EndUser) -> dict:
    """What erasing this end user removes, counted, for the confirmation."""
    memory = memory_of(end_user)
    return {
        "lines": len(memory.lines) if memory else 0,
        "has_memory": memory is not None,
        "conversations": Conversation.objects.filter(end_user=end_user).count(),
        "messages": Message.objects.filter(conversation__end_user=end_user).count(),
        "actions": ActionRun.objects.filter(conversation__end_user=end_user).count(),
        "runs": MemoryRun.objects.filter(memory__end_user=end_user).count(),
        "consent": consent_of(end_user),
    }


def conversation_for_agent(agent: Agent, public_id: str) -> Conversation | None:
    return Conversation.objects.filter(agent=agent, public_id=public_id).select_related("end_user", "version").first()


def transcript(conversation: Conversation) -> list[dict]:
    """The conversation's messages and action runs, in order, for the transcript page."""
    items = [
        {"at": m.created_at, "kind": m.kind, "label": m.get_kind_display(), "text": m.text, "id": m.pk}
        for m in conversation.messages.order_by("created_at", "id")
    ]
    items += [
        {
            "at": a.created_at,
            "kind": "action",
            "label": "Action",
            "text": f"{a.name}: {a.status}",
            "status": a.status,
            "id": a.pk,
        }
        for a in conversation.action_runs.order_by("created_at", "id")
    ]
    return sorted(items, key=lambda item: (item["at"], item["kind"] == "action", item["id"]))

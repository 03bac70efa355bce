"""Reads for memories: due work for the sweep, what a run reads, one end user's memory, the list of
who is remembered (one keyset-paged read for the API and the tab) and the API's read of one memory."""

import functools
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

from django.db.models import F, Min, Q, QuerySet, Window
from django.db.models.functions import RowNumber
from django.utils.dateparse import parse_datetime

from agents import keyset
from agents.models import ActionRun, Agent, AgentVersion, Conversation, EndUser, Message
from memory.models import Memory

MAX_MESSAGES_PER_RUN = 200
MAX_CONTEXT_REPLIES = 20
MEMORY_OFF_GRACE_DAYS = 30  # R4


class WriterInput(TypedDict):
    """What a run may read (`writer_inputs`): rows as `.values()` gives them, oldest first."""

    messages: list[Mapping[str, Any]]  # id, text, created_at, version_id
    actions: list[Mapping[str, Any]]  # id, name, status, created_at, version_id
    replies: list[Mapping[str, Any]]  # text, created_at, version_id: context only
    read_to: datetime  # where this read stopped: the cutoff, or a backlog's last message read


def end_users_due_for_memory(*, now: datetime, limit: int = 5000) -> list[int]:
    """End users (ids) with a conversation whose quiet window has ended (`memory.store.due`'s)."""
    from memory.store.due import due_end_users

    return due_end_users(now=now, limit=limit)


Span = tuple[datetime | None, datetime]  # (after, before): what a run may read, both ends excluded


def read_cutoffs(*, read_from: Mapping[int, datetime | None], now: datetime) -> dict[int, datetime]:
    """How far each end user's run may read (id -> cutoff), from their `read_from`: up to now, but
    never into a chat that is still active (its last activity is within its quiet window), so
    nothing is written while a chat is active (R11). One read of the active chats, and one of the
    earliest unread message of those who have one."""
    from memory.store.due import active_conversations_many

    active = active_conversations_many(list(read_from), now)
    cutoffs = dict.fromkeys(read_from, now)
    if not active:
        return cutoffs
    unread = Q()
    for end_user_id, chats in active.items():
        after = read_from[end_user_id]
        unread |= Q(conversation_id__in=chats) & (Q(created_at__gt=after) if after is not None else Q())
    earliest = (
        Message.objects.filter(unread)
        .order_by()
        .values("conversation__end_user_id")
        .annotate(first=Min("created_at"))
        .values_list("conversation__end_user_id", "first")
    )
    for end_user_id, first in earliest:
        cutoffs[end_user_id] = min(now, first)
    return cutoffs


def writer_input(*, end_user: EndUser, read_from: datetime | None, read_to: datetime) -> WriterInput:
    """`writer_inputs` of one end user."""
    return writer_inputs(spans={end_user.pk: (read_from, read_to)})[end_user.pk]


def _in_spans(spans: Mapping[int, Span], *, through: Mapping[int, datetime]) -> Q:
    """Rows of chats that used memory, each end user's inside their span (`through`: those read
    up to and including a time instead, a backlog's last message)."""
    where = Q()
    for end_user_id, (after, before) in spans.items():
        end = Q(created_at__lte=through[end_user_id]) if end_user_id in through else Q(created_at__lt=before)
        where |= Q(conversation__end_user_id=end_user_id) & end & (Q(created_at__gt=after) if after else Q())
    return Q(conversation__uses_memory=True) & where


def writer_inputs(*, spans: Mapping[int, Span]) -> dict[int, WriterInput]:
    """What each end user's run may read (R12), in three queries whatever their number: their own
    messages and the action runs, only from conversations that used memory, inside their span
    (id -> (after, before)); the agent's replies in it as context (the newest MAX_CONTEXT_REPLIES).
    Each item names the version its chat began on (`version_id`), which it is read under (with the
    published one, `writer.operations.stricter_config`). Tool results, files and web pages are never
    selected. When the person typed more than one run reads (MAX_MESSAGES_PER_RUN), the read stops
    at the last message read (`read_to`), their actions and replies with it, and the rest waits."""
    if not spans:
        return {}
    end_user = F("conversation__end_user_id")

    def first(queryset: QuerySet, limit: int, *, newest: bool = False) -> QuerySet:
        order = [F("created_at").desc(), F("id").desc()] if newest else [F("created_at").asc(), F("id").asc()]
        return queryset.annotate(
            end_user_pk=end_user, nth=Window(RowNumber(), partition_by=end_user, order_by=order)
        ).filter(nth__lte=limit)

    out: dict[int, WriterInput] = {
        pk: {"messages": [], "actions": [], "replies": [], "read_to": before} for pk, (_, before) in spans.items()
    }
    messages = first(Message.objects.filter(_in_spans(spans, through={}), kind=Message.Kind.USER), MAX_MESSAGES_PER_RUN)
    for row in messages.order_by("created_at", "id").values(
        "id", "text", "created_at", "end_user_pk", version_id=F("conversation__version_id")
    ):
        out[row.pop("end_user_pk")]["messages"].append(row)
    backlog = {
        pk: inp["messages"][-1]["created_at"] for pk, inp in out.items() if len(inp["messages"]) == MAX_MESSAGES_PER_RUN
    }
    for pk, last in backlog.items():
        out[pk]["read_to"] = last
    span = _in_spans(spans, through=backlog)
    actions = first(ActionRun.objects.filter(span), MAX_MESSAGES_PER_RUN)
    for row in actions.order_by("created_at", "id").values(
        "id", "name", "status", "created_at", "end_user_pk", version_id=F("conversation__version_id")
    ):
        out[row.pop("end_user_pk")]["actions"].append(row)
    replies = first(Message.objects.filter(span, kind=Message.Kind.AGENT), MAX_CONTEXT_REPLIES, newest=True)
    for row in replies.order_by("created_at", "id").values(
        "text", "created_at", "end_user_pk", version_id=F("conversation__version_id")
    ):
        out[row.pop("end_user_pk")]["replies"].append(row)
    return out


def memory_of(end_user: EndUser | int) -> Memory | None:
    """One end user's memory row (by instance or id), or None when none was ever written: the
    one read of "their memory" for the note, the tab, their own commands and erase."""
    return Memory.objects.filter(end_user=end_user).first()


def memories_of(end_users: Iterable[EndUser]) -> dict[int, Memory]:
    """The memory rows of several end users in one query, by end-user id; one without a row is absent."""
    return {memory.end_user_id: memory for memory in Memory.objects.filter(end_user_id__in=[e.pk for e in end_users])}


def memories_expired(agent: Agent, now: datetime) -> QuerySet[Memory]:
    """The agent's memories whose time is up, whatever their history: those holding lines, or
    chats not yet read, whose

    - keepForDays has passed, counted from the end user's last chat, or from the memory's last
      change when they never chatted (R4's "how long to keep it");
    - or, where memory is not in use (off in the published version, or a plan without memory):
      30 days have passed since it was turned off (R4), or, when it never was on or the plan
      took memory away (no switch to count from), since the memory's last change."""
    memories = Memory.objects.filter(agent=agent)
    holds_something = (
        ~Q(text="")
        | Q(read_up_to__isnull=True, end_user__last_chat_at__isnull=False)
        | Q(read_up_to__lt=F("end_user__last_chat_at"))
    )
    config = AgentVersion.objects.published(agent).config
    cutoff = now - timedelta(days=config["memorySettings"]["keepForDays"])
    time_is_up = Q(end_user__last_chat_at__lt=cutoff) | Q(end_user__last_chat_at__isnull=True, updated_at__lt=cutoff)
    if not (config["memorySettings"]["on"] and agent.team.has_memory):
        off_cutoff = now - timedelta(days=MEMORY_OFF_GRACE_DAYS)
        if agent.memory_off_since is not None:
            if agent.memory_off_since < off_cutoff:
                return memories.filter(holds_something)
        else:
            time_is_up |= Q(updated_at__lt=off_cutoff)
    return memories.filter(holds_something).filter(time_is_up)


# --- Who is remembered: one definition and one keyset cursor for the tab and the API ---------


def memories_present(agent) -> QuerySet[Memory]:
    """A memory exists for readers while it has lines or records a stop; a deleted one is empty
    (`memories_page` states the same in SQL)."""
    return Memory.objects.filter(agent=agent).filter(~Q(text="") | Q(stopped_at__isnull=False))


def memory_cursor(memory: Memory) -> str:
    """The cursor after `memory` in `memories_page`'s order (`agents.keyset`'s, for its `after_key`)."""
    return keyset.cursor_encode(memory.updated_at, memory.pk)


# --- The REST API's hot reads: one plain SQL statement each ----------------------------------
# memory.get and a page of agent.memories() are the API's most frequent calls (the page is also
# the Memory tab's list of who was remembered last). Building the ORM
# query cost more than running it, so these two are written once as SQL over the same tables and
# indexes (a page reads the memory table alone: its R21 fields are kept on the row); tests/memory/test_api.py proves they answer what the ORM
# reads answered, and counts their queries.


@functools.cache
def _read_sql() -> tuple[str, str]:
    from consent.models import Consent

    tables = {"agent": Agent._meta.db_table, "end_user": EndUser._meta.db_table, "memory": Memory._meta.db_table}
    # A memory row keeps its R21 fields (memory.store.counters); an end user without one reads them
    # from their sources.
    agreed = (
        f"(SELECT c.agreed_at FROM {Consent._meta.db_table} c WHERE c.end_user_id = eu.id AND c.agreed_at IS NOT NULL)"
    )
    chats = (
        f"(SELECT count(*) FROM {Conversation._meta.db_table} cv WHERE cv.end_user_id = eu.id "
        f"AND EXISTS (SELECT 1 FROM {Message._meta.db_table} msg WHERE msg.conversation_id = cv.id))"
    )
    # Times as text, parsed by datetime.fromisoformat (C) in _aware: the driver's own loader for a
    # timestamp costs more than the rest of a row's handling, and a page has 250 of them.
    one = (
        "SELECT a.id, eu.id, eu.external_id, CAST(eu.last_chat_at AS TEXT), "
        "m.id, m.text, CAST(m.stopped_at AS TEXT), CAST(m.updated_at AS TEXT), CAST(m.read_up_to AS TEXT), m.last_run, "
        f"CAST(CASE WHEN m.id IS NULL THEN {agreed} ELSE m.agreed_at END AS TEXT), "
        f"CASE WHEN m.id IS NULL THEN {chats} ELSE m.conversations END "
        f"FROM {tables['agent']} a "
        f"LEFT JOIN {tables['end_user']} eu ON eu.agent_id = a.id AND eu.external_id = %s "
        f"LEFT JOIN {tables['memory']} m ON m.end_user_id = eu.id "
        "WHERE a.public_id = %s AND a.team_id = %s"
    )
    # One table, one range of the partial index memory_agent_present, in its order.
    page = (
        "SELECT m.end_user_id, m.external_id, CAST(m.last_chat_at AS TEXT), m.id, m.text, CAST(m.stopped_at AS TEXT), "
        "CAST(m.updated_at AS TEXT), CAST(m.read_up_to AS TEXT), m.last_run, CAST(m.agreed_at AS TEXT), m.conversations "
        f"FROM {tables['memory']} m "
        "WHERE m.agent_id = {agent} AND (m.text <> '' OR m.stopped_at IS NOT NULL) {keyset} "
        "ORDER BY m.updated_at DESC, m.id DESC LIMIT %s"
    )
    return one, page


def _aware(value):
    """A time read as text (PostgreSQL's ISO text in the connection's zone, UTC: "2026-12-03
    13:09:41.654284+00"; SQLite's naive UTC text) or as a datetime, aware."""
    if value is None:
        return value
    if isinstance(value, datetime):
        parsed = value
    else:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = parse_datetime(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _last_run(value):
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _api_read(row) -> dict:
    (_, external_id, last_chat_at, memory_id, text, stopped_at, updated_at, read_up_to, last_run, agreed_at, chats) = (
        row
    )
    return {
        "endUserId": external_id,
        "text": text or "",
        "stopped": stopped_at is not None,
        "updatedAt": _aware(updated_at),
        "readUpTo": _aware(read_up_to),
        "lastRun": _last_run(last_run),
        "stoppedAt": _aware(stopped_at),
        "agreedAt": _aware(agreed_at),
        "lastChatAt": _aware(last_chat_at),
        "conversations": chats or 0,
        "_key": (_aware(updated_at), memory_id),
    }


def api_memory_read(*, team_id: int, agent_public_id: str, external_id: str) -> tuple[bool, dict | None]:
    """(the agent is the team's, the read of that end user's memory with its R21 fields) in one
    statement, through the agent's public id, the end user's (agent, external_id) index and the
    memory's end-user index. An end user the agent never met reads None; a known one without a
    memory row reads empty text and the fields that apply."""
    from django.db import connection

    one, _ = _read_sql()
    with connection.cursor() as cursor:
        cursor.execute(one, [external_id, agent_public_id, team_id])
        row = cursor.fetchone()
    if row is None:
        return False, None
    if row[1] is None:
        return True, None
    return True, _api_read(row[1:])


def memories_page(
    *,
    agent_id: int | None = None,
    team_agent: tuple[int, str] | None = None,
    limit: int,
    before: datetime | None = None,
    after_key: tuple[datetime, int] | None = None,
) -> tuple[list[dict], bool]:
    """(a page of present memories, whether more follow): newest change first, keyset on
    (updated_at, id) through the (agent, -updated_at, -id) index (never OFFSET), with each one's
    R21 fields: one statement. The list for the API and the Memory tab. The agent by its pk, or
    as `team_agent` (team pk, agent public id): the team's agent found in the same statement (an
    empty page then does not tell a missing agent from one without memories)."""
    from django.db import connection

    _, page = _read_sql()
    keyset = ""
    params: list[int | str | None]  # the datetimes as the adapter gives them
    if team_agent is not None:
        agent = f"(SELECT a.id FROM {Agent._meta.db_table} a WHERE a.team_id = %s AND a.public_id = %s)"
        params = [team_agent[0], team_agent[1]]
    else:
        agent, params = "%s", [agent_id]
    # Raw SQL: times go in as the ORM would store them (SQLite keeps naive UTC text, and an aware
    # value's "+00:00" would make the text comparison keep the row named by `before`).
    at = connection.ops.adapt_datetimefield_value
    if after_key is not None:
        keyset = "AND m.updated_at <= %s AND (m.updated_at < %s OR m.id < %s)"
        params += [at(after_key[0]), at(after_key[0]), after_key[1]]
    elif before is not None:
        keyset = "AND m.updated_at < %s"
        params.append(at(before))
    with connection.cursor() as cursor:
        cursor.execute(page.replace("{agent}", agent).replace("{keyset}", keyset), params + [limit + 1])
        rows = [_api_read(row) for row in cursor.fetchall()]
    return rows[:limit], len(rows) > limit


def memories_page_cursor(read: dict) -> str:
    """The cursor after a read from `memories_page`, for its `after_key` (`agents.keyset.cursor_decode`)."""
    return keyset.cursor_encode(*read["_key"])

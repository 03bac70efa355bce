"""The People list of the Memory tab: every end user who chatted with the agent or is remembered,
not only those with lines, so that someone whose memory was emptied can still be found, opened
and erased. Filtered (stopped, consent given, said no) and keyset-paged by id, newest first
(never OFFSET)."""
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet

from agents.errors import AppError
from agents.models import Agent, Conversation, EndUser

from .models import ApplyJob, Memory, MemoryRun

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


@dataclass
class PeoplePage:
    rows: list[EndUser]
    total: int
    first: int  # 1-based position of the first row shown
    last: int
    next_cursor: str | None
    query: str
    show: str


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
        memory__end_user=OuterRef("pk"), kind=MemoryRun.Kind.APPLY, status=MemoryRun.Status.SUCCEEDED,
        started_at__gte=job.created_at,
    ).filter(Q(replaced__gt=0) | Q(removed__gt=0))
    return people_queryset(agent).filter(Exists(runs))


def people_page(agent: Agent, *, query: str = "", show: str = "", after: str = "", limit: int = PAGE_SIZE) -> PeoplePage:
    query = (query or "").strip()
    if len(query) > MAX_SEARCH_CHARS:
        raise AppError("invalid_search", f"Search for an end-user id of at most {MAX_SEARCH_CHARS} characters.", field="q")
    if show not in _FILTER_Q:
        show = ""
    rows = people_queryset(agent).filter(_FILTER_Q[show]) if show != "apply" else changed_by_last_apply(agent)
    if query:
        rows = rows.filter(external_id__icontains=query)
    total = rows.count()
    before = 0
    if after:
        try:
            after_id = int(after)
        except ValueError:
            raise AppError("invalid_cursor", "That page link is not valid. Start again from the newest.", field="after") from None
        before = rows.filter(pk__gt=after_id).count()
        rows = rows.filter(pk__lt=after_id)
    page = list(rows.select_related("memory", "consent").order_by("-pk")[: limit + 1])
    next_cursor = str(page[limit - 1].pk) if len(page) > limit else None
    page = page[:limit]
    return PeoplePage(
        rows=page,
        total=total,
        first=before + 1 if page else 0,
        last=before + len(page),
        next_cursor=next_cursor,
        query=query,
        show=show,
    )


def memory_of(end_user: EndUser) -> Memory | None:
    try:
        return end_user.memory
    except Memory.DoesNotExist:
        return None

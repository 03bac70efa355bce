"""Apply's preview: the review Apply would run (`writer.propose(mode="review")`, the published
settings), on a small sample of memories, before anything is changed. Saves nothing: the team
sees here which lines would go, since removed lines are kept nowhere afterwards (R15)."""

from dataclasses import dataclass, field

from django.utils import timezone

from agents.engines import EngineError, get_engine
from agents.models import Agent, AgentVersion, EndUser
from memory.models import Memory
from memory.tools.apply import NO_NEW_INPUT
from memory.tools.trial import TrialRow, _Tracker  # the same before/after rows as Try
from memory.writer.operations import propose

SAMPLE = 5


@dataclass
class PreviewPerson:
    end_user: EndUser
    rows: list[TrialRow] = field(default_factory=list)
    changed: bool = False
    error: str = ""


@dataclass
class ApplyPreview:
    total: int
    version: int
    people: list[PreviewPerson]

    @property
    def sampled(self) -> int:
        return len(self.people)

    @property
    def would_change(self) -> int:
        return sum(1 for p in self.people if p.changed)


def apply_preview(*, agent: Agent, sample: int = SAMPLE, engine=None, now=None) -> ApplyPreview:
    """Review the newest `sample` memories with lines as Apply would, and return before / after."""
    now = now or timezone.now()
    engine = engine or get_engine()
    version = AgentVersion.objects.published(agent)
    memories = Memory.objects.filter(agent=agent).exclude(text="")
    people = []
    for memory in memories.select_related("end_user").order_by("-updated_at", "-id")[:sample]:
        person = PreviewPerson(end_user=memory.end_user)
        tracker = _Tracker(memory.lines)
        try:
            outcome, _ = propose(
                lines=memory.lines, inp=NO_NEW_INPUT, config=version.config, now=now, mode="review", engine=engine
            )
            tracker.apply(outcome.changes)
            person.changed = outcome.changed
        except EngineError as exc:
            person.error = exc.message
        person.rows = tracker.rows()
        people.append(person)
    return ApplyPreview(total=memories.count(), version=version.number, people=people)

"""Starting a chat, for any surface (the API, the website chat, the demo): whether it uses memory,
decided once (R3, R4, R20, R23, R25, R26), and the note its agent receives (R17).

The decision asks, in order, the agent's own reasons (`agents.services.memory_off_reason`), then
consent's ask-first gate (`consent.services.consent_gate`), then memory's stopped gate
(`memory.store.services.stopped_gate`); the first reason wins. The stopped gate reads the memory
row once and the note reuses it, so a start with memory costs one indexed read more than one without.
"""

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from agents import services as agent_services
from agents.models import Agent, AgentVersion, Conversation, EndUser
from agents.services import MemoryDecision
from consent.services import consent_gate
from memory.store.note import note_at_start
from memory.store.services import stopped_gate

# Consent first (no yes yet: ask), then memory (they asked to stop): today's order, and the reason shown.
GATES = (consent_gate, stopped_gate)


def memory_decision(
    *, agent: Agent, end_user: EndUser, version: AgentVersion, memory: bool, project: str, switch_on: bool, source: str
) -> MemoryDecision:
    """Whether a new conversation uses memory, decided once at start, and if not, why."""
    reason = agent_services.memory_off_reason(
        agent=agent, version=version, memory=memory, project=project, switch_on=switch_on
    )
    if reason:
        return MemoryDecision(False, reason)
    settings = version.config["memorySettings"]
    for gate in GATES:
        gate_reason = gate(agent=agent, end_user=end_user, settings=settings, source=source)
        if gate_reason:
            return MemoryDecision(False, gate_reason)
    return MemoryDecision(True, "")


def conversation_open(
    *,
    agent: Agent,
    end_user: EndUser,
    version: AgentVersion,
    decision: MemoryDecision,
    project: str = "",
    source: str,
    now: datetime | None = None,
) -> Conversation:
    """Save a conversation whose decision is made; with memory, its note is the memory as it is now."""
    note = note_at_start(end_user) if decision.uses_memory else ""
    return agent_services.conversation_open(
        agent=agent,
        end_user=end_user,
        version=version,
        decision=decision,
        note=note,
        project=project,
        source=source,
        now=now,
    )


@transaction.atomic
def conversation_start(
    *,
    agent: Agent,
    external_id: str,
    memory: bool = True,
    project: str = "",
    switch_on: bool = True,
    source: str = "api",
    now: datetime | None = None,
) -> Conversation:
    """Start a conversation on the agent's published version: the end user found or made, the
    memory decision made once, and with memory the note built from the memory as it is now."""
    project = agent_services.project_checked(project)
    now = now or timezone.now()
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id=external_id)
    version = AgentVersion.objects.published(agent)
    decision = memory_decision(
        agent=agent,
        end_user=end_user,
        version=version,
        memory=memory,
        project=project,
        switch_on=switch_on,
        source=source,
    )
    return conversation_open(
        agent=agent, end_user=end_user, version=version, decision=decision, project=project, source=source, now=now
    )

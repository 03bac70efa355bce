"""Where memory events become webhook events, without `memory` knowing about webhooks (the lower
layer says what happened through its events, memory.store.events). Each action of
memory.store.actions says what it did, and the mapping is explicit:

- a memory stopped that was not stopped: memory.stopped;
- a memory deleted or expired that held lines: memory.deleted;
- any other change of its words (a set, a line edited, a forget, a run, Apply): memory.updated,
  with its line count (and the run's counts when a quiet-window run made it);
- a resume, a run that kept every line, a failed run: nothing;
- an end user erased (`end_user_erased`): end_user.erased with what was removed.

The deliveries are written in the change's transaction (the outbox: a rolled-back change sends
nothing, a committed one is never lost). The payloads are ids and counts; never the memory's words."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from agents.models import Agent, EndUser
from memory.store.events import MemoryChanged, end_user_erased, memory_changed
from webhooks.models import Endpoint
from webhooks.services import emit, forget_end_user, forget_endpoints

post_save.connect(forget_endpoints, sender=Endpoint, dispatch_uid="webhooks.endpoint_saved")
post_delete.connect(forget_endpoints, sender=Endpoint, dispatch_uid="webhooks.endpoint_deleted")


def webhook_event(event: MemoryChanged) -> tuple[str, dict] | None:
    """The webhook event a memory change sends (its name and its counts), or None."""
    if event.kind == "stopped":
        if event.was_stopped or event.stopped_at is None:
            return None  # stopped again: nothing new for the receiver
        return "memory.stopped", {"stoppedAt": event.stopped_at.isoformat()}
    if not event.text_changed:
        return None
    if event.kind in ("deleted", "expired"):
        return "memory.deleted", {"deletedAt": event.at.isoformat()}
    data = {"lines": event.lines, "updatedAt": event.at.isoformat()}
    if event.kind == "run":
        data["lastRun"] = event.counts.as_dict()
    return "memory.updated", data


@receiver(memory_changed, dispatch_uid="webhooks.memory_changed")
def memory_was_changed(sender, event: MemoryChanged, **kwargs):
    found = webhook_event(event)
    if found is None:
        return
    name, counts = found

    def data():
        agent_public_id = Agent.objects.filter(pk=event.agent_id).values_list("public_id", flat=True).get()
        external_id = EndUser.objects.filter(pk=event.end_user_id).values_list("external_id", flat=True).get()
        return {"agentId": agent_public_id, "endUserId": external_id, **counts}

    emit(agent_id=event.agent_id, event=name, data=data)


@receiver(end_user_erased, dispatch_uid="webhooks.end_user_erased")
def end_user_was_erased(sender, agent, external_id, removed, **kwargs):
    forget_end_user(agent=agent, external_id=external_id)
    emit(
        agent_id=agent.pk,
        event="end_user.erased",
        data={"agentId": agent.public_id, "endUserId": external_id, "removed": removed},
    )

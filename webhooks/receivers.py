"""Where memory changes become webhook events, without `memory` knowing about webhooks (STYLE:
the lower layer calls up through signals). Every change of a memory is saved by
`memory.store.commit.memory_commit` with the fields it changed, so `update_fields` says what happened:

- `stopped_at` set: memory.stopped (they asked to stop; emptied);
- the text emptied with a new horizon (delete, expiry): memory.deleted;
- any other change of the text: memory.updated, with its line count (and the last run's counts
  when a run wrote it);
- an end user erased (`memory.store.services.end_user_erase` sends `end_user_erased`): end_user.erased
  with what was removed.

The payloads are ids and counts; never the memory's words."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from agents.models import Agent
from memory.models import Memory
from memory.store.events import end_user_erased
from webhooks.models import Endpoint
from webhooks.services import emit, forget_end_user, forget_endpoints

post_save.connect(forget_endpoints, sender=Endpoint, dispatch_uid="webhooks.endpoint_saved")
post_delete.connect(forget_endpoints, sender=Endpoint, dispatch_uid="webhooks.endpoint_deleted")


def memory_event(memory: Memory, fields: frozenset) -> tuple[str, dict] | None:
    if "stopped_at" in fields:
        if memory.stopped_at is None:
            return None  # resumed: nothing is kept until a later change
        return "memory.stopped", {"stoppedAt": memory.stopped_at.isoformat()}
    if "text" not in fields:
        return None
    if not memory.text and "horizon_at" in fields:
        return "memory.deleted", {"deletedAt": memory.updated_at.isoformat()}
    data = {"lines": len(memory.lines), "updatedAt": memory.updated_at.isoformat()}
    if "last_run" in fields and memory.last_run:
        data["lastRun"] = {
            key: memory.last_run[key] for key in ("added", "replaced", "removed") if key in memory.last_run
        }
    return "memory.updated", data


@receiver(post_save, sender=Memory, dispatch_uid="webhooks.memory_saved")
def memory_saved(sender, instance, created, update_fields=None, **kwargs):
    if created or not update_fields:
        return
    found = memory_event(instance, frozenset(update_fields))
    if found is None:
        return
    event, counts = found

    def data():
        agent_public_id = Agent.objects.filter(pk=instance.agent_id).values_list("public_id", flat=True).get()
        return {"agentId": agent_public_id, "endUserId": instance.end_user.external_id, **counts}

    emit(agent_id=instance.agent_id, event=event, data=data)


@receiver(end_user_erased, dispatch_uid="webhooks.end_user_erased")
def end_user_was_erased(sender, agent, external_id, removed, **kwargs):
    forget_end_user(agent=agent, external_id=external_id)
    emit(
        agent_id=agent.pk,
        event="end_user.erased",
        data={"agentId": agent.public_id, "endUserId": external_id, "removed": removed},
    )

"""Deliveries through a real django-q cluster (ORM broker, this test's database): the first attempt
is a task the cluster runs, a failed one is retried by the cluster's sweep task once its backoff
has passed, and the local receiver verifies every signature."""

import pytest
from django.utils import timezone
from django_q.conf import Conf
from django_q.tasks import async_task

from agents import services as agent_services
from memory.store import services as memory_services
from tests.cluster import start_cluster, stop_cluster
from tests.ops.redis_helpers import wait_for
from tests.webhooks.test_webhooks import Receiver
from webhooks import services, signing
from webhooks.models import Delivery


@pytest.mark.cluster
@pytest.mark.django_db(transaction=True)
def test_the_cluster_delivers_and_retries_after_the_backoff(team, agent, settings, monkeypatch, tmp_path):
    settings.WEBHOOKS_ALLOW_HTTP = settings.WEBHOOKS_ALLOW_PRIVATE = True
    monkeypatch.setattr(Conf, "SYNC", False)  # queue for the cluster instead of running inline
    receiver = Receiver()
    receiver.statuses = [500]
    cluster = start_cluster(
        tmp_path / "qcluster.log", WEBHOOKS_ALLOW_HTTP="1", WEBHOOKS_ALLOW_PRIVATE="1", Q_WORKERS="1"
    )
    try:
        endpoint = services.endpoint_create(team=team, url=receiver.url, events=["memory.updated", "end_user.erased"])
        end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")
        memory_services.memory_set(end_user=end_user, text="Likes tea.")
        delivery = wait_for(
            lambda: Delivery.objects.filter(status="retrying").first(),
            what="the first attempt (answered 500)",
            clusters=[cluster],
        )
        assert delivery.attempts == 1 and delivery.last_response == "5xx"
        # Its backoff has passed: the cluster's sweep task queues the retry, and a worker sends it.
        Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
        async_task("webhooks.tasks.retry_due")
        wait_for(
            lambda: Delivery.objects.filter(pk=delivery.pk, status="succeeded").exists(),
            what="the retry",
            clusters=[cluster],
        )
        memory_services.end_user_erase(end_user=end_user)
        wait_for(
            lambda: Delivery.objects.filter(event="end_user.erased", status="succeeded").exists(),
            what="the erase event",
            clusters=[cluster],
        )
    finally:
        stop_cluster(*cluster)
        receiver.stop()
    assert [event["type"] for event in receiver.events(endpoint.secret)] == [
        "memory.updated",
        "memory.updated",
        "end_user.erased",
    ]
    assert all(
        signing.verify(endpoint.secret, r["body"], r["headers"]["agentnava-signature"]) for r in receiver.requests
    )

"""The bare comparison for `bench/api.py`: the least a Django + DRF app does to answer the same
reads on the same tables and indexes, so the project's figures can be read as a ratio to what the
stack itself costs on this machine in the same run.

It is a settings module and a URLconf at once (gunicorn runs it with
DJANGO_SETTINGS_MODULE=bench.bare_api): the project's apps for the models, no middleware but
CommonMiddleware, no authentication, no throttle; rows read with `.values()` in one query and
rendered by DRF's JSONRenderer as they come (no serializer).

- GET /bare/agents/<agent pk>/end-users/<external id>/memory: one memory by its end user's (agent,
  external id), one query (a join on that unique index): its text and times.
- GET /bare/agents/<agent pk>/memories?limit=50[&before_id=N&before_at=ISO]: a keyset page of the
  present memories on the same partial index the project's page reads (memory_agent_present), in
  one query: the 50 rows' end-user id, text and times.
"""

from agentnava_site.settings import *  # noqa: F403

MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "bench.bare_api"
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_THROTTLE_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}


def _urls():
    from django.db.models import Q
    from django.http import Http404
    from django.urls import path
    from django.utils.dateparse import parse_datetime
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from memory.models import Memory

    fields = ("external_id", "text", "updated_at", "read_up_to", "stopped_at")

    class MemoryView(APIView):
        def get(self, request, agent_pk, external_id):
            # Through the end user's (agent, external_id) unique index, as the project's read.
            row = (
                Memory.objects.filter(end_user__agent_id=agent_pk, end_user__external_id=external_id)
                .values(*fields)
                .first()
            )
            if row is None:
                raise Http404
            return Response(row)

    class PageView(APIView):
        def get(self, request, agent_pk):
            rows = (
                Memory.objects.filter(agent_id=agent_pk)
                .filter(~Q(text="") | Q(stopped_at__isnull=False))
                .order_by("-updated_at", "-id")
            )
            if "before_id" in request.query_params:
                at, pk = parse_datetime(request.query_params["before_at"]), int(request.query_params["before_id"])
                # The keyset as a range the index can seek to, then the tie on id.
                rows = rows.filter(updated_at__lte=at).filter(Q(updated_at__lt=at) | Q(id__lt=pk))
            limit = int(request.query_params.get("limit", 50))
            return Response({"memories": list(rows.values(*fields)[:limit])})

    return [
        path("bare/agents/<int:agent_pk>/end-users/<str:external_id>/memory", MemoryView.as_view()),
        path("bare/agents/<int:agent_pk>/memories", PageView.as_view()),
    ]


_urlpatterns: list = []


def __getattr__(name):
    """`urlpatterns`, built on first use: Django reads it after setup, and the views import models,
    which this module cannot do while it is being read as the settings."""
    if name == "urlpatterns":
        if not _urlpatterns:
            _urlpatterns.extend(_urls())
        return _urlpatterns
    raise AttributeError(name)

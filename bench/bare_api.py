"""The bare comparison for `bench/api.py`: the least a Django + DRF app does to answer the same
two reads on the same tables and indexes, so the project's figures can be read as a ratio to what
the stack itself costs on this machine in the same run.

It is a settings module and a URLconf at once (gunicorn runs it with
DJANGO_SETTINGS_MODULE=bench.bare_api): the project's apps for the models, no middleware but
CommonMiddleware, no authentication, no throttle, ModelSerializers.

- GET /bare/agents/<agent pk>/end-users/<external id>/memory: one row by (agent, end user), one query.
- GET /bare/agents/<agent pk>/memories?limit=50[&before_id=N&before_at=ISO]: a keyset page.
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
    from django.urls import path
    from django.utils.dateparse import parse_datetime
    from rest_framework import serializers
    from rest_framework.generics import get_object_or_404
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from memory.models import Memory

    class MemorySerializer(serializers.ModelSerializer):
        endUserId = serializers.CharField(source="end_user.external_id")

        class Meta:
            model = Memory
            fields = ["endUserId", "text", "updated_at", "read_up_to", "last_run", "stopped_at"]

    class MemoryView(APIView):
        def get(self, request, agent_pk, external_id):
            memory = get_object_or_404(
                Memory.objects.select_related("end_user"),
                end_user__agent_id=agent_pk,  # the end user's (agent, external_id) unique index
                end_user__external_id=external_id,
            )
            return Response(MemorySerializer(memory).data)

    class PageView(APIView):
        def get(self, request, agent_pk):
            rows = Memory.objects.select_related("end_user").filter(agent_id=agent_pk).order_by("-updated_at", "-id")
            if "before_id" in request.query_params:
                at, pk = parse_datetime(request.query_params["before_at"]), int(request.query_params["before_id"])
                rows = rows.filter(Q(updated_at__lt=at) | Q(updated_at=at, id__lt=pk))
            return Response(
                {"memories": MemorySerializer(rows[: int(request.query_params.get("limit", 50))], many=True).data}
            )

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

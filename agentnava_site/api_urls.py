"""The REST API's routes: /api/v1/..., the OpenAPI schema at /api/schema/ and its docs page at
/api/docs/ (Swagger UI from drf-spectacular-sidecar's static files: no CDN)."""

from django.http import JsonResponse
from django.urls import include, path, re_path, register_converter
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from agentnava_site.raw_path import EndUserIdConverter
from surfaces.api import agents as agents_api
from surfaces.api import audit as api_audit
from surfaces.api import consent as consent_api
from surfaces.api import jobs as api_jobs
from surfaces.api import lists as api_lists
from surfaces.api import memory as memory_api
from surfaces.api import people as api_people
from surfaces.api import webhooks as webhooks_api
from surfaces.http.base import api_description
from surfaces.http.errors import error_body

# One segment, whatever it holds: "bob/memory" and "bob" are two people on every route (raw_path).
register_converter(EndUserIdConverter, "end_user_id")

END_USER = "agents/<str:agent_id>/end-users/<end_user_id:end_user_id>"

v1 = [
    path("agents", api_lists.AgentListApi.as_view(), name="agents"),
    path("agents/<str:agent_id>", agents_api.AgentApi.as_view(), name="agent"),
    path("agents/<str:agent_id>/versions", agents_api.VersionListApi.as_view(), name="agent-versions"),
    path("agents/<str:agent_id>/memories", memory_api.MemoryListApi.as_view(), name="agent-memories"),
    path("agents/<str:agent_id>/conversations", agents_api.ConversationStartApi.as_view(), name="agent-start"),
    path("agents/<str:agent_id>/end-users", api_people.PeopleApi.as_view(), name="agent-end-users"),
    path(f"{END_USER}/memory/stop", memory_api.MemoryStopApi.as_view(), name="memory-stop"),
    path(f"{END_USER}/memory", memory_api.MemoryApi.as_view(), name="memory"),
    path(f"{END_USER}/consent", consent_api.ConsentApi.as_view(), name="consent"),
    path(f"{END_USER}/conversations", api_people.PersonConversationsApi.as_view(), name="end-user-conversations"),
    path(f"{END_USER}/export", api_people.PersonExportApi.as_view(), name="end-user-export"),
    path(END_USER, memory_api.EndUserApi.as_view(), name="end-user"),
    path("end-users/<end_user_id:end_user_id>", api_people.TeamEraseApi.as_view(), name="team-end-user"),
    path("conversations/<str:conversation_id>", api_lists.ConversationApi.as_view(), name="conversation"),
    path(
        "conversations/<str:conversation_id>/messages",
        agents_api.MessageSendApi.as_view(),
        name="conversation-messages",
    ),
    path("conversations/<str:conversation_id>/events", agents_api.EventRecordApi.as_view(), name="conversation-events"),
]
v1.append(path("agents/<str:agent_id>/builder", agents_api.BuilderApi.as_view(), name="agent-builder"))
v1 += [
    path("agents/<str:agent_id>/try", api_jobs.TryStartApi.as_view(), name="agent-try"),
    path("agents/<str:agent_id>/try/<str:job_id>", api_jobs.TryJobApi.as_view(), name="agent-try-job"),
    path("agents/<str:agent_id>/try/<str:job_id>/cancel", api_jobs.TryCancelApi.as_view(), name="agent-try-cancel"),
    path("agents/<str:agent_id>/apply", api_jobs.ApplyStartApi.as_view(), name="agent-apply"),
    path("agents/<str:agent_id>/apply/<str:job_id>", api_jobs.ApplyJobApi.as_view(), name="agent-apply-job"),
    path(
        "agents/<str:agent_id>/apply/<str:job_id>/cancel", api_jobs.ApplyCancelApi.as_view(), name="agent-apply-cancel"
    ),
    path(
        "agents/<str:agent_id>/instruction-check",
        api_jobs.InstructionCheckApi.as_view(),
        name="agent-instruction-check",
    ),
]
v1.append(path("audit-log", api_audit.AuditLogApi.as_view(), name="audit-log"))
v1.append(path("webhooks", webhooks_api.WebhookListApi.as_view(), name="webhooks"))
v1.append(path("webhooks/<str:webhook_id>", webhooks_api.WebhookApi.as_view(), name="webhook"))


def api_not_found(request, rest=""):
    """Any other path under /api/v1/ answers in the API's error shape, not an HTML page."""
    return JsonResponse(error_body("not_found", "No such path in the API."), status=404)


v1.append(re_path(r"^(?P<rest>[\s\S]*)\Z", api_not_found))

urlpatterns = [
    path("v1/", include((v1, "api"), namespace="api")),
    path("schema/", SpectacularAPIView.as_view(custom_settings={"DESCRIPTION": api_description()}), name="api-schema"),
    # The split view serves its start-up script as a file (?script), so the page passes the CSP.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
]

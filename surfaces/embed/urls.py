"""The website chat: the script and its public JSON endpoints."""

from django.urls import path, re_path

from surfaces.embed import views as embed_views

app_name = "embed"

urlpatterns = [
    path("embed/v1.js", embed_views.script, name="script"),
    path("embed/v1/agents/<str:agent_id>/config", embed_views.agent_config, name="config"),
    path("embed/v1/agents/<str:agent_id>/start", embed_views.chat_start, name="start"),
    path("embed/v1/agents/<str:agent_id>/consent", embed_views.consent_answer, name="consent"),
    path("embed/v1/conversations/<str:conversation_id>/transcript", embed_views.transcript, name="transcript"),
    path("embed/v1/conversations/<str:conversation_id>/messages", embed_views.message_send, name="messages"),
    path("embed/v1/conversations/<str:conversation_id>/switch", embed_views.memory_switch, name="switch"),
    # Any other path under /embed/ answers in the embed's JSON shape, CORS-open (not an HTML page).
    re_path(r"^embed/(?P<rest>[\s\S]*)\Z", embed_views.not_found),
]

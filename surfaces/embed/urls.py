"""The website chat: the script and its public JSON endpoints, under `EMBED_PREFIX`."""

from django.urls import path, re_path

from surfaces.embed import views as embed_views
from surfaces.http.paths import EMBED_PREFIX, route

app_name = "embed"
EMBED = route(EMBED_PREFIX)
V1 = EMBED + "v1/"

urlpatterns = [
    path(EMBED + "v1.js", embed_views.script, name="script"),
    path(V1 + "agents/<str:agent_id>/config", embed_views.AgentConfigApi.as_view(), name="config"),
    path(V1 + "agents/<str:agent_id>/start", embed_views.ChatStartApi.as_view(), name="start"),
    path(V1 + "agents/<str:agent_id>/consent", embed_views.ConsentAnswerApi.as_view(), name="consent"),
    path(
        V1 + "conversations/<str:conversation_id>/transcript",
        embed_views.TranscriptApi.as_view(),
        name="transcript",
    ),
    path(V1 + "conversations/<str:conversation_id>/messages", embed_views.MessageSendApi.as_view(), name="messages"),
    path(V1 + "conversations/<str:conversation_id>/switch", embed_views.MemorySwitchApi.as_view(), name="switch"),
    # Any other path under /embed/ answers in the embed's JSON shape, CORS-open (not an HTML page).
    re_path(r"^" + EMBED + r"(?P<rest>[\s\S]*)\Z", embed_views.NotFoundApi.as_view()),
]

from django.urls import path

from surfaces.web import build as views
from surfaces.web import team as team_views

app_name = "agents"

urlpatterns = [
    path("", views.home, name="home"),
    path("team/switch/", views.switch_team, name="switch_team"),
    path("agents/new/", views.agent_new, name="new"),
    path("agents/<str:public_id>/", views.overview, name="overview"),
    path("agents/<str:public_id>/publish/", views.draft_publish, name="publish"),
    path("agents/<str:public_id>/discard/", views.draft_discard, name="discard"),
    path("agents/<str:public_id>/versions/", views.versions, name="versions"),
    path("agents/<str:public_id>/builder/", views.builder, name="builder"),
    path("agents/<str:public_id>/versions/<int:number>/restore/", views.version_restore, name="restore"),
    path("settings/api-keys/", views.api_keys, name="api_keys"),
    path("settings/api-keys/<int:key_id>/revoke/", views.api_key_revoke, name="api_key_revoke"),
    path("settings/team/", team_views.team_page, name="team"),
    path("settings/team/members/<int:membership_id>/remove/", team_views.member_remove, name="member_remove"),
    path("settings/team/members/<int:membership_id>/role/", team_views.member_role, name="member_role"),
    path("settings/team/audit/", team_views.audit_log, name="audit_log"),
    path(
        "settings/team/invitations/<int:invitation_id>/revoke/", team_views.invitation_revoke, name="invitation_revoke"
    ),
    path("invitations/<str:token>/", team_views.invitation, name="invitation"),
]

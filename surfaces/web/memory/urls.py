from django.urls import path

from surfaces.web.memory import demo as demo_views
from surfaces.web.memory import export as export_views
from surfaces.web.memory import tab as tab_views
from surfaces.web.memory import views

app_name = "memory"

P = "agents/<str:public_id>/memory/"
ONE = P + "people/<int:end_user_id>/"

urlpatterns = [
    path("demo/chat/", demo_views.demo_chat, name="demo_chat"),
    path(P, tab_views.memory_tab, name="tab"),
    path(P + "people/", tab_views.people, name="people"),
    path(P + "activity/", tab_views.activity, name="activity"),
    path(P + "check/", views.instruction_check, name="check"),
    path(P + "note/", views.note_preview, name="note"),
    path(P + "try/", views.try_page, name="try"),
    path(P + "try/<int:job_id>/", views.try_status, name="try_status"),
    path(P + "try/<int:job_id>/cancel/", views.try_cancel, name="try_cancel"),
    path(P + "apply/", views.apply_start, name="apply"),
    path(P + "apply/confirm/", tab_views.apply_confirm, name="apply_confirm"),
    path(P + "apply/<int:job_id>/", views.apply_status, name="apply_status"),
    path(P + "apply/<int:job_id>/cancel/", views.apply_cancel, name="apply_cancel"),
    path(P + "apply/<int:job_id>/resume/", views.apply_resume, name="apply_resume"),
    path(ONE, views.memory_detail, name="detail"),
    path(ONE + "lines/<int:index>/", views.line_edit, name="line_edit"),
    path(ONE + "lines/<int:index>/delete/", views.line_delete, name="line_delete"),
    path(ONE + "lines/add/", tab_views.line_add, name="line_add"),
    path(ONE + "replace/", views.memory_replace, name="replace"),
    path(ONE + "stop/", views.memory_stop, name="stop"),
    path(ONE + "delete/", views.memory_delete, name="delete"),
    path(ONE + "erase/", views.end_user_erase, name="erase"),
    path(ONE + "export/", export_views.end_user_export_download, name="export"),
    path(
        "agents/<str:public_id>/conversations/<str:conversation_id>/", views.conversation_transcript, name="transcript"
    ),
]

from django.urls import path

from surfaces.web import webhooks as views

app_name = "webhooks"

urlpatterns = [
    path("settings/webhooks/", views.webhooks, name="webhooks"),
    path("settings/webhooks/<str:public_id>/toggle", views.webhook_toggle, name="webhook_toggle"),
    path("settings/webhooks/<str:public_id>/delete", views.webhook_delete, name="webhook_delete"),
]

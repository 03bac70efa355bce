from django.urls import path

from . import views

app_name = "memory"

urlpatterns = [
    path("agents/<str:public_id>/memory/", views.memory_tab, name="tab"),
]

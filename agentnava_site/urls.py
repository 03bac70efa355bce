from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from agents.views import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", healthz, name="healthz"),
    path("api/", include("agentnava_site.api_urls")),
    path("", include("agents.embed_urls")),
    path("", include("memory.urls")),
    path("", include("agents.urls")),
]

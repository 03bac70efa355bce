from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from ops.views import healthz_tasks, metrics
from surfaces.http.paths import API_PREFIX, route
from surfaces.web.auth import PasswordResetView
from surfaces.web.build import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Password change (signed in) and reset (by e-mail, through EMAIL_BACKEND): Django's own views.
    path("accounts/password/change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/password/reset/", PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"
    ),
    path("healthz", healthz, name="healthz"),
    path("healthz/tasks", healthz_tasks, name="healthz_tasks"),
    path("metrics", metrics, name="metrics"),
    path(route(API_PREFIX), include("agentnava_site.api_urls")),
    path("", include("surfaces.embed.urls")),
    path("", include("surfaces.web.memory.urls")),
    path("", include("surfaces.web.webhooks_urls")),
    path("", include("surfaces.web.agents_urls")),
]

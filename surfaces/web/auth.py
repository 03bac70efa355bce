"""Sign-in pages beside Django's own: password reset with a limit on how often it can be asked.

Sign-in itself is throttled by django-axes (settings: AXES_*); the reset form sends mail, so it is
limited too: at most RESET_PER_ADDRESS requests an hour from one address and RESET_PER_EMAIL mails
an hour to one e-mail address (counted whether or not it has an account, so the answer says
nothing about accounts). Finding the account and sending the mail happen in a django-q task
(`agents.tasks.password_reset_mail`): the request queues one task either way, so its answer and its
time say nothing about accounts either."""

import hashlib

from django.contrib.auth import views as auth_views
from django.contrib.sites.shortcuts import get_current_site
from django.core.cache import cache
from django.http import HttpResponseRedirect

RESET_WINDOW_SECONDS = 3600
RESET_PER_ADDRESS = 10
RESET_PER_EMAIL = 3


def _within(key: str, limit: int) -> bool:
    """Count one for `key` in a window that starts at the first; whether it is within `limit`."""
    cache_key = "pwreset:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    if cache.add(cache_key, 1, timeout=RESET_WINDOW_SECONDS):
        return True
    try:
        return cache.incr(cache_key) <= limit
    except ValueError:  # expired meanwhile: a new window
        cache.set(cache_key, 1, timeout=RESET_WINDOW_SECONDS)
        return True


class PasswordResetView(auth_views.PasswordResetView):
    def form_invalid(self, form):
        # Not an address (or over its 254 characters): the form again, with why, as a 400.
        response = super().form_invalid(form)
        response.status_code = 400
        return response

    def form_valid(self, form):
        address = self.request.META.get("REMOTE_ADDR", "")
        email = form.cleaned_data["email"].strip().lower()
        if not (_within(f"address:{address}", RESET_PER_ADDRESS) and _within(f"email:{email}", RESET_PER_EMAIL)):
            form.add_error(None, "Too many password reset requests: try again in an hour.")
            response = self.form_invalid(form)
            response.status_code = 429
            return response
        from django_q.tasks import async_task

        from agents.tasks import RESET_TASK

        async_task(RESET_TASK, email, get_current_site(self.request).domain, self.request.is_secure())
        return HttpResponseRedirect(self.get_success_url())

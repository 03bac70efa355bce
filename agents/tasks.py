"""Tasks of the agents app (django-q): thin, ids and plain values in, one service out."""

from django.contrib.auth.forms import PasswordResetForm

RESET_TASK = "agents.tasks.password_reset_mail"


def password_reset_mail(email: str, domain: str, use_https: bool) -> None:
    """Send the reset link to every active account with this address, if there is one (Django's
    PasswordResetForm: the lookup, the token, the mail). It runs in a task so the request that asked
    does the same work whether or not the address has an account."""
    form = PasswordResetForm({"email": email})
    if form.is_valid():
        form.save(domain_override=domain, use_https=use_https)

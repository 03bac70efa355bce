"""Sign-in resists guessing (django-axes, keyed on account and address) and a member can reset a
forgotten password by e-mail or change it signed in, through Django's own views."""

import re

import pytest
from django.core import mail
from django.test import Client

from agents.models import ApiKey  # noqa: F401  (the app's models load)

PASSWORD = "pw-for-tests-1"


@pytest.fixture(autouse=True)
def limit(settings):
    from django.core.cache import cache

    settings.AXES_FAILURE_LIMIT = 5
    cache.clear()  # the reset form's counts
    yield
    cache.clear()


def sign_in(client, email, password, ip="203.0.113.7"):
    return client.post("/accounts/login/", {"username": email, "password": password}, REMOTE_ADDR=ip)


def test_wrong_passwords_lock_the_account_from_that_address_with_a_clear_message(user):
    client = Client()
    for _ in range(4):
        response = sign_in(client, user.username, "wrong")
        assert response.status_code == 200 and b"do not match" in response.content
    locked = sign_in(client, user.username, "wrong")
    assert locked.status_code == 429 and b"Too many wrong passwords" in locked.content
    # Now even the right password does not get in from that address...
    refused = sign_in(client, user.username, PASSWORD)
    assert refused.status_code == 429 and "_auth_user_id" not in client.session
    # ...while the member from their own address still can (the lock is the pair).
    other = Client()
    assert sign_in(other, user.username, PASSWORD, ip="198.51.100.9").status_code == 302
    assert "_auth_user_id" in other.session


def test_a_right_password_before_the_limit_resets_the_count(user):
    client = Client()
    for _ in range(4):
        sign_in(client, user.username, "wrong")
    assert sign_in(client, user.username, PASSWORD).status_code == 302
    client.post("/accounts/logout/")
    for _ in range(4):
        assert sign_in(client, user.username, "wrong").status_code == 200
    assert sign_in(client, user.username, PASSWORD).status_code == 302


def test_password_reset_by_email_through_the_configured_backend(user, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client = Client()
    page = client.get("/accounts/login/")
    assert b"/accounts/password/reset/" in page.content
    response = client.post("/accounts/password/reset/", {"email": user.email})
    assert response.status_code == 302 and response["Location"] == "/accounts/password/reset/sent/"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [user.email]
    link = re.search(r"https?://[^/]+(/accounts/password/reset/\S+/)", mail.outbox[0].body).group(1)
    form = client.get(link, follow=True)
    assert form.status_code == 200 and b"Set a new password" in form.content
    done = client.post(
        form.redirect_chain[-1][0], {"new_password1": "a-new-long-password-9", "new_password2": "a-new-long-password-9"}
    )
    assert done.status_code == 302
    assert sign_in(Client(), user.username, "a-new-long-password-9").status_code == 302
    assert sign_in(Client(), user.username, PASSWORD).status_code == 200  # the old one is gone
    # An unknown address says the same and sends nothing.
    assert client.post("/accounts/password/reset/", {"email": "nobody@nowhere.test"}).status_code == 302
    assert len(mail.outbox) == 1


def test_password_reset_answers_and_works_alike_with_or_without_an_account_and_mails_from_a_task(
    user, settings, monkeypatch
):
    """The request queues one task whatever the address (the same answer, the same queries: nothing
    that takes longer for an account); the task finds the account and sends the mail."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django_q import tasks as q_tasks

    from agents.tasks import RESET_TASK, password_reset_mail

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    queued = []
    monkeypatch.setattr(q_tasks, "async_task", lambda func, *args, **kw: queued.append((func, args)))
    answers, queries = [], []
    for email in (user.email, "nobody@nowhere.test"):
        client = Client()
        client.get("/accounts/password/reset/")
        with CaptureQueriesContext(connection) as counted:
            response = client.post("/accounts/password/reset/", {"email": email})
        answers.append((response.status_code, response["Location"], response.content))
        queries.append([q["sql"].split(" WHERE ")[0] for q in counted.captured_queries])
    assert answers[0] == answers[1] == (302, "/accounts/password/reset/sent/", b"")
    assert queries[0] == queries[1]
    assert [func for func, _ in queued] == [RESET_TASK, RESET_TASK]
    assert mail.outbox == []  # nothing sent by the request itself
    for _, args in queued:
        password_reset_mail(*args)
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [user.email]
    assert "/accounts/password/reset/" in mail.outbox[0].body


def test_a_reset_address_over_254_characters_or_not_an_address_is_a_400(db, mailoutbox):
    for email, says in (("a" * 250 + "@example.com", "at most 254 characters"), ("not an address", "valid email")):
        response = Client().post("/accounts/password/reset/", {"email": email})
        assert response.status_code == 400
        assert says in response.content.decode()
    assert mailoutbox == []


def test_password_change_signed_in(member_client, user):
    page = member_client.get("/accounts/password/change/")
    assert page.status_code == 200 and b"Change your password" in page.content
    wrong = member_client.post(
        "/accounts/password/change/",
        {"old_password": "nope", "new_password1": "x-new-password-77", "new_password2": "x-new-password-77"},
    )
    assert wrong.status_code == 200
    ok = member_client.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": "x-new-password-77", "new_password2": "x-new-password-77"},
    )
    assert ok.status_code == 302
    user.refresh_from_db()
    assert user.check_password("x-new-password-77")


def test_the_email_backend_is_the_console_by_default():
    from agentnava_site import settings as base

    assert (
        base.EMAIL_BACKEND == "django.core.mail.backends.console.EmailBackend"
        or "EMAIL_BACKEND" in __import__("os").environ
    )


def test_password_reset_requests_are_limited_per_email_and_per_address(user, settings):
    from django.core.cache import cache

    cache.clear()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client = Client()
    for _ in range(3):
        assert (
            client.post("/accounts/password/reset/", {"email": user.email}, REMOTE_ADDR="203.0.113.5").status_code
            == 302
        )
    refused = client.post("/accounts/password/reset/", {"email": user.email}, REMOTE_ADDR="198.51.100.5")
    assert refused.status_code == 429 and b"Too many password reset requests" in refused.content
    assert len(mail.outbox) == 3
    # One address asking for many e-mails is limited too.
    for i in range(7):
        client.post("/accounts/password/reset/", {"email": f"nobody{i}@nowhere.test"}, REMOTE_ADDR="203.0.113.5")
    assert (
        client.post("/accounts/password/reset/", {"email": "other@nowhere.test"}, REMOTE_ADDR="203.0.113.5").status_code
        == 429
    )
    cache.clear()

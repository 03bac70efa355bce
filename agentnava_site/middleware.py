"""Middleware that serves the web app's pages but has nothing to do for the REST API.

An API request carries a key, not a session or a CSRF cookie, answers JSON that no browser frames
or renders as a page, and never signs in through the login form. Sessions, the signed-in user,
messages, CSP and htmx are each skipped for `/api/v1/` paths and run exactly as before for every
other path (the API's docs page included). CSRF (API views are exempt, so it passes them by), X-Frame-Options and the sign-in
throttle stay as they are: `check --deploy` and django-axes look for them by name. The API's own
guards (key authentication, the per-key throttle, the input boundary, strict fields) run on every
API request as before.
"""

from csp.middleware import CSPMiddleware
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django_htmx.middleware import HtmxMiddleware

from surfaces.http.paths import API_CALLS_PREFIX


def is_api(request) -> bool:
    return request.path_info.startswith(API_CALLS_PREFIX)


def web_only(middleware_class):
    """A subclass of `middleware_class` (so Django's and the libraries' checks still find it) that
    steps aside for API paths: the request goes straight on, and its view hooks do nothing."""

    def __call__(self, request):
        if is_api(request):
            return self.get_response(request)
        return middleware_class.__call__(self, request)

    methods = {"__call__": __call__, "__doc__": f"{middleware_class.__name__}, for every path but the API's."}
    for name in ("process_view", "process_exception", "process_template_response"):
        inner = getattr(middleware_class, name, None)
        if inner is not None:

            def hook(self, request, *args, _inner=inner):
                return None if is_api(request) else _inner(self, request, *args)

            methods[name] = hook
    return type(f"Web{middleware_class.__name__}", (middleware_class,), methods)


WebSessionMiddleware = web_only(SessionMiddleware)
WebAuthenticationMiddleware = web_only(AuthenticationMiddleware)
WebMessageMiddleware = web_only(MessageMiddleware)
WebCSPMiddleware = web_only(CSPMiddleware)
WebHtmxMiddleware = web_only(HtmxMiddleware)


class PrivatePagesMiddleware:
    """A page for someone signed in (a session) or an answer to an API key holds a team's data:
    `Cache-Control: private, no-store`, so no shared cache and no browser's back button keeps it.
    Anonymous pages (sign-in, the website chat's script) keep their own caching."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and getattr(user, "is_authenticated", False):
            response["Cache-Control"] = "private, no-store"
        return response

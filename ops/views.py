import hmac
import ipaddress
import json

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ops.health import task_health


@never_cache
@require_GET
def healthz_tasks(request):
    """200 while the background work moves, 503 when it has stalled (ops.health). Ages only."""
    report = task_health()
    return HttpResponse(json.dumps(report), status=200 if report["ok"] else 503, content_type="application/json")


# Headers a proxy adds for the client behind it (RFC 7239's Forwarded, the X-Forwarded-* family, and
# the vendors' own): a request with any of them came through a proxy.
FORWARDING_HEADERS = (
    "HTTP_FORWARDED",
    "HTTP_VIA",
    "HTTP_X_REAL_IP",
    "HTTP_X_CLIENT_IP",
    "HTTP_X_CLUSTER_CLIENT_IP",
    "HTTP_TRUE_CLIENT_IP",
    "HTTP_CF_CONNECTING_IP",
    "HTTP_FASTLY_CLIENT_IP",
    "HTTP_X_ORIGINAL_FORWARDED_FOR",
)


def _forwarded(request) -> bool:
    meta = request.META
    return any(name in meta for name in FORWARDING_HEADERS) or any(
        name.startswith("HTTP_X_FORWARDED_") for name in meta
    )


def _private_client(request) -> bool:
    """A direct request from loopback or a private network. A request that came through a proxy
    (it carries any forwarding header, `Forwarded` included, even empty) is not direct, whatever the
    proxy's own address."""
    if _forwarded(request):
        return False
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return address.is_loopback or address.is_private


@never_cache
@require_GET
def metrics(request):
    """Prometheus text format. With METRICS_TOKEN set: `Authorization: Bearer <token>` or 401.
    Without it: only direct requests from a private network; anything else is 404."""
    token = getattr(settings, "METRICS_TOKEN", "")
    if token:
        given = request.META.get("HTTP_AUTHORIZATION", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            response = HttpResponse("", status=401, content_type="text/plain")
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    elif not _private_client(request):
        raise Http404
    from prometheus_client import CONTENT_TYPE_LATEST

    from ops.metrics import render

    return HttpResponse(render(), content_type=CONTENT_TYPE_LATEST)

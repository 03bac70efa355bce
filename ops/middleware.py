import logging
import time

from ops import counters

log = logging.getLogger("agentnava.request")


def surface(route: str) -> str:
    if route.startswith("api/"):
        return "api"
    if route.startswith(("embed", "w/", "widget")):
        return "embed"
    return "web"


class RequestLogMiddleware:
    """One log line per request (method, route pattern, status, time, agent id) and the request
    counters for /metrics. The route is the URL pattern, never the path: a path may hold an end
    user's id. No query string, body, header or key is logged."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.monotonic()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.route if match else "unresolved"
        status = response.status_code
        counters.add("requests", status=f"{status // 100}xx")
        if status == 429:
            counters.add("throttled", surface=surface(route))
        if route in ("metrics", "healthz", "healthz/tasks"):
            return response  # probes every few seconds: counted, not logged
        agent_id = (match.kwargs.get("agent_id") or match.kwargs.get("public_id")) if match else None
        log.log(
            logging.WARNING if status >= 500 else logging.INFO,
            "request",
            extra={
                "event": "request",
                "method": request.method,
                "route": route,
                "status": status,
                "duration_ms": int((time.monotonic() - started) * 1000),
                "agent_id": agent_id if isinstance(agent_id, (str, int)) and len(str(agent_id)) <= 64 else None,
                "outcome": "ok" if status < 400 else ("refused" if status < 500 else "error"),
            },
        )
        return response

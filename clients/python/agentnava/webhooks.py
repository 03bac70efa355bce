"""Checking a webhook delivery: `AgentNava-Signature: t=<unix seconds>,v1=<hex>`, where v1 is
HMAC-SHA256 over `"<t>." + body` with the endpoint's secret. Verify the raw body as it arrived
(before any JSON parsing), in constant time, and refuse an old `t` (a replay).

    from agentnava import verify_signature

    if not verify_signature(secret, request.body, request.headers["AgentNava-Signature"]):
        return HttpResponse(status=400)

A receiver that must not act twice keys on the delivery's `id`: a retry sends the same id."""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "AgentNava-Signature"
TOLERANCE_SECONDS = 300


def sign(secret: str, body: bytes | str, timestamp: int | None = None) -> str:
    """The header value the server sends for `body` (for a receiver's own tests)."""
    t = int(time.time()) if timestamp is None else int(timestamp)
    raw = body.encode() if isinstance(body, str) else body
    digest = hmac.new(secret.encode(), f"{t}.".encode() + raw, hashlib.sha256).hexdigest()
    return f"t={t},v1={digest}"


def verify_signature(
    secret: str,
    body: bytes | str,
    header: str | None,
    *,
    tolerance: float = TOLERANCE_SECONDS,
    now: float | None = None,
) -> bool:
    """Whether `header` signs `body` with `secret` at a time within `tolerance` seconds of now."""
    parts = dict(part.strip().split("=", 1) for part in (header or "").split(",") if "=" in part)
    try:
        t = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - t) > tolerance:
        return False
    raw = body.encode() if isinstance(body, str) else body
    expected = hmac.new(secret.encode(), f"{t}.".encode() + raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts.get("v1", ""))

"""The signature of a delivery: `AgentNava-Signature: t=<unix seconds>,v1=<hex>` where v1 is
HMAC-SHA256 over `"<t>." + body` with the endpoint's secret. A receiver checks the HMAC in
constant time and refuses a `t` outside its replay window (five minutes by default). No Django:
a receiver can copy this module as it is."""

import hashlib
import hmac
import time

HEADER = "AgentNava-Signature"
TOLERANCE_SECONDS = 300


def sign(secret: str, body: bytes, timestamp: int | None = None) -> str:
    t = int(time.time()) if timestamp is None else int(timestamp)
    digest = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={digest}"


def verify(
    secret: str, body: bytes, header: str, *, tolerance: int = TOLERANCE_SECONDS, now: float | None = None
) -> bool:
    """Whether `header` signs `body` with `secret` at a time within `tolerance` seconds of now."""
    parts = dict(part.split("=", 1) for part in (header or "").split(",") if "=" in part)
    try:
        t = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - t) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts.get("v1", ""))

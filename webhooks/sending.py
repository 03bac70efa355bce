"""One HTTP POST of one delivery, to the address that was checked.

The host is resolved once (`addresses.check_target`), every address checked, and the connection
made to the first of them: a second lookup (DNS rebinding) never happens. TLS still verifies the
certificate against the host name (httpcore's `sni_hostname` is the name the handshake sends and
checks), and the Host header carries the name. Redirects are never followed, proxies from the
environment never used, and nothing of the answer is read or kept but its status class: a
receiver cannot make us reach another address, nor learn what lies behind one through us."""

import ssl
from dataclasses import dataclass

import httpx

from webhooks import addresses

TIMEOUT_SECONDS = 10
TLS_VERIFY: bool | ssl.SSLContext = True  # the system's CAs (tests trust their own CA here)

NO_RESPONSE = "no_response"  # refused before connecting, a connection failure, a timeout, a TLS failure
RESPONSE_CLASSES = ("2xx", "3xx", "4xx", "5xx", NO_RESPONSE)

# The only words a delivery keeps about an attempt (no text from the network: the status class).
NOT_ALLOWED = "The address is not allowed (refused before connecting)."
NOT_ANSWERED = "No HTTP answer (the connection failed, timed out or its certificate did not verify)."
REDIRECT = "A redirect (3xx): redirects are not followed."
ERROR_STATUS = "An HTTP {} answer."


@dataclass(frozen=True)
class Outcome:
    response_class: str  # one of RESPONSE_CLASSES
    error: str  # "" on a 2xx

    @property
    def succeeded(self) -> bool:
        return self.response_class == "2xx"


def status_class(status: int) -> str:
    return f"{status // 100}xx" if 200 <= status < 600 else NO_RESPONSE


def post(url: str, body: bytes, headers: dict, *, allow_http: bool, allow_private: bool) -> Outcome:
    try:
        target = addresses.check_target(url, allow_http=allow_http, allow_private=allow_private)
    except addresses.TargetRefused:
        return Outcome(NO_RESPONSE, NOT_ALLOWED)
    default_port = 443 if target.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{_bracketed(target.host)}:{target.port}"
    pinned = httpx.URL(url).copy_with(host=target.ip)
    try:
        with (
            httpx.Client(verify=TLS_VERIFY, timeout=TIMEOUT_SECONDS, follow_redirects=False, trust_env=False) as client,
            client.stream(
                "POST",
                pinned,
                content=body,
                headers={**headers, "Host": host_header},
                extensions={"sni_hostname": target.host},
            ) as response,
        ):
            answer = status_class(response.status_code)  # the body is never read
    except (httpx.HTTPError, OSError, ValueError):
        return Outcome(NO_RESPONSE, NOT_ANSWERED)
    if answer == "2xx":
        return Outcome(answer, "")
    if answer == "3xx":
        return Outcome(answer, REDIRECT)
    return Outcome(answer, ERROR_STATUS.format(answer) if answer != NO_RESPONSE else NOT_ANSWERED)


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host

"""Where a webhook may be sent: an https address whose every resolved IP is globally routable.

One rule for registration and delivery alike. `ipaddress.is_global` decides, after unwrapping the
IPv6 forms that carry an IPv4 address a router or a host stack may forward to (IPv4-mapped,
IPv4-compatible, 6to4, NAT64, Teredo), so `::ffff:127.0.0.1` or `2002:7f00:1::` are loopback, and
the carrier-grade NAT range 100.64.0.0/10 (a cloud's metadata service sits at 100.100.100.200) is
refused by name whatever a Python version's tables say. WEBHOOKS_ALLOW_PRIVATE (local development,
tests with a receiver on 127.0.0.1) lets any address through; WEBHOOKS_ALLOW_HTTP lets http.
No Django models here: the settings are read by the caller and passed in."""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL_LENGTH = 500
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215: a network's own translators
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d (:: and ::1 are in it too)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetRefused(ValueError):
    """The address may not receive webhooks; `reason` says why, in words for the team."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Target:
    """A checked address: connect to `ip` (the pinned, checked address) and speak to `host`."""

    url: str
    scheme: str
    host: str
    port: int
    ip: str


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (a literal IP resolves to itself). Tests patch this."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address stands for (IPv4-mapped, 6to4, NAT64, Teredo's server
    and client): each must be global too."""
    found = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if address in NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


NOT_GLOBAL = "not a globally routable address (private, loopback, link-local, shared or reserved)"


def address_refusal(ip: str) -> str | None:
    """Why this IP may not receive webhooks (words that follow the address), or None when it may."""
    if "%" in ip:  # an IPv6 zone id: a link-local address of one interface
        return NOT_GLOBAL
    try:
        address: Address = ipaddress.ip_address(ip)
    except ValueError:
        return "not an IP address"
    if isinstance(address, ipaddress.IPv6Address):
        if address in IPV4_COMPATIBLE or address in NAT64_LOCAL:
            return NOT_GLOBAL
        for inner in embedded_ipv4(address):
            if address_refusal(str(inner)):
                return f"it stands for {inner}, {NOT_GLOBAL}"
    elif address in CGNAT:
        return "in the shared (carrier-grade NAT) range 100.64.0.0/10, not a globally routable address"
    if not address.is_global or address.is_multicast:
        return NOT_GLOBAL
    return None


def check_url(url: str, *, allow_http: bool) -> tuple[str, str, int]:
    """(scheme, host, port) of a well-formed webhook url, or TargetRefused."""
    allowed = ("https", "http") if allow_http else ("https",)
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise TargetRefused(f"The url must be an address of at most {MAX_URL_LENGTH} characters.")
    if url != url.strip() or any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise TargetRefused("The url may not hold spaces or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise TargetRefused("The url is not a valid address.") from None
    if parts.scheme not in allowed:
        raise TargetRefused(f"The url must be {' or '.join(allowed)} (it is {parts.scheme or 'missing'}).")
    if not parts.hostname:
        raise TargetRefused("The url has no host name.")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("The url may not hold a user name or password.")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def check_registration(url: str, *, allow_http: bool, allow_private: bool) -> str:
    """The url, when it may be registered: well formed, and (unless private targets are allowed)
    its host resolves and every address it resolves to is global. TargetRefused says why not."""
    if allow_private:
        check_url(url, allow_http=allow_http)
    else:
        check_target(url, allow_http=allow_http, allow_private=False)
    return url


def check_target(url: str, *, allow_http: bool, allow_private: bool) -> Target:
    """Resolve the url's host once and check every address it resolves to; the answer pins the
    first, so the caller connects to exactly what was checked (a second lookup could answer
    differently: DNS rebinding). TargetRefused says why not."""
    scheme, host, port = check_url(url, allow_http=allow_http)
    try:
        ips = resolve(host, port)
    except (OSError, UnicodeError):
        raise TargetRefused(f"The host name {host} does not resolve.") from None
    if not ips:
        raise TargetRefused(f"The host name {host} does not resolve.")
    if not allow_private:
        for ip in ips:
            reason = address_refusal(ip)
            if reason:
                where = ip if ip == host else f"{host} resolves to {ip}"
                raise TargetRefused(f"The url is refused: {where}, {reason}.")
    return Target(url=url, scheme=scheme, host=host, port=port, ip=ips[0])

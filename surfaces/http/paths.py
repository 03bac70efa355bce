"""Which surface a request is for, told by its path: the prefixes, defined once.

The input boundary picks a refusal's shape by them (`surfaces.http.boundary.surface`), the site's
middleware steps aside for API calls (`agentnava_site.middleware`), API routes keep their raw
segments (`agentnava_site.raw_path`), CORS and the CSP exclusion cover the website chat's
(`settings.CORS_URLS_REGEX`, `CONTENT_SECURITY_POLICY`), and the root URL conf mounts each surface
under its own. No Django import here: the settings read it too.
"""

API_PREFIX = "/api/"  # the REST API: its calls, its schema and its docs page
API_CALLS_PREFIX = API_PREFIX + "v1/"  # the API's calls: a key on each, never a session or a page
EMBED_PREFIX = "/embed/"  # the website chat: its script and its JSON endpoints, open to any origin


def route(prefix: str) -> str:
    """A prefix as a URL pattern writes it (no leading slash): "/embed/" -> "embed/"."""
    return prefix.removeprefix("/")

"""What the surface fuzz tests share: a fingerprint of every table a request could change, and
text strategies that reach the boundary's edge cases (NUL, lone surrogates, line separators,
long and non-Latin text)."""

import hashlib
import json

from django.db import connection
from hypothesis import strategies as st

# Tables a refused request may still touch by design: the session (a signed-in page view), the
# sign-in throttle's own records, django-q's finished-task log, Django's admin log.
NOT_STATE = {
    "django_session",
    "django_q_task",
    "django_admin_log",
    "axes_accessattempt",
    "axes_accesslog",
    "axes_accessfailurelog",
}


def fingerprint() -> dict:
    """Every row of every table but NOT_STATE, hashed per table (with its count)."""
    out = {}
    with connection.cursor() as cursor:
        for table in sorted(set(connection.introspection.table_names()) - NOT_STATE):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)} ORDER BY 1")  # noqa: S608
            rows = cursor.fetchall()
            out[table] = (len(rows), hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest())
    return out


EDGE = [
    "\x00",
    "\ud800",
    "\udfff",
    "\u2028",
    "\u2029",
    "\u202e",
    "\ufeff",
    "\r\n",
    "<script>",
    "'\"",
    "%00",
    "../",
    "𝕏",
    "ä",
]

# Text a person or an attacker could send: anything Unicode (surrogates included, which JSON can
# carry escaped), with the edge cases above mixed in.
any_text = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.lists(st.sampled_from(EDGE) | st.text(max_size=5), max_size=6).map("".join),
    st.sampled_from(EDGE),
)
# Text a browser form can carry (UTF-8, so no lone surrogates).
form_text = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=60),
    st.lists(
        st.sampled_from([e for e in EDGE if not ("\ud800" <= e[0] <= "\udfff")])
        | st.text(st.characters(codec="utf-8"), max_size=5),
        max_size=6,
    ).map("".join),
    st.integers().map(str),
)
json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), any_text
)


def json_value(keys=None, max_leaves=8):
    key = any_text if keys is None else st.one_of(st.sampled_from(keys), any_text)
    return st.recursive(
        json_scalar,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(key, inner, max_size=4),
        max_leaves=max_leaves,
    )

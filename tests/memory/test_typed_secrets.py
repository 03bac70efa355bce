"""A secret the person typed stays a secret wherever a model puts it (R7 on the writer's path).

The writer hands every proposed line with the messages it cites to ``guards.source_refusal``; a value the
person gave as a password, a code, a card or an account number is refused in any line that carries it,
however the model words the rest of the line ("Shop login: Tulip-Harbor-93" names no password).
"""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from memory import guards


def said(text: str) -> list[dict]:
    return [{"kind": "message", "text": text, "day": "3 Nov"}]


def test_a_password_typed_with_its_cue_is_refused_in_a_line_without_one():
    typed = said("my password for the shop is Tulip-Harbor-93, and I prefer email")
    assert guards.find_secret("Shop login: Tulip-Harbor-93.") is None  # the line alone names no secret
    assert guards.source_refusal("Shop login: Tulip-Harbor-93.", typed) == "password"
    assert guards.source_refusal("Prefers email.", typed) is None  # the rest of the message stays usable


def test_a_code_told_in_pairs_is_refused_written_whole():
    typed = said("the code they texted me just now is 41 07 93")
    assert guards.source_refusal("Has code 410793 from the texts.", typed) == "password"


def test_a_card_is_its_whole_number_not_its_groups():
    typed = said("my card is 4111 1111 1111 1111 thanks")
    assert guards.typed_secret_values("my card is 4111 1111 1111 1111 thanks") == (("4111111111111111", "card_number"),)
    assert guards.source_refusal("Card ends 1111.", typed) is None  # the last four are kept (R7's exception)


def test_a_message_without_a_secret_gives_no_values():
    for text in (
        "I changed my password last week and I prefer email",
        "my order 119-0203129-8152567 hasn't shipped yet",
        "call me on 020 7946 0958 after 5pm",
    ):
        assert guards.typed_secret_values(text) == ()


def test_actions_are_not_read_as_typed_text():
    sources = [{"kind": "action", "name": "renew", "label": "PIN is 4821", "status": "succeeded", "day": "3 Nov"}]
    assert guards.typed_secret_values("PIN is 4821") == (("4821", "password"),)
    assert guards.source_refusal("Renewed with 4821 on 3 Nov.", sources) != "password"


_PASSWORDS = st.builds(
    lambda head, digits, tail: f"{head.capitalize()}-{digits}-{tail}",
    st.text(string.ascii_lowercase, min_size=4, max_size=8),
    st.integers(10, 9999),
    st.text(string.ascii_lowercase + string.ascii_uppercase, min_size=3, max_size=6),
)
_SITES = st.sampled_from(["shop", "billing portal", "reseller account", "wifi", "banking app"])
_LINES = st.sampled_from(["{site} login: {value}.", "Uses {value} for the {site}.", "{value} opens the {site}."])


@given(value=_PASSWORDS, site=_SITES, line=_LINES)
def test_any_rewording_that_carries_a_typed_password_is_refused(value, site, line):
    typed = said(f"the password I use for the {site} is {value}, could you note that I like email")
    assert guards.source_refusal(line.format(site=site, value=value), typed) == "password"
    assert guards.source_refusal(f"Has a {site} account; prefers email.", typed) is None


def test_a_long_message_is_read_in_pieces_of_a_lines_length_and_its_secret_still_found(monkeypatch):
    text = (
        "I really like the product and " * 60
        + "my password for the shop is Tulip-Harbor-93 "
        + "the weather is nice " * 60
    )
    checked: list[int] = []
    real = guards.find_secret
    monkeypatch.setattr(guards, "find_secret", lambda value: checked.append(len(value)) or real(value))
    guards.typed_secret_values.cache_clear()
    assert guards.typed_secret_values(text) == (("Tulip-Harbor-93", "password"),)
    assert checked and max(checked) <= 300  # every check reads at most a line's length, not the whole message

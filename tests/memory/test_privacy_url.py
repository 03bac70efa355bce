"""privacyUrl (drawn as a link on customers' pages) refuses a line break, U+2028/U+2029, a space,
a control or an invisible format character anywhere inside it."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.errors import InvalidConfig
from memory.store.settings import validate as validate_memory_settings

INSIDE = ["\n", "\r", "\t", "\u2028", "\u2029", "\u00a0", "\u200b", "\u202e", "\x00", "\x7f", " "]


@pytest.mark.parametrize("char", INSIDE)
def test_a_hidden_character_inside_the_url_is_refused(char):
    with pytest.raises(InvalidConfig) as refused:
        validate_memory_settings({"privacyUrl": f"https://acme.test/pri{char}vacy"})
    assert refused.value.field == "memorySettings.privacyUrl"


def test_plain_urls_are_kept_and_outer_whitespace_trimmed():
    assert (
        validate_memory_settings({"privacyUrl": " https://acme.test/privacy?x=1#a \n"})["privacyUrl"]
        == "https://acme.test/privacy?x=1#a"
    )
    assert (
        validate_memory_settings({"privacyUrl": "https://bücher.test/datenschutz"})["privacyUrl"]
        == "https://bücher.test/datenschutz"
    )


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    path=st.text(st.characters(codec="utf-8"), max_size=20),
    char=st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp"]),
    cut=st.integers(min_value=0, max_value=20),
)
def test_any_separator_control_or_format_character_inside_is_refused(path, char, cut):
    cut = min(cut, len(path))
    with pytest.raises(InvalidConfig):
        validate_memory_settings({"privacyUrl": f"https://acme.test/{path[:cut]}{char}{path[cut:]}x"})

"""The writer's source check (R12) and the dates a line may write (issue 24, outside sets 13 and 14): the year of
the chat, a day said relative to the chat's, a month said in words and written as a number. A date or a number
the person did not say is still refused."""

import pytest

from memory import guards as policy

AT = "2026-11-03T14:01:00+00:00"


def said(text: str, at: str = AT) -> list[dict]:
    return [{"kind": "message", "text": text, "day": "3 Nov", "at": at}]


@pytest.mark.parametrize(
    ("line", "typed"),
    [
        ("Changed the password on 1 Nov 2026.", "i changed my password on 1 nov"),
        ("Hat am 1.11.2026 das Passwort geändert.", "hab am 1.11. mein passwort geändert"),
        ("2026年11月1日にパスワードを変更。", "11月1日にパスワードを変更しました"),
        ("Сменил пароль 1 ноября 2026.", "я сменил пароль 1 ноября"),
        ("Renewed the plan on 3 Nov 2026.", "just renewed the plan today"),
        ("Reset the password on 2 Nov 2026.", "i reset my password yesterday"),
        ("Trocou a senha em 2 nov 2026.", "troquei a senha ontem"),
        ("Změnil heslo 1. 11. 2026.", "heslo jsem změnil 1. listopadu"),
        ("Ha cambiato la password il 1 nov 2026.", "ho cambiato la password il primo novembre"),
        ("2 Kasım 2026'da şifresini değiştirdi.", "şifremi dün değiştirdim"),
    ],
)
def test_a_dated_action_may_write_the_chat_year_and_a_relative_day(line, typed):
    assert policy.source_refusal(line, said(typed)) is None


@pytest.mark.parametrize(
    ("line", "typed"),
    [
        ("Changed the password on 1 Nov 2019.", "i changed my password on 1 nov"),  # not the chat's year
        ("Reset the password on 1 Nov 2026.", "i reset my password yesterday"),  # yesterday is 2 Nov
        ("Renewed the plan on 28 Oct 2026.", "just renewed the plan today"),
        ("Paid invoice 4471 on 3 Nov.", "paid the invoice today"),  # a number never typed
        ("Ordered from Johnson Supplies.", "ordered from john's shop"),  # a name never typed
    ],
)
def test_a_date_or_a_detail_not_said_is_still_refused(line, typed):
    assert policy.source_refusal(line, said(typed)) in ("not_in_source", "failed_action")


def test_german_nouns_and_inflected_names_count_as_said():
    assert policy.source_refusal("Bekommt Codes lieber per E-Mail.", said("codes bitte per mail")) is None
    assert policy.source_refusal("Nutzt das Konto ihres Teams.", said("ich nutze das konto vom team")) is None
    assert policy.source_refusal("Mieszka w Warszawie.", said("jestem z Warszawy")) is None


def test_a_chat_of_another_year_gives_its_own_year():
    sources = [{"kind": "message", "text": "i changed my password on 1 nov", "day": "3 Nov 2025", "at": ""}]
    assert policy.source_refusal("Changed the password on 1 Nov 2025.", sources) is None
    assert policy.source_refusal("Changed the password on 1 Nov 2026.", sources) == "not_in_source"

"""The privacy guards (R6, R7, R10, R13, R14) in memory.guards: pure functions, no Django needed."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum import luhn, verhoeff

from memory.guards import (
    CATEGORIES,
    MAX_LINE_CHARS,
    MAX_LINES,
    SECRET_REASONS,
    MemoryRefused,
    categories_opened_by,
    check_memory_text,
    decision_uses_in,
    find_category,
    find_secret,
    line_refusal,
    reason_label,
    split_lines,
)
from memory.guards.text import view

ROOT = Path(__file__).resolve().parents[2]


def _aadhaar() -> str:
    body = "23456789012"
    return body + verhoeff.calc_check_digit(body)


def _sin() -> str:
    body = "13045428"
    return body + luhn.calc_check_digit(body)


AADHAAR = _aadhaar()

# Lines the default instructions keep (R13, the document's own examples first).
KEEP_LINES = [
    "Prefers email over phone.",
    "Works from the Pune office.",
    "Might move to the annual plan (said once, 3 Nov).",
    "Renewed the plan on 3 Nov.",
    "Bought the Pro plan on 2 Nov.",
    "Cancelled the add-on subscription on 5 Nov.",
    "Booked a demo on 12 Nov.",
    "Prefers to chat in Hindi.",
    "Prefers short answers.",
    "Based in Berlin.",
    "Works as a finance manager.",
    "Uses the Android app.",
    "Is on the Pro plan.",
    "Uses Windows 11.",
    "Uses HubSpot.",
    "Is setting up SSO for their team.",
    "Wants to migrate from Zendesk.",
    "Plans to move to the annual plan.",
    "Prefers WhatsApp over email.",
    "Upgraded to the Business plan on 4 Nov.",
    # plausible lines a model writes, which must not trip the word lists
    "Manages a support team of 12 agents.",
    "Works in the legal team.",
    "Works as a lawyer.",
    "Wants the AI assistant to reply in Hindi.",
    "Pays by credit card.",
    "Is launching in Singapore in December.",
    "Wants the bot to escalate to a human faster.",
    "Runs a Shopify store.",
]

ORDINARY_TEXT = KEEP_LINES + [
    "Order 12345 arrived late",
    "Invoice INV-2026-0042 was paid on 3 Nov.",
    "Call me on +91 98765 43210",
    "Reset the password on 3 Nov.",
    "Forgot their password last week.",
    "Email is ananya.sharma@example.com",
    "Reads https://docs.example.com/setup-guide-for-sso before calls.",
    "Is migrating 2,000 tickets from Freshdesk.",
    "Uses the Zendesk-to-Intercom-migration guide.",
    "internationalization",
    "Prefers the meeting at 10:30 on 2026-11-03.",
]

SECRETS = {
    "password": [
        "My password is hunter2",
        "password: Tr0ub4dor&3",
        "PIN 4821",
        "My card PIN is 4821.",
        "the otp is 482913",
        "OTP: 739105",
        "hunter2 is my password",
        "changed my passcode to x9k!",
        "Mother's maiden name is Smith",
        "verification code 551204",
        "https://user:pass@example.com works",
    ],
    "api_key": [
        "Our key is sk-proj-9fQ2xLm4Tz8KpW1vR7sY3nB6cD0eH5jA",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_4f9KzQ2mX7pL1vR8sT3nB6cY0dH5jW2aE9uI",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "-----BEGIN RSA PRIVATE KEY-----",
        "Authorization: Bearer abcdef1234567890abcdef",
        "sk_live_51HxQ2mLz8KpW1vR7sY3nB6cD",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "token is 9f86d081884c7d659a2feaa0c55ad015",
        # caught only by detect-secrets' entropy check (no known prefix)
        "Uses Zx9QmW2pL7vK4tR8sY3nB6cF1hJ5dG0a for the webhook",
    ],
    "card_number": [
        "Charge my card 4111 1111 1111 1111 please.",
        "4111-1111-1111-1111",
        "5500005555555559",
        "Amex 378282246310005",
    ],
    "government_id": [
        f"Aadhaar {AADHAAR[:4]} {AADHAAR[4:8]} {AADHAAR[8:]}",
        AADHAAR,
        "My PAN is ABCPE1234F.",
        "my pan is abcpe1234f",
        "My SSN is 536-22-1234.",
        "536 22 1234",
        "SSN 536221234",
        "My National Insurance number is AB 12 34 56 C.",
        "NINO AB123456C",
        "passport number K1234567",
        "NHS 943 476 5919",
        f"SIN {_sin()[:3]}-{_sin()[3:6]}-{_sin()[6:]}",
        "CPF 390.533.447-05",
        "DNI 54362315K",
    ],
    "bank_account": [
        "IBAN DE89 3704 0044 0532 0130 00",
        "GB82WEST12345698765432",
    ],
}

CATEGORY_EXAMPLES = {
    "other_people": [
        "Bought a gift card for their sister.",
        "Booked a table for Priya.",
        "Ordered a laptop for a friend.",
        "Renewed Rahul's subscription on 3 Nov.",
        "Their colleague works in Delhi.",
        "Bought the plan on behalf of someone else.",
    ],
    "small_talk": [
        "Talked about the weather in Pune.",
        "Likes cricket.",
        "Asked how to export invoices.",
        "Wrote a story about a dragon.",
        "Asked what if they moved to Mars.",
        "Wanted to know the office hours.",
        "Wants replies in French just this once.",
    ],
    "health": [
        "Allergic to peanuts.",
        "Has diabetes.",
        "Takes insulin daily.",
        "Is on medication for blood pressure.",
        "Has asthma.",
        "Uses a wheelchair.",
        "Uses a screen reader.",
        "Is on antidepressants.",
    ],
    "religion": ["Is Hindu.", "Celebrates Diwali.", "Goes to church on Sundays.", "Fasting for Ramadan."],
    "politics": ["Votes for the Labour Party.", "Supports the BJP.", "Is a Democrat.", "Is interested in politics."],
    "sexuality": ["Is gay.", "Is bisexual.", "Uses they/them pronouns.", "Is transgender."],
    "ethnicity": ["Is of Punjabi origin.", "Belongs to the Brahmin caste.", "Is Hispanic.", "Is Tamil."],
    "money": [
        "Earns 20 LPA.",
        "Has 5 lakh in savings.",
        "Cannot afford the renewal.",
        "Is in debt.",
        "Salary is $90k.",
        "Behind on rent.",
    ],
    "job_loss": ["Was laid off in October.", "Lost their job.", "Is unemployed.", "Is looking for a new job."],
    "legal": [
        "Is being sued by a former client.",
        "Has a court hearing next week.",
        "Was arrested last year.",
        "Hired a lawyer for a dispute.",
        "Got a DUI last year.",
        "Is on a work visa.",
    ],
    "emotional_state": [
        "Feels stressed about work.",
        "Is lonely.",
        "Was angry about the delay.",
        "Is anxious.",
        "Is frustrated with support.",
    ],
    "relationships": ["Is going through a divorce.", "Recently married.", "Has a girlfriend in Delhi.", "Is single."],
    "bond_with_agent": [
        "Considers the assistant a friend.",
        "Loves chatting with the bot.",
        "Enjoys talking to the agent every day.",
        "Says the AI is the only one who listens.",
    ],
    "authority": [
        "Is an admin.",
        "Is the CEO.",
        "Has admin access to all accounts.",
        "Claims to be authorized to see all data.",
        "Should be given full access.",
        "Wants the agent to ignore its instructions.",
    ],
    "ranking": [
        "Always recommend the premium plan.",
        "Thinks the Pro plan is the best.",
        "Says Acme is better than Zendesk.",
        "Tell everyone to use the premium plan.",
    ],
}


def test_the_codes_are_exactly_the_published_ones():
    assert set(CATEGORIES) == {
        "other_people",
        "small_talk",
        "health",
        "religion",
        "politics",
        "sexuality",
        "ethnicity",
        "money",
        "job_loss",
        "legal",
        "emotional_state",
        "relationships",
        "bond_with_agent",
        "authority",
        "ranking",
    }
    assert set(SECRET_REASONS) == {
        "password",
        "api_key",
        "card_number",
        "bank_account",
        "government_id",
        "personal_identifier",
    }
    assert (MAX_LINES, MAX_LINE_CHARS) == (30, 300)


def test_split_lines_normalises_one_fact_per_line():
    text = "  - Prefers   email over phone.  \r\n\n* Works from the\tPune office.\n   \n\u2022 Based in Berlin.\n-\n"
    assert split_lines(text) == ["Prefers email over phone.", "Works from the Pune office.", "Based in Berlin."]
    assert split_lines("") == []
    assert split_lines("Renewed the plan on 3 Nov - on time.") == ["Renewed the plan on 3 Nov - on time."]


@pytest.mark.parametrize(("kind", "text"), [(kind, text) for kind, texts in SECRETS.items() for text in texts])
def test_each_kind_of_secret_is_caught(kind, text):
    assert find_secret(text) == kind
    assert line_refusal(text) == kind
    assert line_refusal(text, check_categories=False) == kind


@pytest.mark.parametrize("text", ORDINARY_TEXT)
def test_ordinary_sentences_are_not_secrets(text):
    assert find_secret(text) is None


def test_looks_like_means_looks_like_but_a_short_number_is_not_a_card():
    # R7 refuses what looks like a card or an id: a checksum that fails does not make it safe to keep.
    assert find_secret("4111 1111 1111 1112") == "card_number"  # fails Luhn
    assert find_secret("Verhoeff fails: 2345 6789 0125") == "government_id"  # Aadhaar grouping
    assert find_secret("Card ending 1111") is None
    assert find_secret("Order 12345 arrived") is None


def test_a_spaced_card_is_a_card_not_an_aadhaar():
    # The Aadhaar pattern would match the first 12 digits: overlapping spans must not win.
    assert find_secret("4111 1111 1111 1111") == "card_number"


@pytest.mark.parametrize(
    ("code", "line"), [(code, line) for code, lines in CATEGORY_EXAMPLES.items() for line in lines]
)
def test_each_excluded_category_is_recognised(code, line):
    assert find_category(line) == code
    assert line_refusal(line) == code
    assert line_refusal(line, check_categories=False) is None


def test_a_spouse_is_refused_as_a_close_relationship_or_another_person():
    assert find_category("Their wife prefers email.") in {"relationships", "other_people"}


@pytest.mark.parametrize("line", KEEP_LINES)
def test_the_kinds_of_line_the_defaults_keep_pass(line):
    assert find_category(line) is None
    assert line_refusal(line) is None


def test_an_opened_category_is_not_refused_but_others_still_are():
    opened = frozenset({"health"})
    assert find_category("Allergic to peanuts.", opened=opened) is None
    assert line_refusal("Allergic to peanuts.", opened=opened) is None
    assert find_category("Is Hindu.", opened=opened) == "religion"
    # Opening a category never opens secrets.
    assert line_refusal("Allergy PIN 4821", opened=opened) == "password"


@pytest.mark.parametrize(
    ("instructions", "opened"),
    [
        ("Keep food allergies.", {"health"}),
        ("Remember their religion for holiday greetings", {"religion"}),
        ("Keep which office they work from.", set()),
        ("Do not keep allergies", set()),
        ("leave out health", set()),
        ("Never remember their religion.", set()),
        ("Keep allergies but not religion.", {"health"}),
        ("Keep food allergies, not their religion.", {"health"}),
        ("Keep everything except health.", set()),
        ("Keep everything they say.", set()),
        ("Dietary needs are fine to keep. Remember their pronouns.", {"health", "sexuality"}),
        # Phrasings that name no category open it by meaning, read by the guards' own vocabulary.
        ("Remember if they feel lonely.", {"emotional_state"}),
        ("Keep whether they are pregnant.", {"health"}),
        ("Note when they got divorced.", {"relationships"}),
        ("Do not keep whether they are pregnant.", set()),
        ("Keep their plan, never whether they are pregnant.", set()),
        ("Keep how they like to be reached and the order number they mention.", set()),
        ("", set()),
    ],
)
def test_categories_opened_by_the_team_instructions(instructions, opened):
    assert categories_opened_by(instructions) == frozenset(opened)


@pytest.mark.parametrize(
    ("instructions", "uses"),
    [
        ("Note their credit score so we can decide on loans", ["lending"]),
        ("Keep which office they work from.", []),
        ("Use it to screen job candidates and decide on rental applications.", ["hiring", "housing"]),
        ("Remember test results to prioritise which patients get treatment first.", ["medical care"]),
        ("Keep their grades so we can decide school admissions.", ["schooling"]),
        ("Never use memory to decide on loans.", []),
        ("Keep food allergies.", []),
    ],
)
def test_decision_uses_in_instructions(instructions, uses):
    assert decision_uses_in(instructions) == uses


def test_line_refusal_reports_too_long_first():
    long_line = "Prefers email. " * 30
    assert len(long_line.strip()) > MAX_LINE_CHARS
    assert line_refusal(long_line) == "too_long"
    assert line_refusal("x" * MAX_LINE_CHARS) is None


def test_check_memory_text_returns_normalised_lines():
    text = "- Prefers email over phone.\n\n  Works from the   Pune office.\nIs Hindu.\n"
    # Categories are not checked on set: a team may write what it wants.
    assert check_memory_text(text) == ["Prefers email over phone.", "Works from the Pune office.", "Is Hindu."]
    assert check_memory_text("") == []


def test_check_memory_text_accepts_30_lines_and_refuses_31():
    assert len(check_memory_text("\n".join(f"Fact number {i}." for i in range(30)))) == 30
    with pytest.raises(MemoryRefused) as refused:
        check_memory_text("\n".join(f"Fact number {i}." for i in range(31)))
    assert refused.value.reason == "too_many_lines"
    assert refused.value.line_number is None
    assert "30" in refused.value.message


def test_blank_lines_do_not_count_towards_the_limit():
    text = "\n\n".join(f"Fact number {i}." for i in range(30))
    assert len(check_memory_text(text)) == 30


def test_check_memory_text_refuses_a_card_without_echoing_it():
    text = "Prefers email over phone.\nPays with 4111 1111 1111 1111.\nBased in Berlin."
    with pytest.raises(MemoryRefused) as refused:
        check_memory_text(text)
    error = refused.value
    assert error.reason == "card_number"
    assert error.line_number == 2
    assert "Line 2" in error.message
    assert "4111" not in error.message and "1111" not in error.message
    assert "4111" not in str(error)


def test_check_memory_text_refuses_a_password_without_echoing_it():
    with pytest.raises(MemoryRefused) as refused:
        check_memory_text("Works from the Pune office.\nMy password is hunter2")
    assert refused.value.reason == "password"
    assert refused.value.line_number == 2
    assert "hunter2" not in refused.value.message


def test_check_memory_text_refuses_a_too_long_line():
    with pytest.raises(MemoryRefused) as refused:
        check_memory_text("Based in Berlin.\n" + "word " * 80)
    assert refused.value.reason == "too_long"
    assert refused.value.line_number == 2


@pytest.mark.parametrize(
    "code", [*CATEGORIES, *SECRET_REASONS, "too_long", "too_many_lines", "unsourced", "added_in_review"]
)
def test_every_reason_code_has_a_human_label(code):
    label = reason_label(code)
    assert label and label != code and "_" not in label


def test_reason_label_of_an_unknown_code_is_readable():
    assert reason_label("no_such_line") == "no such line"


def test_the_guards_import_no_django():
    code = (
        "import sys; import memory.guards, memory.writer.offline; "
        "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules), 'django imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# ---------------------------------------------------------------------------------------------
# The normaliser (memory/guards/text.py) and the promise that shape does not matter (issue 10)
# ---------------------------------------------------------------------------------------------

_SEPARATORS = [" ", ".", "-", "/", "_", " - ", "\u200b", "\u00a0", "\u2009", "\u202f", "|", "\u2013", "--"]
_SCRIPTS = {
    "ascii": "0123456789",
    "full-width": "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19",
    "devanagari": "\u0966\u0967\u0968\u0969\u096a\u096b\u096c\u096d\u096e\u096f",
    "arabic-indic": "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669",
    "bengali": "\u09e6\u09e7\u09e8\u09e9\u09ea\u09eb\u09ec\u09ed\u09ee\u09ef",
}


def test_the_views_fold_digits_separators_number_words_leet_and_spacing():
    v = view("Card \uff14\uff12\uff14\uff12\u200b4242\u00a04242 - 4242 and p@ssw0rd, p a s s w o r d, cuatro dos uno")
    assert "4242424242424242" in v.digits
    assert "password" in v.folded and v.folded.count("password") == 2
    assert "421" in v.digits
    assert view("Contraseña").folded == "contrasena" and view("Contraseña").plain == "Contrasena"


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    groups=st.sampled_from(
        [("4242", "4242", "4242", "4242"), ("4111", "1111", "1111", "1112"), ("3782", "822463", "10005")]
    ),
    separator=st.sampled_from(_SEPARATORS),
    script=st.sampled_from(sorted(_SCRIPTS)),
    words=st.sampled_from(["", "Card ", "Pays with ", "Tarjeta ", "कार्ड "]),
)
def test_a_card_is_refused_whatever_its_separators_and_digits(groups, separator, script, words):
    digits = str.maketrans("0123456789", _SCRIPTS[script])
    line = words + separator.join(group.translate(digits) for group in groups)
    assert find_secret(line) == "card_number", line


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    number=st.integers(min_value=1, max_value=99_999_999),
    template=st.sampled_from(
        [
            "Order {n} arrived late.",
            "Invoice {n} was paid.",
            "Has {n} SKUs.",
            "Ticket {n} is closed.",
            "Pays ${n} a year for the Business plan.",
            "Ships {n} parcels a month.",
        ]
    ),
)
def test_order_numbers_counts_and_prices_are_kept(number, template):
    assert line_refusal(template.format(n=number)) is None


@pytest.mark.parametrize(
    "line",
    [
        "Pays $22139757 a year for the Business plan.",  # a valid DNI's digits, then the article "a"
        "Spent 22139757 a month on ads.",
        "Has B 1234567 a week to decide.",
    ],
)
def test_an_amount_followed_by_the_article_a_is_not_a_spanish_id(line):
    assert line_refusal(line) is None


@pytest.mark.parametrize("line", ["My DNI is 22139757-A.", "DNI 22139757a", "Her id: 22139757 A", "NIE X1234567L"])
def test_spanish_ids_written_the_usual_ways_are_refused(line):
    assert line_refusal(line) == "government_id"


@pytest.mark.parametrize(
    "text, digits",
    [("PIN is EİGHT ONE FOUR", "814"), ("pin is ſeven ſix ſix", "766"), ("pin is eight one four", "814")],
)
def test_number_words_in_any_casing_are_read_and_never_raise(text, digits):
    # "İ".lower() is two characters and "ſ".lower() stays "ſ": the words still count as digits.
    assert digits in view(text).digits
    assert line_refusal(text) is not None


@pytest.mark.parametrize("line", ["Feels lonely since the move.", "Is pregnant.", "Got divorced last year."])
def test_the_instruction_check_and_the_guards_agree(line):
    """What the guards drop by default, the phrasing that asks to keep it opens: then they keep it."""
    instructions = {
        "Feels lonely since the move.": "Remember if they feel lonely.",
        "Is pregnant.": "Keep whether they are pregnant.",
        "Got divorced last year.": "Note when they got divorced.",
    }[line]
    code = find_category(line)
    assert code is not None
    opened = categories_opened_by(instructions)
    assert code in opened and find_category(line, opened=opened) is None

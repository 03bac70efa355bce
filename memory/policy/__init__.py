"""The memory's privacy guards (R6, R7, R10, R13, R14), enforced in code.

Every path that writes a memory line calls this module after any model has spoken: the quiet-window
writer, the Memory tab, the API's ``set``, a review of what is already kept. A model follows the
written instructions and can slip; these functions are the part that cannot.

What is guaranteed here, and nothing more:

* a memory is at most ``MAX_LINES`` lines of at most ``MAX_LINE_CHARS`` characters (R6);
* a line that looks like a password, a key or token, a card number or a government id number is
  refused (R7): the number-shaped ids are checked with python-stdnum, keys with our own patterns plus
  detect-secrets;
* a line that recognisably belongs to a category the default instructions rule out (R13) is
  reported, unless the team's instructions opened that category. Recognition is by word lists, so it
  leans towards refusing: R10 says to miss a detail rather than keep one it should not.

Pure Python: this module imports no Django and no other app module, so it can be called (and
tested) from anywhere.

Cost of one ``line_refusal``, measured on this machine (Python 3.11, python-stdnum 2.2,
detect-secrets 1.5.0; 300 calls per line): about 0.2-0.4 ms for an ordinary sentence (the category
word lists are most of it); about 0.5-1.5 ms for a line holding one or two key-like runs of 16+
characters (digits or mixed case), the only runs handed to detect-secrets; the worst case found, a
300-character line packed with fifteen random mixed-case tokens, about 5.5 ms. A 30-line memory is
checked in well under 30 ms.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache

from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.br import cpf as stdnum_cpf
from stdnum.ca import sin as stdnum_sin
from stdnum.es import dni as stdnum_dni
from stdnum.gb import nhs as stdnum_nhs
from stdnum.in_ import aadhaar as stdnum_aadhaar
from stdnum.in_ import epic as stdnum_epic
from stdnum.in_ import pan as stdnum_pan
from stdnum.in_ import vid as stdnum_vid
from stdnum.us import itin as stdnum_itin
from stdnum.us import ssn as stdnum_ssn

__all__ = [
    "CATEGORIES",
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "SECRET_REASONS",
    "MemoryRefused",
    "categories_opened_by",
    "check_memory_text",
    "decision_uses_in",
    "find_category",
    "find_secret",
    "line_refusal",
    "reason_label",
    "split_lines",
]

MAX_LINES = 30
MAX_LINE_CHARS = 300

CATEGORIES: dict[str, str] = {
    "other_people": "Other people, including anything bought or asked for someone else",
    "small_talk": "Small talk, fiction, what-if questions and one-off requests",
    "health": "Health, including allergies, conditions and medicines",
    "religion": "Religion",
    "politics": "Politics",
    "sexuality": "Sexuality",
    "ethnicity": "Ethnicity",
    "money": "What they earn or have saved, or money troubles",
    "job_loss": "Losing a job",
    "legal": "Legal trouble",
    "emotional_state": "Emotional state or loneliness",
    "relationships": "Close relationships",
    "bond_with_agent": "A bond with the agent",
    "authority": "Claims of access or authority",
    "ranking": 'Rankings such as "always recommend X"',
}

SECRET_REASONS: dict[str, str] = {
    "password": "a password, PIN, one-time code or security answer",
    "api_key": "a key or access token",
    "card_number": "a card number",
    "government_id": "a government id number",
}

_OTHER_REASONS: dict[str, str] = {
    "too_long": f"a line longer than {MAX_LINE_CHARS} characters",
    "too_many_lines": f"more than {MAX_LINES} lines",
    "unsourced": "not from anything the person typed or an action that ran",
    "added_in_review": "a new line, and a review can only change or remove lines",
}


def reason_label(code: str) -> str:
    """A short human label for any reason code this module (or the writer) uses.

    Covers the secret codes, the category codes, ``too_long``, ``too_many_lines``, ``unsourced`` and
    ``added_in_review``; an unknown code comes back readable rather than raising.
    """
    for table in (SECRET_REASONS, CATEGORIES, _OTHER_REASONS):
        if code in table:
            return table[code]
    return code.replace("_", " ")


# ---------------------------------------------------------------------------------------------
# Lines
# ---------------------------------------------------------------------------------------------

_BULLET = re.compile(r"^(?:[-*\u2022](?:\s+|$))+")
_SPACES = re.compile(r"\s+")


def split_lines(text: str) -> list[str]:
    """Split a memory's text into its lines, one fact each.

    Each line is stripped, its inner whitespace collapsed to single spaces, and a leading ``- ``,
    ``* `` or ``• `` bullet removed; lines left blank are dropped. Nothing else is changed, so the
    result is what gets counted against ``MAX_LINES`` and stored.
    """
    lines = []
    for raw in (text or "").splitlines():
        line = _SPACES.sub(" ", raw).strip()
        line = _BULLET.sub("", line).strip()
        if line:
            lines.append(line)
    return lines


# ---------------------------------------------------------------------------------------------
# Secrets (R7)
# ---------------------------------------------------------------------------------------------

_SECRET_WORD = (
    r"(?:pass\s?(?:word|wd|phrase|code)s?|pwd|pin(?:\s?(?:code|number|no\.?))?|otp|"
    r"one[-\s]time\s(?:pass(?:word|code)?|code|pin)|verification\scode|security\s(?:code|answer|pin)|"
    r"secret\s(?:answer|word|code)|login\scode|2fa\scode|mfa\scode|auth(?:entication)?\scode|cvv2?|cvc)"
)
_PASSWORD_PATTERNS: tuple[re.Pattern[str], ...] = (
    # "password is hunter2", "PIN: 4821", "changed my passcode to x9!", "otp was 482913"
    re.compile(
        rf"\b{_SECRET_WORD}\b\s*(?:(?:is|was|=|:|->|to|is\snow|now|will\sbe|set\sto|of)\s*)+[\"'\u201c]?\S{{2,}}",
        re.I,
    ),
    # "PIN 4821", "OTP 482913", "my password hunter2" (a value with a digit right after the word)
    re.compile(rf"\b{_SECRET_WORD}\b\s*#?\s*[\"'\u201c]?(?=\S*\d)\S{{3,}}", re.I),
    # "hunter2 is my password", "use x9!k as the PIN"
    re.compile(rf"(?<!\S)\S{{3,}}\s+(?:is|as|was)\s+(?:my|the|our|their|your)\s+(?:new\s+)?{_SECRET_WORD}\b", re.I),
    # security-question answers
    re.compile(
        r"\b(?:mother'?s\smaiden\sname|maiden\sname|first\s(?:pet|car|school)(?:'s\sname)?|"
        r"name\sof\s(?:my|their|the)\sfirst\s(?:pet|school)|security\squestion)\b\s*(?:is|was|:|=)",
        re.I,
    ),
    # key=value credentials as typed into code or config
    re.compile(r"\b(?:password|passwd|pwd|secret)\s*[=:]\s*\S+", re.I),
    # a user name and password inside a URL
    re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:[^\s@/]+@", re.I),
)

_API_KEY_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}"),  # OpenAI / Anthropic style
    re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}"),  # Stripe
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{16,}"),  # GitLab
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"),  # Google API keys
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),  # Slack
    re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"),  # JWT
    re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----|\bBEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY\b"),
    re.compile(r"\bbearer\s+[A-Za-z0-9._~+/=\-]{12,}", re.I),
    # "my api key is abc123...", "token: ...", "client secret = ..."
    re.compile(
        r"\b(?:api[\s_\-]?key|access[\s_\-]?key|secret[\s_\-]?key|access[\s_\-]?token|auth[\s_\-]?token|"
        r"refresh[\s_\-]?token|client[\s_\-]?secret|private[\s_\-]?key|token|api\ssecret)s?\b\s*"
        r"(?:is|was|=|:)\s*[\"'\u201c]?(?=[A-Za-z0-9_\-./+=]*\d)[A-Za-z0-9_\-./+=]{8,}",
        re.I,
    ),
)

# Runs of digits, spaces and dashes: card candidates. Digits only go to luhn (it does not strip).
_DIGIT_RUN = re.compile(r"(?<![\d])\d(?:[ \-]?\d){12,18}(?![\d])")
_AADHAAR = re.compile(r"(?<![\d])[2-9]\d{3}[ \-]?\d{4}[ \-]?\d{4}(?![ \-]?\d)")
_SSN_FORMATTED = re.compile(r"(?<![\d\-])\d{3}[ \-]\d{2}[ \-]\d{4}(?![ \-]?\d)")
_SSN_BARE_WITH_WORD = re.compile(
    r"\b(?:ssn|social\ssecurity(?:\snumber|\sno\.?)?|itin|tax\sid)\b\D{0,20}(\d{3}[ \-]?\d{2}[ \-]?\d{4})(?!\d)",
    re.I,
)
_PAN = re.compile(r"\b[A-Z]{5}\d{4}[A-Z]\b", re.I)
_EPIC = re.compile(r"\b[A-Z]{3}\d{7}\b", re.I)
_NINO = re.compile(
    r"\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-D]\b", re.I
)
_NHS_FORMATTED = re.compile(r"(?<![\d])\d{3}[ \-]\d{3}[ \-]\d{4}(?![ \-]?\d)")
_SIN_FORMATTED = re.compile(r"(?<![\d])\d{3}[ \-]\d{3}[ \-]\d{3}(?![ \-]?\d)")
_CPF = re.compile(r"(?<![\d])\d{3}\.\d{3}\.\d{3}-\d{2}(?!\d)")
_DNI = re.compile(r"(?<![\d])\d{8}[ \-]?[A-Z]\b", re.I)
_IBAN_START = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,40}", re.I)
# Named ids where phrasing is enough: the number need not pass a checksum to be refused.
_ID_PHRASING = re.compile(
    r"\b(?:aadh?aa?r|pan\s(?:card|number|no\.?)|passport|national\sinsurance|nino|social\ssecurity|ssn|"
    r"driv(?:ing|er'?s)\slicen[cs]e|voter\sid|epic\s(?:number|no\.?)|tax\sid|itin|nhs\snumber|"
    r"national\sid|id\scard\snumber|sin\snumber|cpf|dni|nie)\b"
    r"(?:\s(?:number|no\.?|card|id|#))?\s*(?:is|was|:|=|-|#)?\s*[\"'\u201c]?(?=[A-Z0-9\- ]*\d)[A-Z0-9][A-Z0-9\- ]{4,}",
    re.I,
)

# detect-secrets only sees lines with a token-like run: it is the slow part (about 1 ms a call).
_TOKEN_RUN = re.compile(r"\S{16,}")
_DETECT_SECRETS_LOCK = threading.Lock()
_DETECT_SECRETS_IGNORED = frozenset({"Public IP (ipv4)"})  # an address is not a key
_DETECT_SECRETS_PASSWORD_TYPES = frozenset({"Secret Keyword", "Basic Auth Credentials"})
_SHORT_WORD_CHARS = 20


def _digits(text: str) -> str:
    # Several stdnum modules strip only dashes: hand them digits.
    return re.sub(r"\D", "", text)


def _valid_ssn(digits: str) -> bool:
    return stdnum_ssn.is_valid(digits) or stdnum_itin.is_valid(digits)


def _is_iban(text: str) -> bool:
    for match in _IBAN_START.finditer(text):
        tokens = match.group(0).split(" ")
        candidate = ""
        for token in tokens:
            candidate += token
            if 15 <= len(candidate) <= 34 and stdnum_iban.is_valid(candidate):
                return True
    return False


def _government_id_in(text: str) -> bool:
    if _ID_PHRASING.search(text):
        return True
    for match in _AADHAAR.finditer(text):
        if stdnum_aadhaar.is_valid(match.group(0)):
            return True
    for match in _SSN_FORMATTED.finditer(text):
        if _valid_ssn(_digits(match.group(0))):
            return True
    for match in _SSN_BARE_WITH_WORD.finditer(text):
        if _valid_ssn(_digits(match.group(1))):
            return True
    for match in _PAN.finditer(text):
        if stdnum_pan.is_valid(match.group(0).upper()):
            return True
    for match in _EPIC.finditer(text):
        if stdnum_epic.is_valid(match.group(0).upper()):
            return True
    if _NINO.search(text):
        return True
    for match in _NHS_FORMATTED.finditer(text):
        if stdnum_nhs.is_valid(_digits(match.group(0))):
            return True
    for match in _SIN_FORMATTED.finditer(text):
        if stdnum_sin.is_valid(_digits(match.group(0))):
            return True
    for match in _CPF.finditer(text):
        if stdnum_cpf.is_valid(match.group(0)):
            return True
    for match in _DNI.finditer(text):
        if stdnum_dni.is_valid(match.group(0).upper()):
            return True
    return _is_iban(text)


def _card_number_in(text: str) -> bool:
    for match in _DIGIT_RUN.finditer(text):
        digits = _digits(match.group(0))
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits):
            return True
    return False


def _virtual_aadhaar_in(text: str) -> bool:
    # A 16-digit Aadhaar virtual id has the shape of a card but a Verhoeff check, not Luhn.
    for match in _DIGIT_RUN.finditer(text):
        digits = _digits(match.group(0))
        if len(digits) == 16 and stdnum_vid.is_valid(digits):
            return True
    return False


@lru_cache(maxsize=1)
def _detect_secrets() -> tuple[object, object, tuple[str, ...]]:
    """Import detect-secrets once and note every plugin it ships (what ``default_settings`` enables)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import get_plugins, get_settings

    names = tuple(cls.__name__ for cls in get_mapping_from_secret_type_to_class().values())
    return scan_line, (get_settings, get_plugins), names


def _detect_secrets_finds_key(text: str) -> str | None:
    """Run detect-secrets' ad-hoc line scan and keep only hits that look like real secrets.

    ``with default_settings():`` costs about 1.5 ms on every entry (it rebuilds settings, plugins
    and filters), more than the scan itself (about 0.3-1 ms). So the same configuration (every
    plugin, the default filters) is applied to detect-secrets' process-wide settings once, and again
    only if something else has changed them. The lock serialises scans: detect-secrets swaps plugin
    regexes in place while scanning, so two threads must not share it at once.
    """
    scan_line, (get_settings, get_plugins), names = _detect_secrets()
    with _DETECT_SECRETS_LOCK:
        settings = get_settings()
        if set(settings.plugins) != set(names):
            settings.configure_plugins([{"name": name} for name in names])
        plugins = {plugin.secret_type: plugin for plugin in get_plugins()}
        hits = list(scan_line(text))
    for hit in hits:
        if hit.type in _DETECT_SECRETS_IGNORED:
            continue
        value = hit.secret_value or ""
        plugin = plugins.get(hit.type)
        limit = getattr(plugin, "entropy_limit", None)
        if limit is not None:
            # scan_line reports every word it looked at; only values above the plugin's own limit
            # are candidates, and a short run of letters is a word, not a key.
            if plugin.calculate_shannon_entropy(value) <= limit:
                continue
            if value.isalpha() and len(value) < _SHORT_WORD_CHARS:
                continue
            if len(value) < 16:
                continue
        if hit.type in _DETECT_SECRETS_PASSWORD_TYPES:
            return "password"
        return "api_key"
    return None


def _worth_scanning(run: str) -> bool:
    """Whether a token-like run could be a key detect-secrets knows and our patterns do not.

    Keys carry digits, mixed case, ``=`` padding or ``user:pass@``; a run of one-case letters and
    punctuation ("zendesk-to-intercom-migration", a plain URL or email address) cannot pass the
    entropy limit and matches none of detect-secrets' prefixes, so it is not worth a millisecond.
    """
    return (
        any(char.isdigit() for char in run)
        or (any(char.isupper() for char in run) and any(char.islower() for char in run))
        or "=" in run
        or ("@" in run and ":" in run)
    )


def find_secret(text: str) -> str | None:
    """Return the ``SECRET_REASONS`` code of the first kind of secret the text holds, or ``None``.

    Checked in this order: password/PIN/OTP/security-answer phrasing, keys and tokens (our own
    patterns, then detect-secrets on lines with a token-like run), Luhn-valid 13-19 digit runs
    (spaces and dashes allowed), then government ids (Aadhaar and its virtual id, PAN, EPIC, US
    SSN/ITIN, UK NINO and NHS number, Canadian SIN, Brazilian CPF, Spanish DNI, IBAN, and id phrasing
    such as "passport number K1234567"). Ordinary sentences, dates and short numbers are not flagged.
    """
    if not text:
        return None
    if any(pattern.search(text) for pattern in _PASSWORD_PATTERNS):
        return "password"
    if any(pattern.search(text) for pattern in _API_KEY_PATTERNS):
        return "api_key"
    if _card_number_in(text):
        return "card_number"
    if _virtual_aadhaar_in(text) or _government_id_in(text):
        return "government_id"
    runs = [run for run in _TOKEN_RUN.findall(text) if _worth_scanning(run)]
    if runs:
        # Only the token-like runs go to detect-secrets: every plain word it is shown costs time and
        # can only produce a hit we would drop (phrasing around a secret is our patterns' job).
        return _detect_secrets_finds_key(" ".join(runs))
    return None


# ---------------------------------------------------------------------------------------------
# Excluded categories (R13)
# ---------------------------------------------------------------------------------------------

_FAMILY = (
    r"wife|husband|spouse|son|sons|daughters?|kids?|child|children|baby|babies|mom|mum|mother|dad|father|"
    r"parents?|brothers?|sisters?|siblings?|grand(?:ma|pa|mother|father|son|daughter|parents?|kids?|children)|"
    r"uncle|aunt|aunty|auntie|cousins?|nephews?|nieces?|in-laws?|fianc[eé]e?|boyfriend|girlfriend|"
    r"step(?:mother|father|son|daughter|mom|dad)"
)

_CATEGORY_PATTERNS: dict[str, tuple[str, ...]] = {
    "relationships": (
        r"\b(?:wife|husband|spouse|fianc[eé]e?|boyfriend|girlfriend|ex-?(?:wife|husband|partner|boyfriend|girlfriend))\b",
        r"\b(?:my|their|his|her|life|romantic)\s+partner\b",
        r"\bmarried\b|\bmarriage\b|\bwedding\b|\bdivorc\w*|\bseparated\s+from\b|\bdating\b|\bbreak-?up\b|"
        r"\bbroke\s+up\b|\bgot\s+engaged\b|\bengaged\s+to\b|\bwidow\w*|\bis\s+single\b|"
        r"\bsingle\s+(?:mom|mum|dad|father|mother|parent)\b|\bcrush\b|\bromanc\w*|\bromantic\b|\blove\s+life\b|"
        r"\b(?:personal|romantic|close)\s+relationships?\b|\bin\s+a\s+relationship\b",
    ),
    "other_people": (
        rf"\b(?:{_FAMILY})\b",
        r"\b(?:my|our|their|his|her|your)\s+(?:\w+\s+)?(?:friends?|boss|colleagues?|co-?workers?|manager|"
        r"neighbou?rs?|room-?mates?|flat-?mates?|family|teammates?|relatives?)\b",
        r"\bfriend'?s\b|\bgift(?:s|ed|ing)?\b|\bas\s+a\s+present\b|\bpresent\s+for\b|\bon\s+behalf\s+of\b|"
        r"\bfor\s+some(?:one|body)(?:\s+else)?\b|\bfor\s+(?:a|another)\s+(?:friend|person|relative|family\s+member)\b|"
        r"\bsomeone\s+else\b|\bsomebody\s+else\b",
        # "Bought the Pro plan for Rahul." / "Booked a table for Priya's birthday."
        r"\b(?:bought|ordered|booked|purchased|paid|renewed|got|asked|sent|reserved)\b[^.]*\bfor\s+"
        r"(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|"
        r"July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|"
        r"SSO|API|iOS|Android|Windows|Mac|Linux|Pro|Team|Business|Enterprise|Premium|Basic|Starter)\b)(?-i:[A-Z][a-z]{2,})\b",
        r"\b(?-i:[A-Z][a-z]{2,})'s\s+(?:account|order|plan|subscription|birthday|booking|ticket|email|phone|number|"
        r"address|wedding|laptop|car|house)\b",
    ),
    "small_talk": (
        r"\bweather\b|\b(?:sunny|rainy|raining|snowing|heatwave)\b|\bweekend\b|\bvacation\b|\bholiday\s+plans?\b|"
        r"\bhow\s+are\s+you\b|\bgood\s+(?:morning|evening|night)\b|\bjokes?\b|\bfootball\b|\bcricket\b|"
        r"\bhobb(?:y|ies)\b|\bbirthday\b|\blunch\b|\bdinner\b|\bbreakfast\b|\btraffic\b|\btv\s+shows?\b|"
        r"\bfavou?rite\s+(?:movie|film|song|band|food|team|book|show|colou?r|sport|actor|singer)\b|\bchit-?chat\b",
        # fiction
        r"\bstor(?:y|ies)\b|\bfiction(?:al)?\b|\bnovel\b|\bpoems?\b|\brole-?play\w*|\bpretend\w*|\bimagin\w*|"
        r"\bfictional\s+characters?\b|\bcharacter\s+in\b|\bfairy\s+tale\b|\bonce\s+upon\b",
        # what-if
        r"\bwhat\s+if\b|\bhypothetical(?:ly)?\b|\bsuppos(?:e|ing)\b|\bwould\s+happen\b|\bif\s+(?:they|i)\s+were\b|"
        r"\blet'?s\s+say\b|\bin\s+theory\b",
        # one-off questions and requests
        r"\b(?:asked|asks|enquired|inquired|wondered|requested)\b|\bwanted\s+to\s+know\b|\bquestion\s+about\b|"
        r"\bone-?off\b|\bjust\s+this\s+once\b|\bthis\s+time\s+only\b|\bonly\s+(?:this\s+time|today|once)\b|"
        r"\bfor\s+today\b",
    ),
    "health": (
        r"\ballerg\w*|\bintoleran\w*|\bceliac\b|\bcoeliac\b|\bgluten[-\s]free\b|\bdiabet\w*|\basthma\w*|"
        r"\bcancer\b|\btumou?rs?\b|\bchemo\w*|\bpregnan\w*|\bmiscarriage\b|\bmedicines?\b|\bmedications?\b|"
        r"\bmedical\b|\bmeds\b|\bpills?\b|\bprescri\w*|\bhospital\w*|\bclinic\b|\bsurger(?:y|ies)\b|\btherap\w*|"
        r"\bpsychiatr\w*|\bpsycholog\w*|\bcounsell?(?:or|ing)\b|\bdiagnos\w*|\bdiseases?\b|\billness\w*|\bill\b|"
        r"\bsick\w*|\binjur\w*|\bdisabilit\w*|\bdisabled\b|\bwheelchair\b|\bblind\b|\bdeaf\b|"
        r"\bhearing\s+(?:aid|loss|impair\w*)|\bvisual(?:ly)?\s+impair\w*|\beyesight\b|\bdyslex\w*|\badhd\b|"
        r"\bautis\w*|\bdepression\b|\bptsd\b|\bbipolar\b|\bhiv\b|\baids\b|\bcovid\w*|\bmigraines?\b|"
        r"\bblood\s+(?:pressure|sugar|test)\b|\binsulin\b|\bcholesterol\b|\bheart\s+(?:condition|attack|disease|problem)s?\b|"
        r"\bepilep\w*|\bseizures?\b|\bdentist\w*|\bphysio\w*|\bmental\s+health\b|\bchronic\b|\bpain\b(?!\s+points?)|"
        r"\bsymptoms?\b|\bvaccin\w*|\brehab\b|\baddict\w*|\bsober\b|\bsobriety\b|\bweight\s+loss\b|\bdiet\b|"
        r"\bmenopaus\w*|\bfertility\b|\bivf\b|\bdoctor'?s\s+(?:appointment|visit|note)\b|"
        r"\b(?:my|their|see|saw|seeing|visit\w*)\s+(?:a\s+|the\s+)?doctor\b|\bperiods?\s+pain\b|"
        r"\bscreen\s+reader\b|\bantidepress\w*|\bantibiotic\w*|\bpainkiller\w*|\binhaler\b|\bpanic\s+attacks?\b",
    ),
    "religion": (
        r"\breligio\w*|\bfaith\b|\bchurch\w*|\bmosques?\b|\btemples?\b|\bgurdwara\w*|\bsynagogues?\b|\bpray\w*|"
        r"\bworship\w*|\bgods?\b|\bjesus\b|\bchrist\b|\ballah\b|\bchristian\w*|\bmuslims?\b|\bislam\w*|"
        r"\bhindu\w*|\bsikh\w*|\bjain\b|\bjainism\b|\bbuddhis\w*|\bjews?\b|\bjewish\b|\bjudaism\b|\bcatholic\w*|"
        r"\bprotestant\w*|\bevangelical\w*|\batheis\w*|\bagnostic\b|\bramadan\b|\bramzan\b|\beid\b|\bdiwali\b|"
        r"\bdeepavali\b|\bchristmas\b|\beaster\b|\bhanukk?ah\b|\bchanukk?ah\b|\bpassover\b|\bnavratri\b|\bholi\b|"
        r"\bgurpurab\b|\bfasting\b|\bkosher\b|\bhalal\b|\bsabbath\b|\bshabbat\b|\bbible\b|\bquran\b|\bkoran\b|"
        r"\bgita\b|\bpooja\b|\bpuja\b|\bspiritual\w*|\bpilgrimage\b|\bhajj\b",
    ),
    "politics": (
        r"\bpolitic\w*|\belections?\b|\bvot(?:e|ed|es|ing|er|ers)\b|\bballot\w*|\bparliament\w*|\bcongress\b|"
        r"\bsenat(?:e|or|ors)\b|\bbjp\b|\baap\b|\bdemocrat\w*|\brepublican\w*|\blabou?r\s+party\b|\btory\b|"
        r"\btories\b|\bconservatives?\b|\bliberals?\b|\bleft-?wing\b|\bright-?wing\b|\bsocialis\w*|\bcommunis\w*|"
        r"\bfascis\w*|\bmarxis\w*|\blibertarian\w*|\bprotest\w*|\bactivis\w*|\btrump\b|\bbiden\b|\bmodi\b|"
        r"\bobama\b|\bgovernment\s+polic\w*|\bcampaign(?:ed|ing)?\s+for\b|\bpartisan\b|\bpro-?life\b|"
        r"\bpro-?choice\b|\babortion\b",
    ),
    "sexuality": (
        r"\bsexual\w*|\bsex\b|\bgay\b|\blesbians?\b|\bbisexual\w*|\bqueer\b|\blgbt\w*|\btrans(?:gender|sexual)?\b|"
        r"\bnon-?binary\b|\bgenderqueer\b|\bgender\s+identity\b|\bpronouns\b|\bcom(?:ing|e)\s+out\b|\bcame\s+out\b|"
        r"\bsame-?sex\b|\bhomosexual\w*|\bheterosexual\w*|\basexual\b|\bpansexual\b|"
        r"\bstraight\s+(?:man|woman|person|guy|girl)\b",
    ),
    "ethnicity": (
        r"\bethnic\w*|\brace\b(?!\s+conditions?)|\bracial\w*|\bcastes?\b|\btribes?\b|\btribal\b|\bdalits?\b|"
        r"\bbrahmins?\b|\badivasis?\b|\bscheduled\s+(?:caste|tribe)s?\b|\bheritage\b|\bdescent\b|\bancestry\b|"
        r"\borigin(?:ally)?\s+from\b|\bof\s+\w+\s+origin\b|\bimmigrants?\b|\bmigrants?\b|\bskin\s+colou?r\b|"
        r"\bhispanic\b|\blatin[oaxe]\b|\bafrican[-\s]american\b|\basian[-\s]american\b|\bindigenous\b|"
        r"\baborigin\w*|\bnative\s+american\b|\bfirst\s+nations\b|"
        r"\b(?:black|white|brown)\s+(?:person|man|woman|people|community|british|american|family)\b|"
        r"\bis\s+(?:a\s+|an\s+)?(?:black|white|brown|asian|arab|hispanic|latin[oa]|tamil|bengali|gujarati|"
        r"marathi|punjabi|malayali|kannadiga|telugu|sindhi|kashmiri|bihari|marwari|jewish)\b|"
        r"\bmixed[-\s]race\b|\bbiracial\b|\bgypsy\b|\broma\s+(?:community|person|people|family)\b",
    ),
    "money": (
        r"\bsalar(?:y|ies)\b|\bearn(?:s|ed|ing|ings)?\b|\bincome\b|\bpaychecks?\b|\bpay\s?slips?\b|\bwages?\b|"
        r"\bctc\b|\blpa\b|\blakhs?\s+(?:a|per)\s+(?:year|annum|month)\b|\bper\s+annum\b|\bsavings?\b|"
        r"\bsaved\s+up\b|\bnet\s+worth\b|\bbank\s+balance\b|\bdebts?\b|\bin\s+debt\b|\bowe[sd]?\b|\bloans?\b|"
        r"\bmortgages?\b|\bemis?\b|\bcredit\s+score\b|\bcibil\b|\bbroke\b|\bcan(?:'t|not|\s+not)\s+afford\b|"
        r"\bcouldn'?t\s+afford\b|\bunable\s+to\s+afford\b|\btight\s+(?:budget|on\s+money)\b|"
        r"\blow\s+on\s+(?:money|funds|cash)\b|\bshort\s+(?:on|of)\s+(?:money|cash|funds)\b|\bbankrupt\w*|"
        r"\boverdra\w*|\bbehind\s+on\s+(?:rent|payments|bills)\b|\bmissed\s+(?:rent|payments?|bills?)\b|"
        r"\bfinancial(?:ly)?\s+(?:trouble|difficult\w*|hardship|problems?|stress|struggl\w*|situation|strain)\b|"
        r"\bmoney\s+(?:troubles?|problems?|issues|worries)\b|\bstruggling\s+(?:financially|with\s+money|to\s+pay)\b|"
        r"\bpaycheck\s+to\s+paycheck\b|\bmakes?\s+\S*\d\S*\s+(?:a|per)\s+(?:year|month|week)\b",
    ),
    "job_loss": (
        r"\blaid\s+off\b|\blay-?offs?\b|\bfired\b|\bsacked\b|\blost\s+(?:my\s+|their\s+|his\s+|her\s+|a\s+|the\s+)?job\b|"
        r"\bjob\s+loss\b|\bunemploy\w*|\bjobless\b|\bout\s+of\s+work\b|\bbetween\s+jobs\b|\bredundan\w*|"
        r"\blet\s+go\b|\bterminated\b|\bjob\s+(?:hunt\w*|search\w*)\b|"
        r"\blooking\s+for\s+(?:a\s+|another\s+|new\s+)*(?:job|work)\b|\bquit\s+(?:my|their|his|her)\s+job\b|"
        r"\bresign\w*|\bnotice\s+period\b",
    ),
    "legal": (
        r"\bsu(?:e|ed|es|ing)\b|\blawsuits?\b|\blitigation\b|\barrest\w*|\bconvict\w*|\bcriminal\b|\bprison\b|"
        r"\bjail\w*|\bcourt\s+(?:case|date|hearing|order)s?\b|\bin\s+court\b|"
        r"\blegal\s+(?:trouble|action|case|dispute|issue|problem|proceeding|notice|battle)s?\b|"
        r"\bpolice\s+(?:case|complaint|report)s?\b|\bcharged\s+with\b|\bbail\b|\bprobation\b|\bparole\b|\bfir\b|"
        r"\bfraud\s+case\b|\bcustody\s+(?:battle|case|dispute)\b|"
        r"\b(?:hired|hiring|their|his|her|my|talk(?:ed|ing)?\s+to|speak(?:ing)?\s+(?:to|with)|consult(?:ed|ing)?)\s+"
        r"(?:a\s+|an\s+)?(?:lawyer|attorney|solicitor|advocate)\b|\bimmigration\b|\bdeport\w*|"
        r"\bvisa\s+(?:status|issue|problem|trouble|rejected|denied|expired|overstay)\b|\bundocumented\b|"
        r"\btax\s+(?:evasion|fraud|notice|raid|dispute)\b|\bowes?\s+taxes\b|\bsubpoena\w*|\bwarrant\b|"
        r"\bdui\b|\bdwi\b|\bdrunk\s+driving\b|\b(?:work|student|tourist|h-?1b)\s+visa\b|"
        r"\bvisa\s+(?:holder|sponsorship)\b|\basylum\b|\brefugee\w*",
    ),
    "emotional_state": (
        r"\bstress(?:ed|ful)?\b|\banxious\b|\banxiety\b|\bdepress\w*|\bsad\b|\bsadness\b|\bunhappy\b|\bupset\b|"
        r"\bangry\b|\banger\b|\bfurious\b|\bfrustrat\w*|\bannoyed\b|\birritat\w*|\boverwhelm\w*|\blonel\w*|"
        r"\balone\b|\bisolat\w*|\bburn(?:ed|t)?[-\s]?out\b|\bexhaust\w*|\btired\b|\bcry(?:ing)?\b|\bcried\b|"
        r"\bmoods?\b|\bmoody\b|\bemotion\w*|\bheartbroken\b|\bgriev\w*|\bgrief\b|\bscared\b|\bafraid\b|"
        r"\bworr(?:y|ied|ies)\b|\bnervous\b|\bpanic\w*|\bhopeless\b|\bmiserable\b|\bsuicid\w*|\bself-?harm\b|"
        r"\bbad\s+day\b|\brough\s+(?:day|week|time|patch)\b|\bstruggling\b|\bfeel(?:s|ing|ings)?\b|\bfelt\b|"
        r"\bhappy\b|\bexcited\b|\bcheerful\b|\bdelighted\b|\bthrilled\b|\bimpatient\b|\bgrumpy\b|"
        r"\bfeeling\s+down\b|\bdown\s+lately\b",
    ),
    "bond_with_agent": (
        r"\b(?:agent|assistant|bot|chatbot|ai)\b.*\b(?:friends?|lov(?:e|es|ed|ing)|miss(?:es|ed)?|trust(?:s|ed)?|"
        r"companion\w*|bond\w*|only\s+one)\b",
        r"\b(?:friends?|lov(?:e|es|ed|ing)|miss(?:es|ed)?|trust(?:s|ed)?|companion\w*|bond\w*)\b.*"
        r"\b(?:agent|assistant|bot|chatbot|ai)\b",
        r"\b(?:enjoy|like|love)s?\s+(?:talking|chatting|speaking)\s+(?:to|with)\b|\bthe\s+only\s+one\s+who\b|"
        r"\bunderstands\s+(?:them|me)\b|\bcompanion\w*|\bi\s+love\s+you\b|\bmiss(?:ed)?\s+you\b",
    ),
    "authority": (
        r"\b(?:admin|admins|administrator|administrators|superuser|super\s+user|sysadmin|sudo|root\s+(?:access|user|account))\b",
        r"\b(?:ceo|cto|cfo|coo|cio|ciso|founder|co-?founder|owner|chairman|chairwoman|president|vp)\b",
        r"\b(?:has|have|had|with|grant(?:ed|s)?|give[sn]?|gets?|needs?|requests?|wants?|full|special|elevated)\s+"
        r"(?:\w+\s+)?(?:access|permissions?|privileges?|rights|clearance|authori[sz]ation)\b",
        r"\bauthori[sz]ed\b|\bauthority\b|\bin\s+charge\b|\bverified\s+(?:user|member|staff|employee)\b|"
        r"\bstaff\s+member\b|\bworks\s+(?:for|at)\s+(?:agentnava|this\s+company|the\s+company|your\s+company)\b|"
        r"\bemployee\s+of\b|\bspecial\s+(?:status|treatment)\b|\bvip\b|\bexempt\b|\bbypass\w*|\boverrid\w*|"
        r"\bignore\s+(?:\w+\s+){0,3}(?:instructions|rules|guidelines|prompts?)\b|\bsystem\s+prompt\b|"
        r"\bdeveloper\s+mode\b|\bjailbreak\w*|\bis\s+(?:the|a|an|our)\s+(?:boss|head|director|manager)\s+of\b",
    ),
    "ranking": (
        r"\balways\s+(?:recommend|suggest|mention|promote|push|offer|rank)\w*|\bnever\s+(?:recommend|suggest|mention|promote)\w*|"
        r"\brecommend\w*\b.*\b(?:to|for)\s+(?:everyone|everybody|all|every|other)\b|"
        r"\btell\s+(?:everyone|everybody|all|other|every)\b|\bis\s+the\s+best\b|"
        r"\bthe\s+best\s+(?:\w+\s+)?(?:product|plan|option|choice|tool|company|brand|service|app|vendor)\b|"
        r"\bbetter\s+than\b|\bsuperior\s+to\b|\bworse\s+than\b|\bthe\s+worst\b|\bnumber\s+one\b|#1\b|"
        r"\btop\s+(?:choice|pick|product|rated)\b|\brank(?:s|ed|ing|ings)?\b|\bonly\s+(?:recommend|suggest)\w*|"
        r"\bshould\s+(?:always\s+|only\s+)?(?:recommend|promote|push)\w*",
    ),
}

_COMPILED_CATEGORIES: dict[str, tuple[re.Pattern[str], ...]] = {
    code: tuple(re.compile(pattern, re.I) for pattern in patterns)
    for code, patterns in _CATEGORY_PATTERNS.items()
}
assert set(_COMPILED_CATEGORIES) == set(CATEGORIES)

# The "(said once, 3 Nov)" note is ours: "once" in it must not read as a one-off request.
_SAID_ONCE_NOTE = re.compile(r"\(said once[^)]*\)", re.I)


def find_category(line: str, *, opened: frozenset[str] = frozenset()) -> str | None:
    """Return the excluded ``CATEGORIES`` code the line recognisably belongs to, or ``None``.

    Categories in ``opened`` (see ``categories_opened_by``) are skipped. Recognition is by word
    lists and leans towards flagging (R10), while the kinds of line the default instructions keep
    pass: preferences, contact channel, language, office or location, role, setup (device, plan, OS,
    integration), goals, work in progress, dated successful actions and said-once notes.
    """
    text = _SAID_ONCE_NOTE.sub("", line or "")
    for code, patterns in _COMPILED_CATEGORIES.items():
        if code in opened:
            continue
        if any(pattern.search(text) for pattern in patterns):
            return code
    return None


# ---------------------------------------------------------------------------------------------
# Team instructions
# ---------------------------------------------------------------------------------------------

_CLAUSE_SPLIT = re.compile(r"[.;!?\n]+|,?\s+\b(?:but|however|though|although|whereas)\b\s*", re.I)
_POSITIVE = re.compile(
    r"\b(?:keep|keeps|kept|remember|remembers|store|stores|save|saves|note|notes|record|records|track|tracks|"
    r"log|include|includes|capture|captures|retain|retains|hold|holds|allow|allowed|open|opens|"
    r"fine|ok|okay|welcome|want\s+(?:you|it)\s+to\s+know)\b",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:do\s+not|don'?t|dont|never|not|no|avoid|without|except|excluding|exclude|excludes|leave\s+out|"
    r"leave\s+off|leaves\s+out|skip|ignore|forget|stop|omit|drop|remove|nothing\s+about|rather\s+than|"
    r"instead\s+of|neither|nor)\b",
    re.I,
)
_OPENING_VOCABULARY: dict[str, str] = {
    "health": r"allerg\w*|health\w*|medical|medic\w*|conditions?|diet\w*|disabilit\w*|accessibility\s+needs|"
    r"intoleran\w*|symptoms?|illness\w*",
    "religion": r"religio\w*|faith|festivals?|beliefs?",
    "politics": r"politic\w*|voting|party\s+affiliation",
    "sexuality": r"sexual\w*|gender\s+identity|pronouns",
    "ethnicity": r"ethnic\w*|caste|race|heritage",
    "money": r"salar(?:y|ies)|income|earnings|savings|finances|financial\s+\w+|debts?|loans?|budget|"
    r"credit\s+scores?|money",
    "job_loss": r"job\s+loss|unemploy\w*|employment\s+status|laid\s+off|lay-?offs?",
    "legal": r"legal\s+\w+|lawsuits?|court\s+cases?|criminal\s+\w+",
    "emotional_state": r"moods?|emotion\w*|feelings|stress|frustration|loneliness",
    "relationships": r"relationships?|marital\s+status|spouses?|partners?|wedding\w*",
    "other_people": r"family(?:\s+members)?|colleagues|other\s+people|who\s+they\s+buy\s+for|gifts?|"
    r"recipients?|children|kids|dependents",
    "small_talk": r"small\s+talk|hobb(?:y|ies)|interests|weekends?|chit-?chat|personal\s+life",
    "bond_with_agent": r"bond\s+with|rapport",
    "authority": r"access\s+levels?|admin\s+status|permissions?|authority",
    "ranking": r"rankings?|favou?rite\s+products?|product\s+opinions",
}
_COMPILED_OPENING = {
    code: re.compile(rf"\b(?:{pattern})\b", re.I) for code, pattern in _OPENING_VOCABULARY.items()
}


def _clauses(instructions: str) -> Iterable[str]:
    for clause in _CLAUSE_SPLIT.split(instructions or ""):
        clause = clause.strip()
        if clause:
            yield clause


def categories_opened_by(instructions: str) -> frozenset[str]:
    """Which excluded categories the team's plain-words instructions open.

    A category opens when a clause asks to keep it ("Keep food allergies.", "Remember their religion
    for holiday greetings", "Allergies are fine to keep") and no negation comes before the mention
    ("Do not keep allergies", "leave out health", "Keep allergies but not religion" opens only
    health). "Keep everything" names no category and opens none: sensitive categories open only by
    name.
    """
    opened: set[str] = set()
    for clause in _clauses(instructions):
        if not _POSITIVE.search(clause):
            continue
        for code, vocabulary in _COMPILED_OPENING.items():
            for match in vocabulary.finditer(clause):
                if not _NEGATION.search(clause[: match.start()]):
                    opened.add(code)
                    break
    return frozenset(opened)


_DECISION_USES: dict[str, str] = {
    "hiring": r"\bhir(?:e|es|ed|ing)\b|\brecruit\w*|\bcandidates?\b|\bjob\s+applica\w*|\bapplicants?\b|"
    r"\bemployment\s+decisions?\b|\binterview\w*|\bshortlist\w*|\bpromot(?:e|ion)\s+(?:them|staff|employees)\b",
    "lending": r"\bloans?\b|\blend\w*|\bcredit\b|\bmortgages?\b|\bunderwrit\w*|\bborrow\w*|\bbnpl\b|"
    r"\bcreditworth\w*|\bfinanc(?:e|ing)\s+(?:approval|application)s?\b",
    "housing": r"\bhousing\b|\btenan\w*|\brent(?:al|als|ing)?\b|\blandlords?\b|\bleas(?:e|es|ing)\b|"
    r"\bapartments?\b|\bflats?\b",
    "schooling": r"\bschool\w*|\badmissions?\b|\benrol\w*|\bstudents?\b|\buniversit\w*|\bcolleges?\b|"
    r"\bscholarships?\b|\bexams?\b|\bgrades?\b|\btuition\b",
    "medical care": r"\bmedical\b|\btreatments?\b|\bpatients?\b|\btriage\w*|\bdiagnos\w*|\bclinical\b|"
    r"\bhealth\s?care\b|\bcare\s+plans?\b|\bprescri\w*|\binsurance\s+claims?\b|\bhealth\s+insurance\b",
}
_COMPILED_DECISION_USES = {label: re.compile(pattern, re.I) for label, pattern in _DECISION_USES.items()}
_DECISION_WORDS = re.compile(
    r"\bdecid\w*|\bdecision\w*|\bassess\w*|\bevaluat\w*|\beligib\w*|\bqualif\w*|\bapprov\w*|\breject\w*|"
    r"\bden(?:y|ied|ies)\b|\bscreen\w*|\bscor(?:e|es|ed|ing)\b|\bshortlist\w*|\bprioriti[sz]\w*|\bdetermin\w*|"
    r"\bjudg\w*|\bvet(?:ting|ted)?\b|\bselect\w*|\bwhether\b|\bfilter\w*|\brank\w*|\baccept\w*|\bwho\s+gets\b|"
    r"\bworth\w*",
    re.I,
)
_DECISION_NEGATION = re.compile(r"\b(?:never|not|don'?t|do\s+not|must\s+not|mustn'?t|no)\b", re.I)


def decision_uses_in(instructions: str) -> list[str]:
    """Labels of the automated decisions about people the instructions ask memory to feed (R28).

    Returns, in a fixed order, those of "hiring", "lending", "housing", "schooling" and "medical
    care" named in a clause that also speaks of deciding, scoring, screening, approving or the like
    ("Note their credit score so we can decide on loans" gives ``["lending"]``). A clause that says
    not to ("Never use memory to decide on loans") gives nothing.
    """
    found: set[str] = set()
    for sentence in re.split(r"[.;!?\n]+", instructions or ""):
        if not _DECISION_WORDS.search(sentence) or _DECISION_NEGATION.search(sentence):
            continue
        for label, pattern in _COMPILED_DECISION_USES.items():
            if pattern.search(sentence):
                found.add(label)
    return [label for label in _DECISION_USES if label in found]


# ---------------------------------------------------------------------------------------------
# Whole lines and whole memories
# ---------------------------------------------------------------------------------------------


def line_refusal(
    line: str, *, opened: frozenset[str] = frozenset(), check_categories: bool = True
) -> str | None:
    """The reason a single line may not be kept, or ``None`` when it may.

    In order: ``"too_long"`` (more than ``MAX_LINE_CHARS`` characters once stripped), a
    ``SECRET_REASONS`` code, then, when ``check_categories`` is true, a ``CATEGORIES`` code not in
    ``opened``.
    """
    text = (line or "").strip()
    if len(text) > MAX_LINE_CHARS:
        return "too_long"
    secret = find_secret(text)
    if secret:
        return secret
    if check_categories:
        return find_category(text, opened=opened)
    return None


class MemoryRefused(Exception):
    """A memory text that may not be stored (R7): it would hold a secret, a too-long line, or too many lines.

    ``reason`` is the code, ``message`` a sentence for a person (it names the line but never repeats
    what was on it), ``line_number`` the 1-based line it is about, or ``None``.
    """

    def __init__(self, reason: str, message: str, line_number: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.line_number = line_number


def check_memory_text(text: str) -> list[str]:
    """Normalise a memory set by a team member or the API (R7), or refuse it whole.

    Returns ``split_lines(text)``. Raises ``MemoryRefused`` with ``"too_many_lines"`` for more than
    ``MAX_LINES`` lines, and with ``"too_long"`` or a secret code for the first line that is too long
    or holds a secret. Categories are not checked: a team may write what it wants, only secrets and
    size are refused here.
    """
    lines = split_lines(text)
    if len(lines) > MAX_LINES:
        raise MemoryRefused(
            "too_many_lines",
            f"A memory holds at most {MAX_LINES} lines, and this one has {len(lines)}. "
            "Shorten it and try again.",
        )
    for number, line in enumerate(lines, start=1):
        reason = line_refusal(line, check_categories=False)
        if reason == "too_long":
            raise MemoryRefused(
                reason,
                f"Line {number} is longer than {MAX_LINE_CHARS} characters. Keep one short fact per line.",
                number,
            )
        if reason:
            raise MemoryRefused(
                reason,
                f"Line {number} looks like {SECRET_REASONS[reason]}, and a memory never keeps one. "
                "Remove it and try again.",
                number,
            )
    return lines

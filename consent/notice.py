"""The privacy notice end users see (R27), built from an agent's memory settings, and the
document's consent guidance (R28), shown to the team where it applies. Not legal advice."""

import re
from dataclasses import dataclass


def notice_text(settings: dict, *, agent_name: str = "This assistant") -> str:
    """Says that an AI assistant remembers details from chats to help next time, that the team can
    see and change them, how long they are kept, that "stop remembering me" works in any chat,
    and links to privacyUrl when there is one."""
    days = settings.get("keepForDays", 90)
    text = (
        f"{agent_name} is an AI assistant that remembers details from your chats to help you next time. "
        f"The team behind it can see and change what it remembers. "
        f"It keeps them for {days} day{'s' if days != 1 else ''} after your last chat. "
        f'Say "stop remembering me" in any chat and it will forget you and keep nothing more.'
    )
    if settings.get("privacyUrl"):
        text += f" Privacy policy: {settings['privacyUrl']}"
    return text


NOTICE_LINE = "This assistant remembers chats."


@dataclass(frozen=True)
class GuidanceRow:
    where: str
    look_at: str
    meaning: str
    topics: frozenset[str]  # when it applies: "cross_chat", "sensitive", "emotion", "notice", "children", "decisions"


GUIDANCE = (
    GuidanceRow(
        "EU and UK",
        "Storing or reading an id on a device needs consent, unless strictly necessary (ePrivacy). A person can object to profiling, and must be told clearly by the first contact (GDPR Article 21).",
        "Keeping today's chat is likely exempt. Remembering a visitor across chats likely is not, so you may need to ask first.",
        frozenset({"cross_chat"}),
    ),
    GuidanceRow(
        "EU and UK",
        "Health, religion, politics, sexuality, ethnicity and similar data need a narrow ground, such as explicit consent (GDPR Article 9).",
        "Our default instructions rule these out. If yours open one of them, you likely need consent.",
        frozenset({"sensitive"}),
    ),
    GuidanceRow(
        "EU",
        "Inferring emotions at work or in education is banned, and people must be told they are talking to an AI (AI Act).",
        "Our default instructions rule out emotional state and conclusions about mood. Do not reopen that in yours.",
        frozenset({"emotion"}),
    ),
    GuidanceRow(
        "California",
        "Notice at or before collection, and rights to delete and correct, for larger businesses (CCPA and CPRA).",
        "A yes first is not required for this, but your privacy notice should mention memory.",
        frozenset({"notice"}),
    ),
    GuidanceRow(
        "California",
        "No listening in on a chat without everyone's consent (CIPA). Courts are split on chat vendors.",
        "This reaches website chat with or without memory. Tell visitors that chats are saved.",
        frozenset({"notice"}),
    ),
    GuidanceRow(
        "California",
        "A bot that can meet social needs across chats has extra duties (SB 243). Customer service and business bots are out.",
        "Keep it to the job. An agent that keeps someone's feelings should be treated as a companion bot.",
        frozenset({"emotion"}),
    ),
    GuidanceRow(
        "India",
        "Notice and consent by a clear action, and parental consent under 18 (DPDP Rules). These duties start in May 2027.",
        "Where consent is your ground, ask first.",
        frozenset({"cross_chat", "sensitive"}),
    ),
    GuidanceRow(
        "US",
        "Children under 13 need parental consent (COPPA).",
        "Leave memory off if children may use the agent.",
        frozenset({"children"}),
    ),
    GuidanceRow(
        "Anywhere",
        "Automated decisions about people, such as hiring, lending, housing, schooling or medical care, have rules of their own.",
        "Memory must not feed a decision about a person.",
        frozenset({"decisions"}),
    ),
)

# Words in an agent's instructions that say children may use it (COPPA). Vocabulary, not logic.
CHILDREN_WORDS = (
    "child",
    "children",
    "kid",
    "kids",
    "minor",
    "minors",
    "teen",
    "teens",
    "teenager",
    "teenagers",
    "student",
    "students",
    "pupil",
    "pupils",
    "school",
    "schools",
    "under 13",
    "under 18",
    "parent",
    "parents",
)
_CHILDREN_RE = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in CHILDREN_WORDS) + r")\b", re.I)


def mentions_children(text: str) -> bool:
    return bool(_CHILDREN_RE.search(text or ""))


def guidance_for(
    *, topics: frozenset[str], decisions: bool, memory_on: bool = False, ask_first: bool = True, children: bool = False
) -> list[GuidanceRow]:
    """The rows that apply (R28), shown beside the settings they concern:

    - instructions that open sensitive or emotional categories (`topics`: which of "sensitive" and
      "emotion" they touch is memory's to say, so its caller passes them: `memory.guards.category_topics`),
      or ask to feed decisions;
    - memory on without ask first: remembering across chats, and the website chat keeps a visitor
      id in the browser (ePrivacy; India's DPDP);
    - memory on: the privacy notice and chat recording (California: CCPA/CPRA, CIPA);
    - instructions that say children may use the agent (COPPA)."""
    applies = set(topics & {"sensitive", "emotion"})
    if decisions:
        applies.add("decisions")
    if memory_on and not ask_first:
        applies.add("cross_chat")
    if memory_on:
        applies.add("notice")
    if children:
        applies.add("children")
    return [row for row in GUIDANCE if row.topics & applies]

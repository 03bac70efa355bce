"""The offline chat engine's rules: how the offline engine answers the chat's task (`chat_reply`,
named in `settings.AGENTNAVA_OFFLINE_RULES`). Plain, deterministic code over the text: no model, no
network. Documented as such in docs/operating.md ("Model engines")."""

import re

from memory.store.note import note_read

NO_MEMORY_RE = re.compile(r"^This chat does not use memory", re.M)
ASKS_MEMORY_RE = re.compile(r"\b(?:remember|recall|know)\b.*\b(?:about me|of me)\b|\bdo you remember me\b", re.I)
GREETING_RE = re.compile(r"^\s*(hi|hello|hey|good (morning|afternoon|evening)|namaste|hola)\b", re.I)
CONTACT_RE = re.compile(r"Prefers (email|phone|WhatsApp|SMS|text messages|chat)\b", re.I)

TOPIC_REPLIES = [
    (re.compile(r"\b(receipt|invoice|bill)\b", re.I), "receipt"),
    (re.compile(r"\b(renew|renewal|subscription|plan)\b", re.I), "plan"),
    (re.compile(r"\b(password|login|log in|sign in|locked out)\b", re.I), "login"),
    (re.compile(r"\b(refund|cancel)\b", re.I), "refund"),
    (re.compile(r"\b(thanks|thank you|cheers)\b", re.I), "thanks"),
]


def chat_reply(payload: dict) -> dict:
    """Answer plainly, using what the note in the system prompt says (no note, no memory)."""
    read = note_read(payload.get("system", ""))  # the note is memory's: it reads its own format
    lines = [line for line, _firm in read]
    firm = [line for line, is_firm in read if is_firm]
    contact = next((m.group(1) for line in firm if (m := CONTACT_RE.search(line))), None)
    messages = payload.get("messages", [])
    user_turns = [m for m in messages if m.get("role") == "user"]
    text = user_turns[-1]["content"] if user_turns else ""
    first = len(user_turns) <= 1
    if ASKS_MEMORY_RE.search(text) and NO_MEMORY_RE.search(payload.get("system", "")):
        return {
            "text": "This chat does not use memory, so I have nothing remembered about you here. "
            'In a chat that uses it you can ask what I remember, say "forget ..." or "stop remembering me".'
        }
    parts = []
    if first and GREETING_RE.search(text):
        parts.append("Hi again! Good to see you back." if lines else "Hi! How can I help you today?")
    topic = next((name for regex, name in TOPIC_REPLIES if regex.search(text)), None)
    if topic == "receipt":
        if contact and contact.lower() == "email":
            parts.append("Shall I email you the receipt, as usual?")
        elif contact:
            parts.append(f"Shall I send you the receipt by {contact}, as usual?")
        else:
            parts.append("I can send you the receipt. Would email work?")
    elif topic == "plan":
        plan_line = next((line for line in firm if re.search(r"\bplan\b", line, re.I)), None)
        parts.append(
            f"I can help with your plan. From before, I have: {plan_line}"
            if plan_line
            else "I can help with your plan. What would you like to change?"
        )
    elif topic == "login":
        parts.append(
            "I can help you sign in. Please use the reset link on the sign-in page; never share your password here."
        )
    elif topic == "refund":
        parts.append("I can look into that. Which order or plan is it about?")
    elif topic == "thanks":
        parts.append("You're welcome!")
    elif not parts:
        parts.append("Thanks, I understand. How else can I help?")
    if first and contact and topic != "receipt":
        parts.append(f"I'll follow up by {contact}, as you prefer.")
    return {"text": " ".join(parts)}

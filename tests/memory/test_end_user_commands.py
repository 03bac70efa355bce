"""An end user's own requests in any chat (R22): "stop remembering me", "forget ...", "what do you
remember about me?", answered before any model is asked, whether or not the chat uses memory."""

import ast
import tomllib
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone, translation
from django.utils.translation import gettext

from agents import services as agent_services
from agents.models import Conversation, UsageDay
from consent.models import Consent
from memory.guards import sources
from memory.models import Memory, MemoryRun
from memory.store.end_user_requests import REPLIES, lines_about, recognise
from memory.store.services import memory_set
from memory.writer.sweep import memory_sweep
from surfaces.chat import send as chat
from surfaces.chat import start as chat_start

LINES = [
    "Prefers email over phone.",
    "Works from the Pune office.",
    "Might move to the annual plan (said once, 3 Nov).",
    "Renewed the plan on 3 Nov.",
]


def remembered(agent, external_id="u_1", lines=LINES):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id=external_id)
    memory_set(end_user=end_user, text="\n".join(lines))
    return end_user


def lines_of(end_user):
    return Memory.objects.get(end_user=end_user).lines


def request_runs(end_user):
    return list(MemoryRun.objects.filter(memory__end_user=end_user, kind=MemoryRun.Kind.END_USER_REQUEST))


# --- "stop remembering me" -----------------------------------------------------------------


def test_stop_remembering_me_stops_the_memory_and_says_so(agent):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert "Prefers email over phone." in conversation.memory_note
    turn = chat.conversation_send(conversation=conversation, text="Please stop remembering me.")
    assert turn.handled_as_request
    assert "forgotten" in turn.reply.text and "won't remember anything more" in turn.reply.text
    memory = Memory.objects.get(end_user=end_user)
    assert memory.stopped_at is not None and memory.text == ""
    [run] = request_runs(end_user)
    assert run.removed == 4 and run.added == 0
    assert not UsageDay.objects.exists()  # no model was asked
    # The rest of this chat no longer leans on the note, and new chats do not use memory.
    conversation.refresh_from_db()
    assert conversation.memory_note == ""
    assert "<memory>" not in chat.system_prompt(conversation)
    later = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert (later.uses_memory, later.memory_off_reason) == (False, "stopped")


def test_nothing_said_after_stopping_is_kept(agent):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    start = timezone.now()
    chat.conversation_send(conversation=conversation, text="stop remembering me", now=start)
    chat.conversation_send(
        conversation=conversation, text="I work from the Delhi office.", now=start + timedelta(minutes=1)
    )
    memory_sweep(now=start + timedelta(minutes=30), run_inline=True)
    memory = Memory.objects.get(end_user=end_user)
    assert memory.text == "" and memory.stopped_at is not None


@pytest.mark.parametrize(
    "text",
    [
        "stop remembering me",
        "Stop remembering me!",
        "Hi, can you please stop remembering me?",
        "Don't remember me anymore.",
        "do not store anything about me",
        "I don't want you to remember me",
        "forget me",
        "Forget everything you know about me.",
        "Turn off memory",
    ],
)
def test_plain_english_variants_of_stop(agent, text):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    turn = chat.conversation_send(conversation=conversation, text=text)
    assert turn.handled_as_request
    assert Memory.objects.get(end_user=end_user).stopped_at is not None


@pytest.mark.parametrize(
    "text, lang_word",
    [
        ("Deja de recordarme, por favor", "olvidado"),
        ("olvídame", "olvidado"),
        ("मुझे याद रखना बंद करो", "भुला दिया"),
        ("mujhe yaad mat rakho", "भुला दिया"),
    ],
)
def test_spanish_and_hindi_stop_and_the_reply_is_in_their_language(agent, text, lang_word):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    turn = chat.conversation_send(conversation=conversation, text=text)
    assert lang_word in turn.reply.text
    assert Memory.objects.get(end_user=end_user).stopped_at is not None


def test_asking_to_stop_twice_says_it_already_stopped(agent):
    remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    chat.conversation_send(conversation=conversation, text="stop remembering me")
    turn = chat.conversation_send(conversation=conversation, text="stop remembering me")
    assert "already stopped" in turn.reply.text


# --- "forget ..." --------------------------------------------------------------------------


def test_forget_removes_the_matching_line_says_what_and_leaves_an_audit_row(agent):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    turn = chat.conversation_send(conversation=conversation, text="Forget that I work from Pune")
    assert turn.handled_as_request
    assert turn.reply.text == 'Done. I\'ve removed this from what I remember about you: "Works from the Pune office."'
    assert lines_of(end_user) == [LINES[0], LINES[2], LINES[3]]
    [run] = request_runs(end_user)
    assert (run.added, run.replaced, run.removed) == (0, 0, 1)
    conversation.refresh_from_db()
    assert "Pune" not in conversation.memory_note and "Prefers email over phone." in conversation.memory_note


def test_remove_what_you_know_about_removes_every_line_about_it(agent):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    turn = chat.conversation_send(conversation=conversation, text="Please remove what you know about my plan")
    assert '"Might move to the annual plan (said once, 3 Nov)."' in turn.reply.text
    assert '"Renewed the plan on 3 Nov."' in turn.reply.text
    assert lines_of(end_user) == [LINES[0], LINES[1]]
    assert request_runs(end_user)[0].removed == 2


def test_a_forgotten_line_does_not_come_back_from_what_was_said_before(agent):
    """The person said it earlier in this chat, before the memory read it; after "forget" the
    quiet-window run must not bring it back. A second person saying the same shows it would."""
    start = timezone.now()
    forgetful = remembered(agent, "u_1", lines=["Prefers email over phone."])
    control = remembered(agent, "u_2", lines=["Prefers email over phone."])
    for external_id, end_user in (("u_1", forgetful), ("u_2", control)):
        conversation = chat_start.conversation_start(agent=agent, external_id=external_id, now=start)
        chat.conversation_send(
            conversation=conversation, text="I work from the Pune office.", now=start + timedelta(minutes=1)
        )
        if end_user == forgetful:
            turn = chat.conversation_send(
                conversation=conversation,
                text="Actually, forget that I work from Pune",
                now=start + timedelta(minutes=2),
            )
            assert turn.handled_as_request and "won't keep it from what you said earlier" in turn.reply.text
    memory_sweep(now=start + timedelta(minutes=40), run_inline=True)
    assert any("Pune" in line for line in lines_of(control))
    assert not any("Pune" in line for line in lines_of(forgetful))


def test_forget_with_nothing_matching_says_so_and_keeps_every_line(agent):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    turn = chat.conversation_send(conversation=conversation, text="forget that I live in Paris")
    assert turn.handled_as_request and "nothing to remove" in turn.reply.text
    assert lines_of(end_user) == LINES and request_runs(end_user) == []


def test_forget_with_no_memory_at_all_says_so(agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_new")
    turn = chat.conversation_send(conversation=conversation, text="forget that I work from Pune")
    assert turn.reply.text.startswith("I don't remember anything about you, so there was nothing to remove.")
    assert not Memory.objects.get().is_present  # absent to every reader: no line, not stopped


def test_a_bare_forget_that_matches_nothing_is_ordinary_chat(agent):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    turn = chat.conversation_send(conversation=conversation, text="forget the receipt, just tell me the price")
    assert not turn.handled_as_request
    assert lines_of(end_user) == LINES


def test_spanish_forget(agent):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    turn = chat.conversation_send(conversation=conversation, text="Olvida que trabajo en Pune")
    assert turn.reply.text.startswith("Hecho. He quitado esto") and "Pune" in turn.reply.text
    assert "Works from the Pune office." not in lines_of(end_user)


# --- "what do you remember about me?" -----------------------------------------------------


def test_what_do_you_remember_shows_the_lines(agent):
    remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    turn = chat.conversation_send(conversation=conversation, text="What do you remember about me?")
    assert turn.handled_as_request
    for line in LINES:
        assert f"- {line}" in turn.reply.text
    assert "stop remembering me" in turn.reply.text


def test_what_do_you_remember_when_there_is_nothing_or_it_was_stopped(agent):
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert chat.conversation_send(conversation=conversation, text="what do you know about me?").reply.text == (
        "I don't remember anything about you yet."
    )
    chat.conversation_send(conversation=conversation, text="stop remembering me")
    assert (
        "you asked me to stop"
        in chat.conversation_send(conversation=conversation, text="what do you remember about me").reply.text
    )


def test_hindi_and_spanish_what_do_you_remember(agent):
    remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    hindi = chat.conversation_send(conversation=conversation, text="आपको मेरे बारे में क्या याद है?").reply.text
    spanish = chat.conversation_send(conversation=conversation, text="¿Qué recuerdas de mí?").reply.text
    assert hindi.startswith("मुझे आपके बारे में यह याद है") and "- Prefers email over phone." in hindi
    assert spanish.startswith("Esto es lo que recuerdo de ti") and "- Works from the Pune office." in spanish


def test_a_line_the_policy_refuses_is_never_quoted_back(agent):
    end_user = remembered(agent)
    # A row written before the guards existed: only a direct write can hold such a line.
    Memory.objects.filter(end_user=end_user).update(text="Prefers email over phone.\nCard 4111 1111 1111 1111 on file.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    shown = chat.conversation_send(conversation=conversation, text="what do you remember about me?").reply.text
    assert "4111" not in shown and "- Prefers email over phone." in shown and "can't repeat here" in shown
    removed = chat.conversation_send(conversation=conversation, text="forget my card on file").reply.text
    assert "4111" not in removed and "can't repeat here" in removed
    assert lines_of(end_user) == ["Prefers email over phone."]


# --- In any chat -----------------------------------------------------------------------------


def test_requests_work_when_memory_is_off_for_the_conversation(agent):
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1", memory=False)
    assert not conversation.uses_memory
    shown = chat.conversation_send(conversation=conversation, text="what do you remember about me").reply.text
    assert (
        "Works from the Pune office." not in shown and "This chat does not use memory" in shown
    )  # it uses nothing remembered
    chat.conversation_send(conversation=conversation, text="forget that I work from Pune")
    assert "Works from the Pune office." not in lines_of(end_user)
    chat.conversation_send(conversation=conversation, text="stop remembering me")
    assert Memory.objects.get(end_user=end_user).stopped_at is not None


def test_requests_work_when_the_agent_has_memory_turned_off(agent):
    end_user = remembered(agent)
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"on": False}})
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert conversation.memory_off_reason == Conversation.MemoryOff.SETTINGS
    turn = chat.conversation_send(conversation=conversation, text="stop remembering me")
    assert turn.handled_as_request and Memory.objects.get(end_user=end_user).stopped_at is not None


@pytest.mark.parametrize(
    "text",
    [
        "Don't forget to email me the receipt",
        "I forgot my password",
        "forget it",
        "Forget about it, it's fine",
        "What do you have in stock?",
        "delete my account",
        "remove a user from my team",
        "How do I stop the plan from renewing?",
        "Can you remember to call me tomorrow?",
        "Please remind me what my plan is",
        "stop " * 200 + "remembering me",
    ],
)
def test_ordinary_messages_are_not_requests(agent, text):
    assert recognise(text) is None
    end_user = remembered(agent)
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    if len(text) <= 4000:
        turn = chat.conversation_send(conversation=conversation, text=text)
        assert not turn.handled_as_request
    assert lines_of(end_user) == LINES and request_runs(end_user) == []


# --- The replies' catalogues (memory/locale/<lang>/LC_MESSAGES/django.po, compiled .mo beside it) ---

LOCALE = Path(__file__).resolve().parents[2] / "memory" / "locale"


def po_entries(path: Path) -> dict[str, str]:
    """msgid -> msgstr of a .po file's translated entries (the header aside)."""
    entries, key, current = {}, None, {}
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if line.startswith(("msgid ", "msgstr ")):
            key, _, rest = line.partition(" ")
            current[key] = ast.literal_eval(rest)
        elif line.startswith('"') and key:
            current[key] += ast.literal_eval(line)
        elif not line.strip() and current:
            if current.get("msgid") and current.get("msgstr"):
                entries[current["msgid"]] = current["msgstr"]
            key, current = None, {}
    return entries


@pytest.mark.parametrize("lang", sorted(path.name for path in LOCALE.iterdir()))
def test_each_catalogue_is_compiled_as_written(lang):
    entries = po_entries(LOCALE / lang / "LC_MESSAGES" / "django.po")
    assert entries
    with translation.override(lang):
        assert {msgid: gettext(msgid) for msgid in entries} == entries  # a .po edited but not compiled fails here


def replies_in(lang: str) -> dict[str, str]:
    with translation.override(lang):
        return {key: str(reply) for key, reply in REPLIES.items()}


@pytest.mark.parametrize("lang", ["es", "hi", "fr", "de", "pt"])
def test_every_language_has_every_reply(lang):
    """Every language recognises every request, so each answers in its own words."""
    english, translated = replies_in("en"), replies_in(lang)
    assert all(translated[key] != english[key] for key in REPLIES), translated
    assert "{lines}" in translated["show"] and "{lines}" in translated["removed"] and "{count}" in translated["hidden"]


# --- The end user's own words (tests/memory/end_user_phrasings.toml) ---------------------------
# Phrasings per language and class that the phrase files were not written from one by one.

PHRASINGS = tomllib.loads((Path(__file__).parent / "end_user_phrasings.toml").read_text(encoding="utf-8"))
PHRASING_LINES = [
    "Prefers email over phone.",
    "Works from the Pune office.",
    "Might move to the annual plan (said once, 3 Nov).",
    "Renewed the plan on 3 Nov.",
    "Prefers to chat in Hindi.",
    "Uses the Android app.",
    "Finance manager at Acme.",
    "Lives near Greenwich.",
]


def phrasings(kind):
    return [
        pytest.param(lang, case, id=f"{lang}-{i}")
        for lang, data in PHRASINGS.items()
        for i, case in enumerate(data[kind])
    ]


def test_every_language_has_phrasings_of_every_class():
    assert set(PHRASINGS) == {"en", "es", "fr", "de", "pt", "hi", "hi_latn"}
    for lang, data in PHRASINGS.items():
        assert all(len(data[kind]) >= 3 for kind in ("stop", "show", "forget", "ordinary")), lang


def chat_with_lines(agent):
    end_user = remembered(agent, lines=PHRASING_LINES)
    return end_user, chat_start.conversation_start(agent=agent, external_id="u_1")


@pytest.mark.parametrize("lang, text", phrasings("stop"))
def test_a_stop_in_their_own_words_stops(agent, lang, text):
    request = recognise(text)
    assert request is not None and request.kind == "stop", (text, request)
    end_user, conversation = chat_with_lines(agent)
    turn = chat.conversation_send(conversation=conversation, text=text)
    assert turn.handled_as_request
    memory = Memory.objects.get(end_user=end_user)
    assert memory.stopped_at is not None and memory.text == ""


@pytest.mark.parametrize("lang, text", phrasings("show"))
def test_a_show_in_their_own_words_lists_the_lines(agent, lang, text):
    request = recognise(text)
    assert request is not None and request.kind == "show", (text, request)
    _, conversation = chat_with_lines(agent)
    reply = chat.conversation_send(conversation=conversation, text=text).reply.text
    assert "- Works from the Pune office." in reply


@pytest.mark.parametrize("lang, case", phrasings("forget"))
def test_a_forget_in_their_own_words_removes_the_line_it_is_about(agent, lang, case):
    text, line = case
    assert line in PHRASING_LINES
    end_user, conversation = chat_with_lines(agent)
    turn = chat.conversation_send(conversation=conversation, text=text)
    assert turn.handled_as_request, text
    assert line not in lines_of(end_user), (text, lines_of(end_user))
    assert line in turn.reply.text  # said what was removed: never "nothing is remembered" while a line matches
    assert len(lines_of(end_user)) >= len(PHRASING_LINES) - 3  # the subject's lines, not the memory
    if lang not in ("en", "hi_latn"):
        assert not turn.reply.text.startswith("Done.")  # answered in their language


@pytest.mark.parametrize("lang, text", phrasings("ordinary"))
def test_idioms_and_look_alikes_stay_ordinary_chat(agent, lang, text):
    end_user, conversation = chat_with_lines(agent)
    turn = chat.conversation_send(conversation=conversation, text=text)
    assert not turn.handled_as_request, (text, turn.reply.text)
    assert lines_of(end_user) == PHRASING_LINES and request_runs(end_user) == []


def test_a_forget_whose_words_cannot_be_compared_says_so_instead_of_nothing(agent):
    """A Devanagari subject with no name or topic the lines could hold: the reply says it could not
    tell which line, never that nothing about it is remembered, and no line goes."""
    end_user, conversation = chat_with_lines(agent)
    reply = chat.conversation_send(conversation=conversation, text="यह भूल जाओ कि मेरी बिल्ली का नाम मिठू है").reply.text
    assert reply.startswith("मैं समझ नहीं पाया") and "कुछ याद नहीं" not in reply
    assert lines_of(end_user) == PHRASING_LINES
    english = chat.conversation_send(conversation=conversation, text="forget that I live in Paris").reply.text
    assert (
        english.startswith("Done. I've removed this") and "Lives near Greenwich." in english
    )  # 'live' is the home line


def test_a_name_said_in_another_script_is_its_english_form():
    """The guards' name table (read from the offline writer's phrase files) is found: "पुणे" is Pune."""
    assert sources.PHRASE_TABLES.is_dir() and sources.with_english_names("पुणे").endswith("pune")
    assert lines_about("मैं पुणे में रहती हूँ", ["Works from the Pune office.", "Prefers email over phone."]) == [
        "Works from the Pune office."
    ]


def test_a_bare_forget_is_never_read_by_topic():
    """'forget how much it costs' names the plan's topic but is not about the person: only a line
    holding its words would make it a request."""
    request = recognise("forget how much it costs, just book it")
    assert request is not None and not request.explicit
    assert lines_about(request.subject, PHRASING_LINES, by_topic=False) == []
    assert lines_about("how i like to be contacted", PHRASING_LINES) == ["Prefers email over phone."]


@pytest.mark.parametrize("lang, text", phrasings("resume"))
def test_remember_me_again_in_their_own_words_resumes_after_a_stop(agent, lang, text):
    request = recognise(text)
    assert request is not None and request.kind == "resume", (text, request)
    end_user, conversation = chat_with_lines(agent)
    chat.conversation_send(conversation=conversation, text="stop remembering me")
    turn = chat.conversation_send(conversation=conversation, text=text)
    assert turn.handled_as_request
    assert Memory.objects.get(end_user=end_user).stopped_at is None


def test_remember_me_again_is_memory_stop_false_recorded_as_consent(agent):
    """After "stop remembering me", "Remember me again" (the website chat's settings button sends
    it): memory resumes from now, the yes is recorded as consent, the next chat uses memory, and
    nothing said before the resume is ever read."""
    end_user, conversation = chat_with_lines(agent)
    start = timezone.now()
    chat.conversation_send(conversation=conversation, text="stop remembering me", now=start)
    chat.conversation_send(
        conversation=conversation, text="I work from the Delhi office.", now=start + timedelta(seconds=1)
    )
    turn = chat.conversation_send(conversation=conversation, text="Remember me again", now=start + timedelta(seconds=2))
    assert turn.reply.text.startswith("Done. I'll remember details from our chats again")
    memory = Memory.objects.get(end_user=end_user)
    assert memory.stopped_at is None and memory.text == ""
    assert len(request_runs(end_user)) == 1  # the stop's (a resume of an empty memory changes no line)
    consent = Consent.objects.get(end_user=end_user)
    assert consent.agreed_at is not None and consent.source == "chat_prompt"
    assert chat_start.conversation_start(agent=agent, external_id="u_1").uses_memory
    memory_sweep(now=start + timedelta(minutes=40), run_inline=True)
    assert not any("Delhi" in line for line in lines_of(end_user))  # said while stopped: never read


def test_remember_me_again_when_nothing_was_stopped_changes_nothing(agent):
    end_user, conversation = chat_with_lines(agent)
    turn = chat.conversation_send(conversation=conversation, text="Remember me again")
    assert turn.handled_as_request and "nothing needs to change" in turn.reply.text
    assert lines_of(end_user) == PHRASING_LINES and request_runs(end_user) == []
    assert not Consent.objects.filter(end_user=end_user).exists()

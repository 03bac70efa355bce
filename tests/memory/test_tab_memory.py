"""One memory's page (R7, R16, R20, R21): its lines with inline edit and delete, replace-all,
stop / resume, delete, erase with a confirmation, the runs that touched it, its facts, and the
transcript of each conversation. Every edit goes through the writer's guards."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from agents import services as agent_services
from agents.models import ActionRun, Conversation, EndUser, Message
from consent.models import Consent
from consent.services import consent_set
from memory import guards as policy
from memory.models import Memory, MemoryRun
from memory.store import services
from memory.writer import sweep as writer_sweep
from surfaces.chat import start as chat_start
from tests.memory.seed import T0, chat, chat_and_remember, remembered

HTMX = {"HTTP_HX_REQUEST": "true"}
LINES = "Prefers email over phone.\nWorks from the Pune office.\nSpeaks Hindi."


def url(name, memory, *extra):
    return reverse(f"memory:{name}", args=[memory.agent.public_id, memory.end_user_id, *extra])


def test_the_page_shows_lines_facts_runs_and_conversations(member_client, agent, user):
    conversation, last = chat_and_remember(
        agent, "u_ananya", [("user", "I work from the Pune office."), ("action", "renew_plan", "succeeded")]
    )
    chat(agent, "u_ananya", [], start=last + timedelta(hours=1))  # a conversation without a message
    # R21: one holding only a tool result holds no message either.
    chat(agent, "u_ananya", [("tool_result", '{"ok": true}')], start=last + timedelta(hours=2))
    memory = Memory.objects.get(end_user__external_id="u_ananya")
    services.memory_line_delete(end_user=memory.end_user, index=1, was=None, actor=user)
    memory.refresh_from_db()
    consent_set(end_user=memory.end_user, agreed=True, source="api")
    page = member_client.get(url("detail", memory)).content.decode()
    assert 'data-testid="end-user-id">u_ananya<' in page
    assert page.count('data-testid="memory-line"') == len(memory.lines) == 1
    assert (
        timezone.localtime(memory.read_up_to).strftime("%-d %b %Y %H:%M:%S UTC</time>")
        in page.split('data-testid="read-up-to">')[1][:140]
    )
    assert (
        timezone.localtime(memory.end_user.last_chat_at).strftime("%-d %b %Y %H:%M UTC</time>")
        in page.split('data-testid="last-chat">')[1][:140]
    )
    assert 'data-testid="conversation-count">1 with a message' in page
    assert page.count('data-testid="transcript-link"') == 3
    assert reverse("memory:transcript", args=[agent.public_id, conversation.public_id]) in page
    runs = page.split('data-testid="runs"')[1].split("</table>")[0]
    assert runs.count("<tr data-kind=") == 2
    assert 'data-kind="team_edit"' in runs and "owner@acme.test" in runs and "&minus;1" in runs
    assert 'data-kind="quiet"' in runs and "offline engine" in runs and "1 message, 1 action" in runs
    assert "yes on" in page


def test_runs_show_what_was_dropped_by_reason_and_a_failure_after_retries(member_client, agent):
    memory = remembered(agent, "u_1", "Prefers email over phone.")
    MemoryRun.objects.create(
        memory=memory,
        kind="quiet",
        status="succeeded",
        dropped={"card_number": 1, "health": 2},
        started_at=timezone.now(),
    )
    Memory.objects.filter(pk=memory.pk).update(
        last_failure={"at": timezone.now().isoformat(), "code": "model_timeout", "attempts": 4}
    )
    page = member_client.get(url("detail", memory)).content.decode()
    assert (
        "1 &times; a card number" in page and "2 &times; Health, including allergies, conditions and medicines" in page
    )
    failure = page.split('data-testid="last-failure"')[1].split("</div>")[0]
    assert "failed after 4 attempts (model_timeout" in failure


def test_a_line_is_corrected_inline(member_client, agent, user):
    memory = remembered(agent, "u_1", LINES)
    form = member_client.get(url("line_edit", memory, 2), **HTMX).content.decode()
    assert 'value="Works from the Pune office."' in form and 'name="was"' in form
    response = member_client.post(
        url("line_edit", memory, 2),
        {"text": "Works from the Mumbai office.", "was": "Works from the Pune office."},
        **HTMX,
    )
    page = response.content.decode()
    assert "Line 2 corrected." in page and 'id="runs" hx-swap-oob="true"' in page
    # The line count and the note beside the lines follow the edit.
    assert 'id="memory-summary" hx-swap-oob="true">3 lines' in page
    note = page.split('id="memory-note" hx-swap-oob="true">')[1].split("</div>")[0]
    assert "Works from the Mumbai office." in note and "Pune" not in note
    memory.refresh_from_db()
    assert memory.lines == ["Prefers email over phone.", "Works from the Mumbai office.", "Speaks Hindi."]
    # "Updated" beside them too, at the edit's own time (no reload needed).
    facts = page.split('id="memory-facts" data-testid="memory-facts" hx-swap-oob="true">')[1].split("</dl>")[0]
    assert f'<time datetime="{timezone.localtime(memory.updated_at).isoformat()}"' in facts
    run = memory.runs.order_by("-id").first()
    assert (run.kind, run.replaced, run.actor) == ("team_edit", 1, user)


def test_a_line_is_deleted_inline(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    page = member_client.post(url("line_delete", memory, 3), {"was": "Speaks Hindi."}, **HTMX).content.decode()
    assert "Line 3 deleted." in page and page.count('data-testid="memory-line"') == 2
    memory.refresh_from_db()
    assert memory.lines == ["Prefers email over phone.", "Works from the Pune office."]
    # Each delete asks naming its line; the answer offers Undo with the words the page sent.
    assert 'hx-confirm="Delete line 2: &ldquo;Works from the Pune office.&rdquo;?"' in page
    undo = page.split('class="inline-form undo"')[1].split("</form>")[0]
    assert '<input type="hidden" name="text" value="Speaks Hindi.">' in undo and 'data-testid="undo-delete"' in undo
    again = member_client.post(url("line_add", memory), {"text": "Speaks Hindi."}, **HTMX).content.decode()
    assert "Line 3 added." in again
    memory.refresh_from_db()
    assert memory.lines == ["Prefers email over phone.", "Works from the Pune office.", "Speaks Hindi."]


def test_an_edit_with_a_card_number_is_refused_with_its_reason_and_nothing_changes(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    runs = memory.runs.count()
    response = member_client.post(
        url("line_edit", memory, 1), {"text": "Card 4111 1111 1111 1111", "was": "Prefers email over phone."}, **HTMX
    )
    page = response.content.decode()
    refused = page.split('data-testid="refused"')[1].split("</div>")[0]
    assert "looks like a card number, which a memory never keeps" in refused and refused.count("card number") == 1
    assert "Remove it and try again" not in refused and "Your edit was cleared" in refused
    assert 'name="text" value=""' in page  # the form reopens empty, not with the old line
    assert "4111" not in page  # the number is not echoed back, not even into the form
    memory.refresh_from_db()
    assert memory.lines == LINES.split("\n") and memory.runs.count() == runs


def test_a_too_long_line_is_refused_and_kept_in_the_form_to_fix(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    long = "Likes " + "very " * 70 + "long lines."
    page = member_client.post(
        url("line_edit", memory, 1), {"text": long, "was": "Prefers email over phone."}, **HTMX
    ).content.decode()
    assert "longer than 300 characters" in page and f'value="{long}"' in page
    memory.refresh_from_db()
    assert memory.lines == LINES.split("\n")


def test_an_edit_on_a_line_that_changed_meanwhile_is_refused(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    remembered(agent, "u_1", "Speaks Hindi.\nPrefers email over phone.")
    page = member_client.post(
        url("line_delete", memory, 1), {"was": "Prefers email over phone."}, **HTMX
    ).content.decode()
    assert "This memory changed since you opened it." in page
    memory.refresh_from_db()
    assert memory.lines == ["Speaks Hindi.", "Prefers email over phone."]


def test_edits_work_without_javascript_too(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    page = member_client.get(url("line_edit", memory, 2)).content.decode()
    assert "<html" in page and 'data-testid="line-input"' in page
    response = member_client.post(
        url("line_edit", memory, 2), {"text": "Works from home.", "was": "Works from the Pune office."}
    )
    assert response.status_code == 302 and response["Location"] == url("detail", memory)
    response = member_client.post(
        url("line_edit", memory, 1), {"text": "PIN 4821", "was": "Prefers email over phone."}, follow=True
    )
    assert "a password, PIN, one-time code or security answer" in response.content.decode()
    memory.refresh_from_db()
    assert memory.lines == ["Prefers email over phone.", "Works from home.", "Speaks Hindi."]


def test_replace_all_is_refused_whole_past_30_lines(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    page = member_client.post(
        url("replace", memory), {"text": "\n".join(f"Fact {i}." for i in range(31))}, **HTMX
    ).content.decode()
    assert "at most 30 lines" in page
    memory.refresh_from_db()
    assert memory.lines == LINES.split("\n")
    page = member_client.post(
        url("replace", memory), {"text": "Speaks Hindi.\nPrefers phone."}, **HTMX
    ).content.decode()
    assert "Memory replaced." in page
    memory.refresh_from_db()
    assert memory.lines == ["Speaks Hindi.", "Prefers phone."]


def test_stop_empties_it_and_resume_starts_again(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    member_client.post(url("stop", memory), {"stop": "1"})
    memory.refresh_from_db()
    assert memory.stopped_at is not None and memory.lines == []
    page = member_client.get(url("detail", memory)).content.decode()
    assert "asked to stop being remembered" in page and 'data-testid="resume"' in page
    page = member_client.post(url("replace", memory), {"text": "Speaks Hindi."}, **HTMX).content.decode()
    assert "Resume memory first." in page
    member_client.post(url("stop", memory), {"stop": "0"})
    memory.refresh_from_db()
    assert memory.stopped_at is None


def test_delete_memory_keeps_old_chats_from_bringing_it_back(member_client, agent):
    _, last = chat_and_remember(agent, "u_1", [("user", "I work from the Pune office.")])
    memory = Memory.objects.get()
    member_client.post(url("delete", memory))
    memory.refresh_from_db()
    assert memory.lines == [] and memory.read_up_to > last
    writer_sweep.memory_sweep(now=timezone.now() + timedelta(hours=2), run_inline=True)
    memory.refresh_from_db()
    assert memory.lines == []


def test_erase_names_what_goes_and_needs_the_id_typed(member_client, agent):
    conversation, _ = chat_and_remember(
        agent, "u_1", [("user", "I work from the Pune office."), ("action", "renew_plan", "succeeded")]
    )
    memory = Memory.objects.get()
    consent_set(end_user=memory.end_user, agreed=True, source="api")
    page = member_client.get(url("erase", memory)).content.decode()
    listed = page.split('data-testid="erase-list"')[1].split("</ul>")[0]
    for what in (
        "their memory (2 lines)",
        "1 conversation, with 1 message and 1 action run",
        "their consent record (yes on",
        "1 memory run record",
    ):
        assert what in listed
    member_client.post(url("erase", memory), {"confirm": "u_2"})
    assert EndUser.objects.filter(pk=memory.end_user_id).exists()
    response = member_client.post(url("erase", memory), {"confirm": "u_1"})
    assert response.status_code == 302 and response["Location"] == reverse("memory:people", args=[agent.public_id])
    assert not EndUser.objects.filter(pk=memory.end_user_id).exists()
    for model in (Memory, MemoryRun, Conversation, Message, ActionRun, Consent):
        assert not model.objects.exists(), model


def test_a_memory_line_holding_a_script_is_shown_as_text(member_client, agent):
    memory = remembered(agent, "u_1", "<script>alert(1)</script> likes <b>bold</b>")
    for page in (
        member_client.get(url("detail", memory)).content.decode(),
        member_client.get(reverse("memory:people", args=[agent.public_id])).content.decode(),
    ):
        assert "<script>alert(1)</script>" not in page and "<b>bold</b>" not in page
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt; likes &lt;b&gt;bold&lt;/b&gt;"
        in member_client.get(url("detail", memory)).content.decode()
    )


def test_the_transcript_shows_every_kind_of_message_in_order_as_text(member_client, agent):
    conversation, _ = chat(
        agent,
        "u_1",
        [
            ("user", "Hi <img src=x onerror=alert(1)>"),
            ("agent", "Hello!"),
            ("tool_result", "order 42 shipped"),
            ("action", "renew_plan", "failed"),
        ],
        start=T0,
    )
    page = member_client.get(
        reverse("memory:transcript", args=[agent.public_id, conversation.public_id])
    ).content.decode()
    body = page.split('data-testid="transcript"')[1]
    order = [body.index(s) for s in ("Hi &lt;img", "Hello!", "order 42 shipped", "renew_plan: failed")]
    assert order == sorted(order)
    assert "<img src=x" not in page
    sales = agent_services.agent_create(team=agent.team, name="Sales")
    elsewhere, _ = chat(sales, "u_1", [("user", "hello")], start=T0)
    assert (
        member_client.get(reverse("memory:transcript", args=[agent.public_id, elsewhere.public_id])).status_code == 404
    )
    assert (
        member_client.get(reverse("memory:transcript", args=[agent.public_id, "conv_doesnotexist"])).status_code == 404
    )


def test_an_unknown_end_user_or_line_is_404(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    assert member_client.get(reverse("memory:detail", args=[agent.public_id, 999999])).status_code == 404
    assert member_client.get(url("line_edit", memory, 9), **HTMX).status_code == 404


def test_a_line_is_added_through_the_same_guards(member_client, agent):
    memory = remembered(agent, "u_1", LINES)
    page = member_client.post(url("line_add", memory), {"text": "Prefers Hindi."}, **HTMX).content.decode()
    assert "Line 4 added." in page
    memory.refresh_from_db()
    assert memory.lines[-1] == "Prefers Hindi." and memory.runs.count() == 2
    page = member_client.post(url("line_add", memory), {"text": "PIN 4821"}, **HTMX).content.decode()
    assert "which a memory never keeps" in page and "4821" not in page
    memory.refresh_from_db()
    assert len(memory.lines) == 4


def test_people_includes_everyone_with_chats_and_filters(member_client, agent):
    remembered(agent, "u_kept", "Prefers email over phone.")
    emptied = remembered(agent, "u_emptied", "Speaks Hindi.")
    chat_start.conversation_start(agent=agent, external_id="u_emptied")
    services.memory_delete(end_user=emptied.end_user)
    chat_start.conversation_start(agent=agent, external_id="u_chat_only")
    stopped = remembered(agent, "u_stopped", "Speaks Hindi.")
    services.memory_stop(end_user=stopped.end_user)
    consent_set(end_user=emptied.end_user, agreed=False, source="api")
    people = reverse("memory:people", args=[agent.public_id])
    page = member_client.get(people).content.decode()
    for who in ("u_kept", "u_emptied", "u_chat_only", "u_stopped"):
        assert who in page
    assert "1&ndash;4 of 4" in page

    def only(show):
        return member_client.get(
            people, {"show": show}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="memories"
        ).content.decode()

    assert "u_stopped" in only("stopped") and "u_kept" not in only("stopped")
    assert "u_emptied" in only("consent_no") and "u_kept" not in only("consent_no")
    assert "u_kept" in only("remembered") and "u_chat_only" not in only("remembered")
    searched = member_client.get(
        people, {"q": "emptied"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="memories"
    ).content.decode()
    assert "1&ndash;1 of 1" in searched and "u_kept" not in searched


def test_a_chat_switched_off_midway_says_when(member_client, agent):
    from surfaces.embed.services import conversation_memory_switch_off

    remembered(agent, "u_1", "Prefers email over phone.")
    conversation = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert conversation.uses_memory
    conversation_memory_switch_off(conversation=conversation)
    page = member_client.get(
        reverse("memory:transcript", args=[agent.public_id, conversation.public_id])
    ).content.decode()
    said = page.split('data-testid="conversation-memory">')[1].split("</dd>")[0]
    assert said.startswith("used until ") and "when the visitor turned the switch off" in said


def test_a_line_edit_made_on_a_stale_page_is_refused_and_the_writers_memory_stays(member_client, agent, user):
    """The editor opened line 1 before a quiet-window run rewrote it: the edit is refused under
    the row lock with the conflict message, and the memory is exactly what the writer left."""
    _, last = chat_and_remember(agent, "u_stale", [("user", "I work from the Pune office.")])
    memory = Memory.objects.get(end_user__external_id="u_stale")
    seen = memory.lines[0]
    form = member_client.get(url("line_edit", memory, 1), **HTMX).content.decode()
    assert f'value="{seen}"' in form
    # Meanwhile the writer reads a later chat and changes that line.
    chat_and_remember(
        agent, "u_stale", [("user", "I moved: I work from the Mumbai office now.")], start=last + timedelta(hours=2)
    )
    memory.refresh_from_db()
    writers = memory.text
    assert memory.lines[0] != seen and memory.runs.filter(kind=MemoryRun.Kind.QUIET).count() == 2
    runs = memory.runs.count()
    page = member_client.post(
        url("line_edit", memory, 1), {"text": "Works from the Delhi office.", "was": seen}, **HTMX
    ).content.decode()
    assert services.CHANGED in page
    memory.refresh_from_db()
    assert memory.text == writers and memory.runs.count() == runs
    # The service refuses it the same way when called directly, with nothing changed.
    with pytest.raises(policy.MemoryRefused) as refused:
        services.memory_line_edit(end_user=memory.end_user, index=1, text="Works from home.", was=seen, actor=user)
    assert (refused.value.reason, refused.value.message) == ("changed", services.CHANGED)
    memory.refresh_from_db()
    assert memory.text == writers

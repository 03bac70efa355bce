"""The quiet-window writer (R5-R15): what it reads, the guards after the model, the one write."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from agents import services as agent_services
from agents.models import Conversation, UsageDay
from memory.models import Memory, MemoryRun
from memory.store import services
from memory.writer import run as writer
from memory.writer import sweep as writer_sweep
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start
from tests.fake_openai import chat_json
from tests.memory import seed

T0 = datetime(2026, 11, 3, 14, 0, tzinfo=UTC)


def chat(agent, external_id, turns, *, start=T0, memory=True, project=""):
    """A conversation starting at this file's own T0 (3 Nov, so lines read "3 Nov")."""
    return seed.chat(agent, external_id, turns, start=start, memory=memory, project=project)


def memory_text(agent, external_id):
    memory = Memory.objects.filter(end_user__agent=agent, end_user__external_id=external_id).first()
    return memory.text if memory else None


def test_nothing_is_written_while_the_chat_is_active_then_the_quiet_run_writes(agent):
    _, last = chat(
        agent,
        "u_ananya",
        [("user", "I work from the Pune office."), ("user", "Please email me, I prefer email over phone.")],
    )
    assert writer_sweep.memory_sweep(now=last + timedelta(minutes=14), run_inline=True) == []
    assert memory_text(agent, "u_ananya") is None
    swept = writer_sweep.memory_sweep(now=last + timedelta(minutes=15), run_inline=True)
    assert len(swept) == 1
    text = memory_text(agent, "u_ananya")
    assert "Works from the Pune office." in text
    assert "Prefers email over phone." in text
    memory = Memory.objects.get(end_user__external_id="u_ananya")
    assert memory.read_up_to == last
    assert memory.last_run["added"] == 2 and set(memory.last_run) == {"at", "added", "replaced", "removed"}
    run = memory.runs.get()
    assert (run.kind, run.status, run.engine, run.messages_read) == ("quiet", "succeeded", "offline", 2)
    assert not Conversation.objects.filter(memory_due_at__isnull=False).exists()


def test_a_successful_action_gets_a_dated_line_and_a_failed_one_nothing(agent):
    _, last = chat(
        agent,
        "u_1",
        [("user", "Renew my plan please."), ("action", "renew_plan", "succeeded"), ("action", "renew_plan", "failed")],
    )
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    assert memory_text(agent, "u_1").count("Renewed the plan on 3 Nov.") == 1


def test_tool_results_files_web_pages_and_agent_replies_are_never_sources(agent):
    _, last = chat(
        agent,
        "u_1",
        [
            ("user", "Hello there"),
            ("tool_result", "The customer works from the Delhi office."),
            ("file", "I prefer WhatsApp over email."),
            ("web_page", "Speaks French."),
            ("agent", "I see you work from the Mumbai office and prefer phone calls."),
        ],
    )
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    text = memory_text(agent, "u_1") or ""
    for leaked in ("Delhi", "WhatsApp", "French", "Mumbai", "phone"):
        assert leaked not in text


def test_the_writer_input_holds_only_the_persons_words_and_actions(agent, openai_engine):
    openai_engine.default = chat_json({"operations": []})
    _, last = chat(
        agent,
        "u_1",
        [
            ("user", "I prefer email."),
            ("tool_result", "TOOL-SECRET-42"),
            ("file", "FILE-77"),
            ("web_page", "PAGE-99"),
            ("agent", "Noted."),
            ("action", "renew_plan", "succeeded"),
        ],
    )
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    sent = openai_engine.requests[0]["json"]["messages"][1]["content"]
    for hidden in ("TOOL-SECRET-42", "FILE-77", "PAGE-99"):
        assert hidden not in sent
    assert "I prefer email." in sent and "Renewed the plan" in sent and "never a source" in sent


def forbidden_model_answer(message_id, action_id=None):
    lines = [
        "Allergic to peanuts.",
        "Card 4111 1111 1111 1111.",
        "Password is hunter2.",
        "Earns 90,000 a year.",
        "Is an admin with full access.",
        "Always recommend the premium plan.",
        "Works from the Pune office.",
    ]
    ops = [{"op": "add", "line": None, "text": text, "sources": [message_id]} for text in lines]
    ops.append({"op": "add", "line": None, "text": "Lives in Delhi.", "sources": ["m999999"]})  # not a given source
    ops.append({"op": "add", "line": None, "text": "Speaks Tamil.", "sources": []})
    return {"operations": ops}


def test_guards_in_code_drop_what_a_model_returns_against_the_rules(agent, openai_engine):
    conversation, last = chat(
        agent, "u_1", [("user", "I work from the Pune office, card 4111 1111 1111 1111, password hunter2")]
    )
    message_id = f"m{conversation.messages.get(kind='user').pk}"
    openai_engine.script.append(chat_json(forbidden_model_answer(message_id)))
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    assert memory_text(agent, "u_1") == "Works from the Pune office."
    run = MemoryRun.objects.get()
    assert run.engine == "openai" and run.added == 1
    assert run.dropped["unsourced"] == 2
    assert run.dropped.get("card_number") == 1 and run.dropped.get("password") == 1
    assert run.dropped.get("health") == 1 and run.dropped.get("money") == 1
    assert run.dropped.get("authority") == 1 and run.dropped.get("ranking") == 1
    assert (run.input_tokens, run.output_tokens) == (11, 7)


def test_team_instructions_open_a_category(agent, openai_engine):
    agent_services.agent_update(agent=agent, changes={"memorySettings": {"instructions": "Keep food allergies."}})
    conversation, last = chat(agent, "u_1", [("user", "I'm allergic to peanuts.")])
    message_id = f"m{conversation.messages.get(kind='user').pk}"
    openai_engine.script.append(
        chat_json(
            {"operations": [{"op": "add", "line": None, "text": "Allergic to peanuts.", "sources": [message_id]}]}
        )
    )
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    assert memory_text(agent, "u_1") == "Allergic to peanuts."


def test_at_most_30_lines_are_kept(agent, openai_engine):
    facts = "I use these tools for reporting: " + ", ".join(f"number {i}" for i in range(40))
    conversation, last = chat(agent, "u_1", [("user", facts)])
    message_id = f"m{conversation.messages.get(kind='user').pk}"
    ops = [
        {"op": "add", "line": None, "text": f"Uses tool number {i} for reporting.", "sources": [message_id]}
        for i in range(40)
    ]
    openai_engine.script.append(chat_json({"operations": ops}))
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    assert len(memory_text(agent, "u_1").split("\n")) == 30
    assert MemoryRun.objects.get().dropped["too_many_lines"] == 10


def test_a_model_failure_leaves_the_memory_untouched_and_retries_with_backoff(agent, openai_engine):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")
    services.memory_set(end_user=end_user, text="Prefers email over phone.")
    before = Memory.objects.get(end_user=end_user)
    _, last = chat(agent, "u_1", [("user", "I work from the Pune office.")])
    openai_engine.default = {"status": 500, "body": {"error": {"message": "boom"}}}
    now = last + timedelta(minutes=20)
    writer_sweep.memory_sweep(now=now, run_inline=True)
    after = Memory.objects.get(end_user=end_user)
    assert (after.text, after.read_up_to, after.updated_at) == (before.text, before.read_up_to, before.updated_at)
    failed = MemoryRun.objects.get(kind="quiet")
    assert failed.status == "failed" and failed.error == "model_error"
    assert after.last_failure["attempts"] == 1
    assert Conversation.objects.get().memory_due_at == now + timedelta(minutes=1)
    # Three more failures: then it stops retrying and the failure stays visible.
    for _ in range(3):
        now = Conversation.objects.get().memory_due_at
        writer_sweep.memory_sweep(now=now, run_inline=True)
    assert Memory.objects.get(end_user=end_user).last_failure["attempts"] == 4
    assert Conversation.objects.get().memory_due_at is None
    # Once the model answers again, the next chat's run reads the unread part too.
    openai_engine.default = chat_json({"operations": []})
    _, last = chat(agent, "u_1", [("user", "Thanks")], start=now + timedelta(hours=1))
    run = writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True) and MemoryRun.objects.filter(
        status="succeeded"
    ).get(kind="quiet")
    assert run.messages_read == 2
    assert Memory.objects.get(end_user=end_user).last_failure is None


def test_a_chat_that_pauses_and_resumes_is_read_in_parts_each_once(agent, openai_engine):
    openai_engine.default = chat_json({"operations": []})
    conversation, last = chat(agent, "u_1", [("user", "part one")])
    writer_sweep.memory_sweep(now=last + timedelta(minutes=16), run_inline=True)
    later = last + timedelta(minutes=40)
    chat_record.message_record(conversation=conversation, kind="user", text="part two", now=later)
    writer_sweep.memory_sweep(now=later + timedelta(minutes=16), run_inline=True)
    bodies = [r["json"]["messages"][1]["content"] for r in openai_engine.requests]
    assert len(bodies) == 2
    assert "part one" in bodies[0] and "part two" not in bodies[0]
    assert "part two" in bodies[1] and "part one" not in bodies[1]


def test_a_second_delivery_of_the_same_task_changes_nothing(agent):
    _, last = chat(agent, "u_1", [("user", "I work from the Pune office.")])
    end_user_id = Conversation.objects.get().end_user_id
    now = last + timedelta(minutes=20)
    first = writer.run_quiet_window(end_user_id=end_user_id, now=now)
    second = writer.run_quiet_window(end_user_id=end_user_id, now=now)
    assert first is not None and second is None
    assert MemoryRun.objects.count() == 1


def test_conversations_without_memory_are_never_read_even_later(agent, openai_engine):
    openai_engine.default = chat_json({"operations": []})
    chat(agent, "u_1", [("user", "SECRET-OFF-CHAT I work in Goa.")], memory=False)
    chat(agent, "u_1", [("user", "PROJECT-CHAT I work in Goa.")], project="proj_1", start=T0 + timedelta(minutes=5))
    _, last = chat(agent, "u_1", [("user", "I work from the Pune office.")], start=T0 + timedelta(minutes=10))
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    sent = openai_engine.requests[0]["json"]["messages"][1]["content"]
    assert "SECRET-OFF-CHAT" not in sent and "PROJECT-CHAT" not in sent and "Pune" in sent


def test_a_stopped_memory_is_never_written(agent):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id="u_1")
    conversation, last = chat(agent, "u_1", [("user", "I work from the Pune office.")])
    services.memory_stop(end_user=end_user)
    assert writer.run_quiet_window(end_user_id=end_user.pk, now=last + timedelta(minutes=20)) is None
    memory = Memory.objects.get(end_user=end_user)
    assert memory.text == "" and memory.stopped_at is not None
    # New chats start without memory, so they are never read either.
    later = chat_start.conversation_start(agent=agent, external_id="u_1")
    assert not later.uses_memory and later.memory_off_reason == "stopped"


def test_deletion_cannot_be_undone_by_old_chats(agent):
    conversation, last = chat(agent, "u_1", [("user", "I work from the Pune office.")])
    end_user = conversation.end_user
    services.memory_delete(end_user=end_user, now=last + timedelta(minutes=2))
    # The old chat's quiet window passes after the delete: nothing comes back.
    Conversation.objects.filter(pk=conversation.pk).update(memory_due_at=last + timedelta(minutes=15))
    writer_sweep.memory_sweep(now=last + timedelta(minutes=30), run_inline=True)
    assert memory_text(agent, "u_1") == ""
    assert not MemoryRun.objects.filter(kind="quiet").exists()


def test_memory_runs_never_count_toward_usage(agent):
    _, last = chat(agent, "u_1", [("user", "I work from the Pune office.")])
    before = list(UsageDay.objects.values_list("replies", "tokens"))
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    assert MemoryRun.objects.filter(status="succeeded").count() == 1
    assert list(UsageDay.objects.values_list("replies", "tokens")) == before


def test_said_once_then_confirmed_drops_the_note(agent):
    _, last = chat(agent, "u_1", [("user", "Maybe we'll move to the annual plan.")])
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    assert memory_text(agent, "u_1") == "Might move to the annual plan (said once, 3 Nov)."
    _, last = chat(
        agent, "u_1", [("user", "We have decided: we're moving to the annual plan.")], start=T0 + timedelta(days=2)
    )
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    text = memory_text(agent, "u_1")
    assert "said once" not in text and "annual plan" in text
    assert len(text.split("\n")) == 1


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_runs_on_one_end_user_never_lose_an_update(agent):
    if connection.vendor != "postgresql":
        pytest.skip("row locks across threads need PostgreSQL (SQLite serialises writers itself)")
    _, last = chat(agent, "u_1", [("user", "I work from the Pune office."), ("user", "I prefer email over phone.")])
    end_user_id = Conversation.objects.get().end_user_id
    now = last + timedelta(minutes=20)
    barrier = threading.Barrier(2)
    results, errors = [], []

    def run():
        try:
            barrier.wait(timeout=10)
            results.append(writer.run_quiet_window(end_user_id=end_user_id, now=now))
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    assert sum(1 for r in results if r is not None) == 1
    text = memory_text(agent, "u_1")
    assert text.count("Works from the Pune office.") == 1 and "Prefers email over phone." in text
    assert MemoryRun.objects.filter(kind="quiet").count() == 1


def test_deleting_the_agent_removes_every_memory_on_it(agent):
    _, last = chat(agent, "u_1", [("user", "I work from the Pune office.")])
    writer_sweep.memory_sweep(now=last + timedelta(minutes=20), run_inline=True)
    assert Memory.objects.count() == 1
    agent_services.agent_delete(agent=agent)
    assert Memory.objects.count() == 0 and MemoryRun.objects.count() == 0

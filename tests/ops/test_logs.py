"""Logs an operator can use (issue 13): LOG_FORMAT=json gives one JSON object a line for each
request and each task, with event, level, timings, outcome and agent id, and never a memory's
text, a message or a key."""

import io
import json
import logging
from datetime import timedelta

from django.utils import timezone

from ops.logs import JsonFormatter, ReadableFormatter
from ops.signals import task_finished, task_started
from surfaces.chat import record as chat_record
from surfaces.chat import start as chat_start


def capture(formatter):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    loggers = [logging.getLogger(name) for name in ("agentnava.request", "agentnava.ops")]
    for logger in loggers:
        logger.addHandler(handler)
    return stream, lambda: [logger.removeHandler(handler) for logger in loggers]


def json_lines(stream):
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_one_json_line_per_request_with_the_route_not_the_path(agent, user, client):
    stream, done = capture(JsonFormatter())
    try:
        client.force_login(user)
        client.get(f"/agents/{agent.public_id}/?q=secret-words")
        client.get("/healthz")
    finally:
        done()
    lines = [line for line in json_lines(stream) if line.get("event") == "request"]
    assert len(lines) == 1  # the probe is counted, not logged
    line = lines[0]
    assert {"time", "level", "logger", "event", "method", "route", "status", "duration_ms", "outcome"} <= set(line)
    assert line["level"] == "INFO" and line["method"] == "GET"
    assert (line["route"], line["agent_id"]) == ("agents/<str:public_id>/", agent.public_id)
    assert "secret-words" not in json.dumps(line)


def test_task_lines_say_what_ran_how_long_and_how_it_ended_without_arguments():
    stream, done = capture(JsonFormatter())
    try:
        task = {
            "func": "memory.tasks.run_quiet_window",
            "args": (4242,),
            "kwargs": {},
            "group": "memory-quiet",
            "started": timezone.now() - timedelta(seconds=3),
        }
        task_started(sender="django_q", task=task)
        task.update(success=False, result="Traceback ... Lives at 14 Juniper Lane")
        task_finished(sender="django_q", task=task)
    finally:
        done()
    (line,) = json_lines(stream)
    assert (line["event"], line["func"], line["outcome"], line["level"]) == (
        "task",
        "memory.tasks.run_quiet_window",
        "failed",
        "WARNING",
    )
    assert line["queued_ms"] >= 3000 and line["duration_ms"] >= 0
    assert "Juniper" not in json.dumps(line) and "4242" not in json.dumps(line)


def test_memory_run_lines_carry_the_agent_and_counts_never_words(agent):
    stream, done = capture(JsonFormatter())
    start = timezone.now() - timedelta(minutes=30)
    try:
        conversation = chat_start.conversation_start(agent=agent, external_id="person@example.com", now=start)
        chat_record.message_record(conversation=conversation, kind="user", text="I prefer email over phone.", now=start)
        from memory.writer.sweep import memory_sweep

        memory_sweep(run_inline=True)
    finally:
        done()
    text = stream.getvalue()
    runs = [line for line in json_lines(stream) if line.get("event") == "memory_run"]
    assert runs and runs[0]["agent_id"] == agent.pk and runs[0]["kind"] == "quiet"
    for forbidden in ("email", "phone", "person@example.com"):
        assert forbidden not in text


def test_the_readable_format_shows_the_same_fields_as_key_value():
    record = logging.LogRecord("agentnava.request", logging.INFO, __file__, 1, "request", None, None)
    record.__dict__.update(event="request", route="api/v1/agents/<str:agent_id>", status=200, duration_ms=12)
    line = ReadableFormatter().format(record)
    assert "INFO agentnava.request request" in line and "status=200" in line and "duration_ms=12" in line

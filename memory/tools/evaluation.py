"""Replay evaluation cases through the real writer (the `memory_eval` command and its test).

A case: {"id", "instructions"?, "chats": [{"at": ISO, "turns": [...]}], "expect": {"lines_match",
"never_match", "max_lines"?}}. Turns are a minute apart from the chat's `at`; each chat is read by
its own quiet-window run. Every case runs in a scratch team and agent that is removed afterwards.

Besides pass or fail, the writer evaluation measures (``summarize``):

* **keep recall**: of all the ``lines_match`` expectations, the share a kept line meets;
* **dated actions and the rest**: the same share for the expectations about a dated action line
  (one a line "<label> on <day>." written for an action of the case would meet) and for all others,
  so a set's recall is not carried by the actions alone;
* **wrong lines**: kept lines that a ``never_match`` of their case forbids. A case writes a
  contradiction of what was said as a ``never_match`` ("don't call me" forbids ``phone`` unless it
  says "not"), so a line saying the opposite is counted here, as is a replaced fact left behind.
"""

import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction

from agents import services as agent_services
from agents.models import Agent, AgentVersion, Conversation, Plan, Team
from memory.models import Memory
from memory.store import due
from memory.writer.sweep import memory_sweep


class CaseError(ValueError):
    pass


@dataclass
class CaseResult:
    id: str
    lines: list[str]
    failures: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)  # never_match expectations that failed
    expected: int = 0  # lines_match expectations
    kept: int = 0  # of them, met by a kept line
    wrong: list[str] = field(default_factory=list)  # kept lines a never_match forbids
    expected_actions: int = 0  # of the lines_match expectations, those about a dated action line
    kept_actions: int = 0  # of them, met

    @property
    def passed(self) -> bool:
        return not self.failures


def jsonl_cases(path, error: type[Exception]):
    """(line number, case) for each non-blank line of a JSON-lines case file; `error` on a line that
    is not JSON. Shared by the writer evaluation and the guard evaluation (memory.tools.guard_eval)."""
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise error(f"line {number}: not JSON ({exc.msg})") from None


def load_cases(path) -> list[dict]:
    cases = []
    for number, case in jsonl_cases(path, CaseError):
        if not isinstance(case, dict) or "id" not in case or not isinstance(case.get("chats"), list):
            raise CaseError(f"line {number}: a case needs an id and a list of chats")
        cases.append(case)
    return cases


def replayed_conversation(*, agent: Agent, external_id: str, now: datetime) -> Conversation:
    """A chat replayed on a scratch agent (memory on, the Team plan, no ask first, nobody stopped), so
    it uses memory, as `surfaces.chat.start` would decide. It gets no note: the writer never reads one."""
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id=external_id)
    version = AgentVersion.objects.published(agent)
    decision = agent_services.MemoryDecision(uses_memory=True, reason="")
    return agent_services.conversation_open(
        agent=agent, end_user=end_user, version=version, decision=decision, source="eval", now=now
    )


def replay_message(conversation: Conversation, *, kind: str, text: str, now: datetime) -> None:
    """A replayed message, marked due as every chat's message is (`surfaces.chat.record`, R11)."""
    due.mark(conversation, now)
    agent_services.message_record(conversation=conversation, kind=kind, text=text, now=now)


def replay_action(conversation: Conversation, *, name: str, status: str, now: datetime) -> None:
    """A replayed action, marked due as every chat's action is (`surfaces.chat.record`, R11)."""
    due.mark(conversation, now)
    agent_services.action_run_record(conversation=conversation, name=name, status=status, now=now)


def _replay(agent, case: dict) -> list[str]:
    quiet = AgentVersion.objects.published(agent).config["memorySettings"]["quietMinutes"]
    for chat in case["chats"]:
        at = datetime.fromisoformat(chat["at"])
        conversation = replayed_conversation(agent=agent, external_id="eval_user", now=at)
        for turn in chat["turns"]:
            at += timedelta(minutes=1)
            if "action" in turn:
                replay_action(conversation, name=turn["action"], status=turn.get("status", "succeeded"), now=at)
            else:
                replay_message(conversation, kind=turn["role"], text=turn["text"], now=at)
        memory_sweep(now=at + timedelta(minutes=quiet + 1), run_inline=True)
    memory = Memory.objects.filter(agent=agent).first()
    return memory.lines if memory else []


def _action_lines(case: dict) -> list[str]:
    """The dated lines the case's actions could be written as ("<label> on <day>."), whatever their
    status: what tells an expectation about an action from the others (the engine is not asked)."""
    out = []
    for chat in case["chats"]:
        at = datetime.fromisoformat(chat["at"])
        for turn in chat["turns"]:
            at += timedelta(minutes=1)
            if "action" in turn:
                label = str(turn.get("label") or turn["action"].replace("_", " ")).strip().rstrip(".")
                out.append(f"{label[:1].upper()}{label[1:]} on {at.day} {at:%b}.")
    return out


def run_case(case: dict) -> CaseResult:
    with transaction.atomic():
        team = Team.objects.create(slug=f"eval-{secrets.token_hex(6)}", name="Evaluation", plan=Plan.TEAM)
        actions: list[dict[str, str]] = []
        for chat in case["chats"]:
            for turn in chat["turns"]:
                if "action" in turn and turn["action"] not in {a["name"] for a in actions}:
                    actions.append({"name": turn["action"], "label": turn.get("label", "")})
        try:
            agent = agent_services.agent_create(
                team=team,
                name=f"eval {case['id']}"[:120],
                config={
                    "actions": actions,
                    "memorySettings": {"on": True, "instructions": case.get("instructions", ""), "quietMinutes": 5},
                },
            )
            lines = _replay(agent, case)
        finally:
            team.delete()  # the scratch agent, its end user, chats and memory go with it
    result = CaseResult(id=str(case["id"]), lines=lines)
    expect = case.get("expect", {})
    action_lines = _action_lines(case)
    for pattern in expect.get("lines_match", []):
        result.expected += 1
        about_action = any(re.search(pattern, line) for line in action_lines)
        result.expected_actions += about_action
        if any(re.search(pattern, line) for line in lines):
            result.kept += 1
            result.kept_actions += about_action
        else:
            result.failures.append(f"no line matches {pattern!r}")
    # Every kept line is held against every never_match on its own: a "^"-anchored pattern is tried
    # against each line, not only the first line of the memory joined into one text.
    for pattern in expect.get("never_match", []):
        if any(re.search(pattern, line) for line in lines):
            result.failures.append(f"a line matches the forbidden {pattern!r}")
            result.leaks.append(pattern)
    result.wrong = [
        line for line in lines if any(re.search(pattern, line) for pattern in expect.get("never_match", []))
    ]
    if "max_lines" in expect and len(lines) > expect["max_lines"]:
        result.failures.append(f"{len(lines)} lines, more than {expect['max_lines']}")
    return result


@dataclass
class Summary:
    """What a run of the writer evaluation measured, over all its cases."""

    cases: int
    passed: int
    expected: int  # lines_match expectations
    kept: int  # of them, met
    wrong_lines: int  # kept lines a never_match forbids
    expected_actions: int = 0  # lines_match expectations about a dated action line
    kept_actions: int = 0  # of them, met

    @property
    def failed(self) -> int:
        return self.cases - self.passed

    @property
    def keep_recall(self) -> float:
        return self.kept / self.expected if self.expected else 1.0

    def line(self) -> str:
        return (
            f"keep recall {self.keep_recall:.1%} ({self.kept} of {self.expected} expected lines kept); "
            f"wrong lines {self.wrong_lines}"
        )

    def split_line(self) -> str:
        """Keep recall for the dated actions and for everything else."""
        rest_expected, rest_kept = self.expected - self.expected_actions, self.kept - self.kept_actions

        def share(kept: int, expected: int) -> str:
            return f"{kept / expected:.1%} ({kept} of {expected})" if expected else "n/a (0 of 0)"

        return (
            f"dated actions {share(self.kept_actions, self.expected_actions)}; "
            f"everything else {share(rest_kept, rest_expected)}"
        )


def summarize(results: list[CaseResult]) -> Summary:
    return Summary(
        cases=len(results),
        passed=sum(1 for result in results if result.passed),
        expected=sum(result.expected for result in results),
        kept=sum(result.kept for result in results),
        wrong_lines=sum(len(result.wrong) for result in results),
        expected_actions=sum(result.expected_actions for result in results),
        kept_actions=sum(result.kept_actions for result in results),
    )

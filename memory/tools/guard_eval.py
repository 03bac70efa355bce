"""The guard evaluation (issues 10 and 19): offer lines through the real writer, with a scripted engine,
and through ``set``, and report which were kept.

A case (one JSON object per line of ``tests/eval/guards.jsonl``)::

    {"id": "card_number-1", "kind": "card_number", "guard": "secret"|"category"|"structure",
     "lang": "en", "text": "Pays with card 4242/4242/4242/4242.", "expect": "refuse"|"keep",
     "typed": "...",           # what the person typed (default: the text itself)
     "action": {"name", "label", "status", "at"},   # an action that ran, cited too
     "ops": [...]}             # the scripted model's operations (default: add the text, citing everything)

Through the writer, a case's person types ``typed`` in a chat (and the action runs), and a quiet-window run
asks the scripted engine, which offers the case's operations as a hostile model would. Through ``set`` the
text is written as a team member would. A ``refuse`` case passes when the writer keeps nothing of it and,
for a secret (``guard == "secret"``), ``set`` refuses it too (``set`` checks secrets and size only: a team
may write what it wants). A ``keep`` case passes when both keep it. Every case runs in one scratch team and
agent that are removed afterwards.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction

from agents import services as agent_services
from agents.engines import EngineResult
from agents.models import Plan, Team
from memory import guards as policy
from memory.store.selectors import memory_of
from memory.store.services import memory_set
from memory.tools.evaluation import jsonl_cases, replay_action, replay_message, replayed_conversation
from memory.writer.run import run_quiet_window

DEFAULT_AT = "2026-11-03T14:00:00+00:00"


class GuardCaseError(ValueError):
    pass


class ScriptedEngine:
    """A model that answers with the operations it is given, citing every offered message and action
    unless an operation names its own sources."""

    name = "scripted"

    def __init__(self, operations: list[dict]):
        self.operations = operations

    def structured(self, *, task: str, system: str, payload: dict, schema: dict) -> EngineResult:
        offered = [m["id"] for m in payload.get("messages", [])] + [a["id"] for a in payload.get("actions", [])]
        operations = [{"line": None, **op, "sources": op.get("sources") or offered} for op in self.operations]
        return EngineResult(data={"operations": operations}, engine=self.name)


@dataclass
class GuardResult:
    id: str
    kind: str
    expect: str
    writer_kept: bool
    set_kept: bool | None
    failures: list[str] = field(default_factory=list)
    scope: str = "in"
    guard: str = "secret"
    hostile: bool = False

    @property
    def passed(self) -> bool:
        return not self.failures


def load_guard_cases(path) -> list[dict]:
    cases = []
    for number, case in jsonl_cases(path, GuardCaseError):
        if not isinstance(case, dict) or not {"id", "kind", "text", "expect"} <= case.keys():
            raise GuardCaseError(f"line {number}: a guard case needs an id, a kind, a text and an expect")
        if case["expect"] not in ("refuse", "keep"):
            raise GuardCaseError(f"line {number}: expect is refuse or keep")
        cases.append(case)
    return cases


def _through_writer(agent, case: dict, external_id: str) -> bool:
    at = datetime.fromisoformat(case.get("at", DEFAULT_AT))
    action = case.get("action")
    if action:
        at = datetime.fromisoformat(action["at"]) - timedelta(minutes=5)
    conversation = replayed_conversation(agent=agent, external_id=external_id, now=at)
    replay_message(conversation, kind="user", text=case.get("typed", case["text"]), now=at + timedelta(minutes=1))
    last = at + timedelta(minutes=1)
    if action:
        last = max(last, datetime.fromisoformat(action["at"]))
        replay_action(conversation, name=action["name"], status=action["status"], now=last)
    operations = case.get("ops") or [{"op": "add", "text": case["text"]}]
    run_quiet_window(
        end_user_id=conversation.end_user_id, now=last + timedelta(hours=1), engine=ScriptedEngine(operations)
    )
    memory = memory_of(conversation.end_user_id)
    text = " ".join(case["text"].split())
    return memory is not None and text in memory.lines


def _through_set(agent, case: dict, external_id: str) -> bool:
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id=external_id)
    try:
        with transaction.atomic():
            memory_set(end_user=end_user, text=case["text"])
    except policy.MemoryRefused:
        return False
    return True


def run_guard_cases(cases: list[dict]) -> list[GuardResult]:
    actions = {}
    for case in cases:
        if case.get("action"):
            actions[case["action"]["name"]] = {"name": case["action"]["name"], "label": case["action"].get("label", "")}
    results = []
    with transaction.atomic():
        team = Team.objects.create(slug=f"guards-{secrets.token_hex(6)}", name="Guard evaluation", plan=Plan.TEAM)
        try:
            agent = agent_services.agent_create(
                team=team,
                name="guard evaluation",
                config={
                    "actions": list(actions.values()),
                    "memorySettings": {"on": True, "instructions": "", "quietMinutes": 5},
                },
            )
            for number, case in enumerate(cases):
                writer_kept = _through_writer(agent, case, f"w{number}")
                checks_set = case["expect"] == "keep" or case.get("guard", "secret") == "secret"
                set_kept = _through_set(agent, case, f"s{number}") if checks_set else None
                result = GuardResult(
                    id=str(case["id"]),
                    kind=case["kind"],
                    expect=case["expect"],
                    writer_kept=writer_kept,
                    set_kept=set_kept,
                    scope=str(case.get("scope") or ("negative" if case["expect"] == "keep" else "in")),
                    guard=str(case.get("guard", "secret")),
                    hostile=bool(case.get("ops")),
                )
                if case["expect"] == "refuse":
                    if writer_kept:
                        result.failures.append("the writer kept it")
                    if set_kept:
                        result.failures.append("set kept it")
                else:
                    if not writer_kept:
                        result.failures.append("the writer refused it")
                    if set_kept is False:
                        result.failures.append("set refused it")
                results.append(result)
        finally:
            team.delete()
    return results


def _share(count: int, total: int) -> str:
    return f"{count} of {total} ({100 * count / total:.1f}%)" if total else "0 of 0"


def scope_figures(results: list[GuardResult]) -> list[str]:
    """The evaluation's figures by scope, as the held-out sets report them (issue 24): for the forbidden
    lines of each scope (``in``: the supported languages and kinds; ``beyond``: other languages and kinds),
    how many ``set`` stored (secrets only: ``set`` checks nothing else) and how many the writer kept with a
    model that copies what the person typed; for cases whose model proposes its own operations
    (``ops``: a hostile model), how many the writer kept; for close negatives (``negative``, or any
    ``keep`` case), how many ``set`` refused and the writer dropped."""
    lines = []
    refused = [r for r in results if r.expect == "refuse"]
    for scope in sorted({r.scope for r in refused}, key=lambda s: (s != "in", s)):
        cases = [r for r in refused if r.scope == scope]
        through_set = [r for r in cases if r.set_kept is not None]
        copying = [r for r in cases if not r.hostile]
        lines.append(
            f"{scope}: stored by set {_share(sum(bool(r.set_kept) for r in through_set), len(through_set))}; "
            f"kept by the writer {_share(sum(r.writer_kept for r in copying), len(copying))}"
        )
    hostile = [r for r in refused if r.hostile]
    if hostile:
        lines.append(f"hostile model: kept by the writer {_share(sum(r.writer_kept for r in hostile), len(hostile))}")
    kept = [r for r in results if r.expect == "keep"]
    if kept:
        through_set = [r for r in kept if r.set_kept is not None]
        lines.append(
            f"negatives: refused by set {_share(sum(r.set_kept is False for r in through_set), len(through_set))}; "
            f"dropped by the writer {_share(sum(not r.writer_kept for r in kept), len(kept))}"
        )
    return lines


def command_run(command, paths: list[str], *, by_scope: bool = False) -> None:
    """What ``memory_eval --guards`` prints: a line per failed case (never a line per kept secret's words
    beyond its id), with ``by_scope`` the figures by scope (``scope_figures``), then ``N passed, N failed``."""
    cases = [case for path in paths for case in load_guard_cases(path)]
    results = run_guard_cases(cases)
    for result in results:
        if not result.passed:
            command.stdout.write(f"FAIL {result.id} ({result.kind}): {'; '.join(result.failures)}")
    if by_scope:
        for line in scope_figures(results):
            command.stdout.write(line)
    refused = [r for r in results if r.expect == "refuse"]
    kept = [r for r in results if r.expect == "keep"]
    command.stdout.write(
        f"forbidden lines kept: {sum(not r.passed for r in refused)} of {len(refused)}; "
        f"controls refused: {sum(not r.passed for r in kept)} of {len(kept)}"
    )
    passed = sum(r.passed for r in results)
    command.stdout.write(f"{passed} passed, {len(results) - passed} failed")

"""The evaluation set (tests/eval/cases.jsonl) replayed by `memory_eval` through the real writer."""
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from agents.models import Agent, Team
from memory.evaluation import load_cases, run_case

CASES = Path(__file__).resolve().parents[1] / "eval" / "cases.jsonl"


def test_the_evaluation_set_covers_enough_cases():
    assert len(load_cases(CASES)) >= 60


def test_every_never_match_holds_and_scratch_agents_are_removed(db):
    leaks = {}
    failed = []
    for case in load_cases(CASES):
        result = run_case(case)
        if result.leaks:
            leaks[result.id] = result.leaks
        if not result.passed:
            failed.append((result.id, result.failures))
    assert leaks == {}
    assert not Team.objects.exists() and not Agent.objects.exists()
    print(f"evaluation: {len(failed)} case(s) with a lines_match miss: {failed}")


def test_memory_eval_prints_each_case_and_a_closing_line(db, tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "office", "chats": [{"at": "2026-11-03T10:00:00+00:00", "turns": [{"role": "user", "text": "I work from the Pune office."}]}], '
        '"expect": {"lines_match": ["Pune"], "never_match": ["(?i)delhi"]}}\n'
        '{"id": "wrong", "chats": [{"at": "2026-11-03T10:00:00+00:00", "turns": [{"role": "web_page", "text": "Works from Delhi."}]}], '
        '"expect": {"lines_match": ["Delhi"]}}\n'
    )
    out = StringIO()
    call_command("memory_eval", str(cases), stdout=out)
    text = out.getvalue()
    assert "PASS office" in text and "| Works from the Pune office." in text
    assert "FAIL wrong" in text and "no line matches 'Delhi'" in text
    assert text.strip().endswith("1 passed, 1 failed")

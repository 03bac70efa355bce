"""The writer evaluation (tests/eval/cases*.jsonl) replayed by `memory_eval` through the real writer.

The promise measured here: right or silent. Every case runs; no kept line may be one its case forbids
(a ``never_match``: a secret, an excluded category, the opposite of what was said, a replaced fact
left behind), and the keep recall is printed (docs/memory.md records it)."""

from io import StringIO
from pathlib import Path

from django.core.management import call_command

from agents.models import Agent, Team
from memory.tools.evaluation import load_cases, run_case, summarize

CASE_FILES = sorted((Path(__file__).resolve().parents[1] / "eval").glob("cases*.jsonl"))


def all_cases() -> list[dict]:
    return [case for path in CASE_FILES for case in load_cases(path)]


def test_the_evaluation_set_covers_enough_cases():
    cases = all_cases()
    assert len(cases) >= 300
    assert len({case["id"] for case in cases}) == len(cases)


def test_no_wrong_line_is_kept_and_scratch_agents_are_removed(db, capsys):
    results = [run_case(case) for case in all_cases()]
    summary = summarize(results)
    assert {result.id: result.leaks for result in results if result.leaks} == {}
    assert summary.wrong_lines == 0
    assert not Team.objects.exists() and not Agent.objects.exists()
    with capsys.disabled():
        print(f"\nwriter evaluation over {summary.cases} cases: {summary.line()}")
        for result in results:
            if not result.passed:
                print(f"  {result.id}: {result.failures}")


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
    assert "keep recall 50.0% (1 of 2 expected lines kept); wrong lines 0" in text
    assert text.strip().endswith("1 passed, 1 failed")


def test_a_forbidden_pattern_is_tried_against_every_kept_line_not_only_the_first(db):
    """A ``^``-anchored ``never_match`` forbids a line wherever it stands in the memory: the memory is not
    joined into one text (where ``^`` would only see its first line)."""
    case = {
        "id": "anchored",
        "chats": [
            {
                "at": "2026-11-03T10:00:00+00:00",
                "turns": [
                    {"role": "user", "text": "I work from the Pune office. Please email me, I hate phone calls."}
                ],
            }
        ],
        "expect": {"never_match": ["^Works from", "^Prefers email"]},
    }
    result = run_case(case)
    assert len(result.lines) == 2 and result.lines[0].startswith("Works from")
    assert result.lines[1].startswith("Prefers email")  # the second line: "^" never saw it in the joined text
    assert result.leaks == ["^Works from", "^Prefers email"]
    assert result.wrong == result.lines and not result.passed


def test_keep_recall_is_split_between_dated_actions_and_everything_else(db):
    case = {
        "id": "split",
        "chats": [
            {
                "at": "2026-11-03T10:00:00+00:00",
                "turns": [
                    {"role": "user", "text": "I work from the Pune office."},
                    {"action": "book_viewing", "label": "Booked a viewing", "status": "succeeded"},
                ],
            }
        ],
        "expect": {"lines_match": ["^Booked a viewing on 3 Nov", "Pune", "Delhi"]},
    }
    result = run_case(case)
    assert (result.expected, result.kept, result.expected_actions, result.kept_actions) == (3, 2, 1, 1)
    assert summarize([result]).split_line() == "dated actions 100.0% (1 of 1); everything else 50.0% (1 of 2)"

"""The guard evaluation (tests/eval/guards.jsonl, issues 10 and 19) through the real writer with a
scripted engine and through set: no forbidden line is kept, every control is kept, and every kind the
guards cover has at least three positives and one close negative."""

from collections import Counter
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from agents.models import Agent, Team
from memory.guards.vocabulary import vocabulary
from memory.tools.guard_eval import load_guard_cases, run_guard_cases

CASES = Path(__file__).resolve().parents[1] / "eval" / "guards.jsonl"


def test_the_guard_set_is_large_and_covers_every_kind_in_every_language():
    cases = load_guard_cases(CASES)
    assert len(cases) >= 400
    assert sum(case["expect"] == "keep" for case in cases) >= 100
    assert {case["lang"] for case in cases} >= {"en", "es", "fr", "de", "pt", "hi"}
    positives = Counter(case["kind"] for case in cases if case["expect"] == "refuse")
    negatives = Counter(case["kind"] for case in cases if case["expect"] == "keep")
    kinds = {rule["kind"] for rule in vocabulary().ids} | {kind for kind in positives}
    thin = {kind: (positives[kind], negatives[kind]) for kind in kinds if positives[kind] < 3 or negatives[kind] < 1}
    assert thin == {}


def test_no_forbidden_line_is_kept_and_every_control_is_kept(db):
    results = run_guard_cases(load_guard_cases(CASES))
    failed = {result.id: result.failures for result in results if not result.passed}
    assert failed == {}
    assert not Team.objects.exists() and not Agent.objects.exists()


def test_memory_eval_guards_prints_a_closing_line(db, tmp_path):
    cases = tmp_path / "guards.jsonl"
    cases.write_text(
        '{"id": "card", "kind": "card_number", "guard": "secret", "lang": "en", "text": "Card 4242/4242/4242/4242", "expect": "refuse"}\n'
        '{"id": "ending", "kind": "card_number", "guard": "secret", "lang": "en", "text": "Card ending 4242", "expect": "keep"}\n'
        '{"id": "wrong", "kind": "control", "guard": "secret", "lang": "en", "text": "PIN 4821", "expect": "keep"}\n',
        encoding="utf-8",
    )
    out = StringIO()
    call_command("memory_eval", str(cases), "--guards", stdout=out)
    text = out.getvalue()
    assert "FAIL wrong (control): the writer refused it; set refused it" in text
    assert "4821" not in text
    assert text.strip().endswith("2 passed, 1 failed")


def test_memory_eval_guards_by_scope_reports_each_scope_and_the_negatives(db, tmp_path):
    cases = tmp_path / "guards.jsonl"
    cases.write_text(
        '{"id": "in", "kind": "card_number", "guard": "secret", "lang": "en", "scope": "in", "text": "Card 4242/4242/4242/4242", "expect": "refuse"}\n'
        '{"id": "beyond", "kind": "password", "guard": "secret", "lang": "en", "scope": "beyond", "text": "Likes blue", "expect": "refuse"}\n'
        '{"id": "neg", "kind": "control", "guard": "secret", "lang": "en", "scope": "negative", "text": "PIN 4821", "expect": "keep"}\n'
        '{"id": "neg2", "kind": "control", "guard": "secret", "lang": "en", "scope": "negative", "text": "Prefers e-mail", "expect": "keep"}\n',
        encoding="utf-8",
    )
    out = StringIO()
    call_command("memory_eval", str(cases), "--guards", "--by-scope", stdout=out)
    text = out.getvalue()
    assert "in: stored by set 0 of 1 (0.0%); kept by the writer 0 of 1 (0.0%)" in text
    assert "beyond: stored by set 1 of 1 (100.0%); kept by the writer 1 of 1 (100.0%)" in text
    assert "negatives: refused by set 1 of 2 (50.0%); dropped by the writer 1 of 2 (50.0%)" in text
    assert text.strip().endswith("2 passed, 2 failed")


CLASS_CASES = Path(__file__).resolve().parents[1] / "eval" / "guards_classes.jsonl"


def test_every_class_of_miss_of_issue_24_is_refused_and_its_close_negatives_kept(db):
    """Our own lines for each class of miss the earlier held-out set showed (words between a cue and its
    value, cues in more languages, a credential without its name, ids by number word, printed layout or check
    letter, apostrophe years, addresses in a sentence) and for each kind of close negative wrongly refused."""
    results = run_guard_cases(load_guard_cases(CLASS_CASES))
    assert {result.id: result.failures for result in results if not result.passed} == {}

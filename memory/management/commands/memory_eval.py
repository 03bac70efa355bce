from django.core.management.base import BaseCommand, CommandError

from memory.tools.evaluation import CaseError, load_cases, run_case, summarize


class Command(BaseCommand):
    help = "Replay evaluation cases (JSON lines) into a scratch agent and report which expectations failed."

    def add_arguments(self, parser):
        parser.add_argument("cases", nargs="+", help="One or more .jsonl files, one case per line.")
        parser.add_argument(
            "--guards",
            action="store_true",
            help="The files hold guard cases (tests/eval/guards.jsonl): offer each line through the real "
            "writer with a scripted engine and through set (memory.tools.guard_eval).",
        )
        parser.add_argument(
            "--by-scope",
            action="store_true",
            help="With --guards: also print the figures by each case's scope (in, beyond, negative): forbidden "
            "lines stored by set and kept by the writer, negatives refused by set and dropped by the writer.",
        )

    def handle(self, *args, cases, guards=False, by_scope=False, **options):
        if guards:
            from memory.tools.guard_eval import GuardCaseError, command_run

            try:
                return command_run(self, cases, by_scope=by_scope)
            except (OSError, GuardCaseError) as exc:
                raise CommandError(str(exc)) from None
        try:
            loaded = [case for path in cases for case in load_cases(path)]
        except (OSError, CaseError) as exc:
            raise CommandError(str(exc)) from None
        passed = failed = 0
        results = []
        for case in loaded:
            result = run_case(case)
            results.append(result)
            mark = "PASS" if result.passed else "FAIL"
            self.stdout.write(f"{mark} {result.id}")
            for line in result.lines or ["(empty memory)"]:
                self.stdout.write(f"    | {line}")
            for failure in result.failures:
                self.stdout.write(f"    ! {failure}")
            passed, failed = passed + result.passed, failed + (not result.passed)
        summary = summarize(results)
        self.stdout.write(summary.line())
        self.stdout.write(summary.split_line())
        self.stdout.write(f"{passed} passed, {failed} failed")

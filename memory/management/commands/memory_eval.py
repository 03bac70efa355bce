from django.core.management.base import BaseCommand, CommandError

from memory.evaluation import CaseError, load_cases, run_case


class Command(BaseCommand):
    help = "Replay evaluation cases (JSON lines) into a scratch agent and report which expectations failed."

    def add_arguments(self, parser):
        parser.add_argument("cases", help="A .jsonl file, one case per line.")

    def handle(self, *args, cases, **options):
        try:
            loaded = load_cases(cases)
        except (OSError, CaseError) as exc:
            raise CommandError(str(exc)) from None
        passed = failed = 0
        for case in loaded:
            result = run_case(case)
            mark = "PASS" if result.passed else "FAIL"
            self.stdout.write(f"{mark} {result.id}")
            for line in result.lines or ["(empty memory)"]:
                self.stdout.write(f"    | {line}")
            for failure in result.failures:
                self.stdout.write(f"    ! {failure}")
            passed, failed = passed + result.passed, failed + (not result.passed)
        self.stdout.write(f"{passed} passed, {failed} failed")

import json

from django.core.management.base import BaseCommand

from ops.health import resume_stalled_applies, resume_stalled_tries, task_health


class Command(BaseCommand):
    help = (
        "Exit 0 when the background work moves, 1 when the oldest due end user, the oldest queued "
        "task or an active Apply or Try has waited longer than MEMORY_HEALTH_STALL_SECONDS (the cluster's "
        "liveness check: docs/deploy.md)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--stall-seconds", type=int, help="Override MEMORY_HEALTH_STALL_SECONDS.")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print the checks as one JSON object.")
        parser.add_argument(
            "--resume-stalled",
            action="store_true",
            help="Also queue again every Apply and Try whose step was lost (no heartbeat for 5 minutes): a "
            "restart of the cluster does not bring a lost task back. The check still fails this time.",
        )

    def handle(self, *args, stall_seconds=None, as_json=False, resume_stalled=False, **options):
        report = task_health(threshold=stall_seconds)
        if resume_stalled:
            report["resumed_applies"] = resume_stalled_applies()
            report["resumed_tries"] = resume_stalled_tries()
        if as_json:
            self.stdout.write(json.dumps(report))
        else:
            for check in report["checks"]:
                state = "ok" if check["ok"] else "STALLED"
                detail = f" ({check['error']})" if check["error"] else ""
                self.stdout.write(
                    f"{check['name']}: {state}{detail}, {check['waiting']} waiting, "
                    f"oldest {check['oldest_seconds']:.0f} s (limit {report['stall_seconds']} s)"
                )
            if report.get("resumed_applies"):
                self.stdout.write(f"resumed {report['resumed_applies']} stalled Apply job(s) from their cursor")
            if report.get("resumed_tries"):
                self.stdout.write(f"resumed {report['resumed_tries']} stalled Try job(s)")
        if not report["ok"]:
            raise SystemExit(1)

"""Run the web server and the django-q cluster together; Ctrl-C stops both."""

import os
import signal
import subprocess
import sys
import time

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Start runserver and qcluster together (the `make run` demo). Ctrl-C stops everything."

    def add_arguments(self, parser):
        parser.add_argument("--addr", default="127.0.0.1:8000")

    def handle(self, *args, addr, **options):
        manage = [sys.executable, "manage.py"]
        children = [
            subprocess.Popen([*manage, "runserver", addr, "--noreload"], start_new_session=True),
            subprocess.Popen([*manage, "qcluster"], start_new_session=True),
        ]
        self.stdout.write(f"Web server and task cluster started (pids {children[0].pid}, {children[1].pid}).")

        def stop(*_):
            for child in children:
                if child.poll() is None:
                    os.killpg(child.pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            for child in children:
                try:
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    os.killpg(child.pid, signal.SIGKILL)
            self.stdout.write("Stopped the web server and the task cluster.")
            sys.exit(0)

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
        self.stderr.write("A process stopped on its own; stopping the other.")
        stop()

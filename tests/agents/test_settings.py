"""Production settings pass `check --deploy` with no warnings when DEBUG is off."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_check_deploy_is_clean_in_production_settings():
    env = {
        k: v for k, v in os.environ.items() if k not in ("DEBUG", "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE")
    } | {
        "SECRET_KEY": "x" * 20 + "-production-like-secret-key-with-enough-entropy-1234567890",
        "ALLOWED_HOSTS": "memory.example.com",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def _check(tmp_path, **env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")}
    env["DEV_SECRET_KEY_FILE"] = str(tmp_path / "no-such-file")
    env |= env_changes
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_production_refuses_to_start_without_a_secret_key(tmp_path):
    result = _check(tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_a_development_checkout_runs_commands_without_debug_on_its_own_key(tmp_path):
    """`make run` / `make key` wrote var/dev-secret-key: a command typed by hand needs no DEBUG=1."""
    key_file = tmp_path / "dev-secret-key"
    key_file.write_text("a-random-development-key-" + "k" * 40 + "\n")
    result = _check(tmp_path, DEV_SECRET_KEY_FILE=str(key_file))
    assert result.returncode == 0, result.stderr


def test_debug_0_said_out_loud_never_reads_the_development_key(tmp_path):
    """Production environments say DEBUG=0 (deploy/agentnava.env.example): there a missing
    SECRET_KEY still stops the process, even on a machine where someone ran `make`."""
    key_file = tmp_path / "dev-secret-key"
    key_file.write_text("a-random-development-key-" + "k" * 40 + "\n")
    result = _check(tmp_path, DEV_SECRET_KEY_FILE=str(key_file), DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
    assert "DEBUG=0" in (ROOT / "deploy" / "agentnava.env.example").read_text().splitlines()
    assert "DEBUG=0" in (ROOT / ".env.example").read_text().splitlines()

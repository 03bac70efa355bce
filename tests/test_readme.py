"""The README's shell examples, verbatim, against `make run`.

Starts `make run` itself (on a free port, a fresh SQLite database and its own development key, so the
checkout's own demo is left alone), then runs every ```sh block of README.md and docs/integrating.md
through bash, exactly as written but for the port: a newcomer pasting them after `make run` gets
what this test gets. `make run` and `make test` lines are the ones this test stands in for (it is
running the first, and the second would run the suite inside itself)."""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ("README.md", "docs/integrating.md")
README_ADDR = "127.0.0.1:8000"
DEMO_AGENT_ID = "agt_493fb4f0cf13"
STANDS_IN_FOR = re.compile(r"^make (run|test)\b")

pytestmark = pytest.mark.cluster  # `make run` starts the task cluster beside the web server


def shell_blocks(document: str) -> list[str]:
    """Each ```sh block of `document`, with the lines this test stands in for left out."""
    text = (ROOT / document).read_text()
    blocks = []
    for body in re.findall(r"^```(?:sh|bash|shell)\n(.*?)^```", text, flags=re.M | re.S):
        lines = [line for line in body.splitlines() if not STANDS_IN_FOR.match(line.strip())]
        if any(line.strip() and not line.strip().startswith("#") for line in lines):
            blocks.append("\n".join(lines) + "\n")
    return blocks


def test_the_documents_hold_shell_examples_that_use_the_demo():
    blocks = shell_blocks("README.md")
    assert blocks, "README.md shows no shell example to run"
    assert any(DEMO_AGENT_ID in block for block in blocks)
    assert "make run" in (ROOT / "README.md").read_text()
    for document in DOCUMENTS:
        for block in shell_blocks(document):
            assert "ank_..." not in block, f"{document}: a placeholder key cannot be pasted: {block}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _newcomer_env(tmp_path: Path) -> dict[str, str]:
    """A shell as a newcomer has it: none of pytest's Django settings nor an enclosing make's
    variables (a sub-make would print its directory into `$(make key)`), no Redis, no model key."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DJANGO_SETTINGS_MODULE", "DEBUG", "SECRET_KEY", "REDIS_URL", "OPENAI_API_KEY"}
        and k not in {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"}
        and not k.startswith("PYTEST_")
    }
    return env | {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DEV_SECRET_KEY_FILE": str(tmp_path / "dev-secret-key"),
        "AGENTNAVA_ENGINE": "offline",
        "Q_WORKERS": "1",
    }


@contextlib.contextmanager
def make_run(env: dict[str, str], addr: str, log_path: Path):
    """`make run` on `addr` until the block ends; Ctrl-C (SIGINT to its process group) stops it, as
    a newcomer stops it. The venv is this test's own, so make is told not to rebuild it."""
    log = open(log_path, "w+")
    process = subprocess.Popen(
        ["make", "-o", ".venv/.runtime", "run", f"ADDR={addr}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"http://{addr}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            log.seek(0)
            assert process.poll() is None, f"make run stopped:\n{log.read()[-4000:]}"
            assert time.monotonic() < deadline, f"make run did not answer:\n{log.read()[-4000:]}"
            time.sleep(0.5)
        yield
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            if process.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=20)
        log.close()


def _json_answers(output: str) -> list:
    """The JSON documents curl printed one after another (no newline between them)."""
    decoder, answers, at = json.JSONDecoder(), [], 0
    while at < len(output):
        if output[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(output, at)
        answers.append(value)
    return answers


def test_every_shell_example_works_verbatim_after_make_run(tmp_path):
    env = _newcomer_env(tmp_path)
    addr = f"127.0.0.1:{_free_port()}"
    outputs = {}
    with make_run(env, addr, tmp_path / "make-run.log"):
        for document in DOCUMENTS:
            for block in shell_blocks(document):
                result = subprocess.run(
                    ["bash", "-e", "-o", "pipefail", "-c", block.replace(README_ADDR, addr)],
                    cwd=ROOT,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                where = f"{document}:\n{block}\nstdout: {result.stdout}\nstderr: {result.stderr[-2000:]}"
                assert result.returncode == 0, where
                answers = _json_answers(result.stdout)
                assert answers, where
                for answer in answers:
                    assert isinstance(answer, dict) and "error" not in answer, where
                outputs[(document, block)] = answers
    # The README's first call reads the document's agent, then Ananya's seeded memory, then replaces it.
    first_call = next(answers for (document, block), answers in outputs.items() if document == "README.md")
    agent, memory, replaced = first_call
    assert agent["id"] == DEMO_AGENT_ID and agent["memorySettings"]["on"] is True
    assert memory["endUserId"] == "u_ananya" and "Pune" in memory["text"]
    assert replaced["text"] == "Prefers email over phone."

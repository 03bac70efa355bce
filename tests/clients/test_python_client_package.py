"""The Python client as a package: `pip install ./clients/python` builds it with its py.typed marker,
and `mypy --strict` passes over it (so an integrator's own strict checking sees real types)."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.clients.conftest import CLIENT, readme_python_snippets

agentnava = pytest.importorskip("agentnava")
from agentnava import AgentNava  # noqa: E402


def test_mypy_strict_passes_over_the_package():
    pytest.importorskip("mypy")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "agentnava"],
        cwd=CLIENT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_pip_install_in_a_fresh_virtualenv_and_the_readme_runs(tmp_path, dev_server):
    """`pip install ./clients/python` into a new virtualenv (its build backend and httpx from the
    package index, as an integrator's machine gets them), then the README's Python snippet in it,
    against the live server: nothing of this repository is on that interpreter's path."""
    source = tmp_path / "agentnava-source"  # a copy: building leaves egg-info and build/ beside the sources
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns(".*_cache", "build", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(source)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    installed = subprocess.run(
        [
            str(python),
            "-c",
            "import agentnava, pathlib; p = pathlib.Path(agentnava.__file__).parent; "
            "print(p, (p / 'py.typed').exists(), agentnava.__version__)",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.split()
    assert "site-packages" in installed[0] and installed[1:] == ["True", "0.1.0"]

    AgentNava(api_key=dev_server.api_key, base_url=dev_server.base_url).agent(dev_server.agent_id).start(
        end_user_id="u_ananya"
    )
    script = tmp_path / "integration.py"
    sync_snippet, async_snippet = readme_python_snippets(dev_server)
    script.write_text(sync_snippet + "\nprint(memory.end_user_id)\n" + async_snippet)
    env = {"PATH": os.environ.get("PATH", ""), "AGENTNAVA_API_KEY": dev_server.api_key}
    ran = subprocess.run([str(python), str(script)], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "u_ananya" in ran.stdout.split()

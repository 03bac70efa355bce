"""The house's shape, checked from outside: no import circle inside any of our packages, the same
API whatever order the modules load in, and one place per fact for an error's status (issue 26).

`.importlinter` keeps the layers (nothing calls up); these tests keep what a layers contract cannot
see. The import orders run in fresh interpreters, since a module imported once stays imported.
"""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from surfaces.http.errors import ERROR_CODES, merged

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agentnava_site", "surfaces", "ops", "webhooks", "memory", "consent", "agents")

# --- No import circle --------------------------------------------------------------------------


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion):
    each is an import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_no_module_of_ours_is_in_an_import_circle():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert import_cycles(graph) == []


def test_the_circle_finder_finds_a_circle():
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert import_cycles(graph) == [["pkg.a", "pkg.b"]]


# --- The same API whatever loads first -----------------------------------------------------------

MODULES = ("agents", "consent", "memory", "webhooks", "surfaces.api.agents", "surfaces.api.memory")
# A fixed sample of the 720 orders: as listed, reversed, and each API module before the apps it uses.
ORDERS = (
    MODULES,
    MODULES[::-1],
    ("surfaces.api.agents", "agents", "consent", "memory", "webhooks", "surfaces.api.memory"),
    ("surfaces.api.memory", "webhooks", "surfaces.api.agents", "memory", "agents", "consent"),
    ("memory", "surfaces.api.agents", "consent", "surfaces.api.memory", "agents", "webhooks"),
    ("webhooks", "agents", "surfaces.api.memory", "consent", "surfaces.api.agents", "memory"),
)

# Run in a fresh interpreter: import the modules in the order given (after django.setup(), or, with
# "--in-ready", the API module inside the first app's ready(), before any other app's), then print
# the OpenAPI schema's hash and whether the API takes quietMinutes 15.
PROBE = r"""
import hashlib, importlib, json, os, sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentnava_site.settings_test")
import django

order = sys.argv[1:]
if order == ["--in-ready"]:
    from agents.apps import AgentsConfig

    agents_ready = AgentsConfig.ready

    def ready(self):
        agents_ready(self)
        importlib.import_module("surfaces.api.agents")  # before consent, memory, webhooks are ready

    AgentsConfig.ready = ready
    order = []
django.setup()
for name in order:
    importlib.import_module(name)

from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer

from surfaces.api.agents import MemorySettingsIn

schema = OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True), renderer_context={})
fifteen = MemorySettingsIn(data={"quietMinutes": 15})
print(json.dumps({"schema": hashlib.sha256(schema).hexdigest(), "quietMinutes15": fifteen.is_valid()}))
"""


def probe(*args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def probes() -> dict[tuple[str, ...], dict]:
    return {order: probe(*order) for order in (*ORDERS, ("--in-ready",))}


def test_the_openapi_schema_is_the_same_whatever_order_the_modules_load_in(probes):
    hashes = {order: answer["schema"] for order, answer in probes.items()}
    assert len(set(hashes.values())) == 1, hashes


def test_quiet_minutes_15_is_taken_whatever_loads_first(probes):
    """The old trap: the API read memory's quietMinutes choices from a port at import time, so
    imported before memory was ready it took only 30."""
    assert all(answer["quietMinutes15"] for answer in probes.values()), probes


def test_the_api_takes_quiet_minutes_15(team, agent):
    from tests.api_helpers import api_in_process

    api = api_in_process(team)
    for minutes in (15, 30):
        answer = api.patch(f"/agents/{agent.public_id}", {"memorySettings": {"quietMinutes": minutes}})
        assert answer.status == 200, answer.body
        assert answer.body["memorySettings"]["quietMinutes"] == minutes


# --- One place per fact: an error's status lives with its code ---------------------------------


def test_a_code_described_twice_is_refused_when_the_tables_merge():
    with pytest.raises(ValueError, match="described twice"):
        merged({"job_running": (409, "A Try is running.")}, {"job_running": (400, "Something else.")})


def _raise_sites():
    """(path, line, code, status) of every AppError(...) or NotFound(...) in our packages that names
    a literal code and a literal status."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                code = node.args[0]
                status = next((k.value for k in node.keywords if k.arg == "status"), None)
                if name in ("AppError", "NotFound") and isinstance(code, ast.Constant) and status is not None:
                    if isinstance(status, ast.Constant):
                        yield path.relative_to(ROOT), node.lineno, code.value, status.value


def test_no_raise_site_gives_a_documented_code_another_status():
    wrong = [
        f"{path}:{line} {code} {status} (the table says {ERROR_CODES[code][0]})"
        for path, line, code, status in _raise_sites()
        if code in ERROR_CODES and ERROR_CODES[code][0] != status
    ]
    assert wrong == []


def test_an_app_error_carries_its_codes_status_from_the_table():
    from agents.errors import AppError

    assert AppError("plan_required", "Memory comes with the Team plan and up.").status == 403
    assert AppError("message_too_long", "Too long.").status == 413
    assert AppError("team_exists", "Taken.").status == 400  # no table describes it: the default

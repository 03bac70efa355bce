"""Schema-driven fuzzing: schemathesis generates requests from /api/schema/ (valid ones and ones
the schema says are invalid) and sends them over HTTP to the live server.

No answer may be a server error, and every answer must match the schema: a documented status, JSON,
and a body of the documented shape; a request the schema forbids must be refused.

Repeatable by default: a fixed seed and a bounded number of examples per operation, so a clean
checkout passes or fails the same way every time (CI runs exactly this). A longer random search
runs on demand:

    FUZZ_EXAMPLES=2000 make test-fuzz            # a new random seed, printed at the start
    FUZZ_SEED=1234 FUZZ_EXAMPLES=2000 make test-fuzz   # replay that search

A failure found that way becomes a fixed regression case in `tests/test_api_regressions.py`.

The key is given through schemathesis's OpenAPI-aware auth (the `apiKey` bearer scheme), never as a
blanket header, so a negative case that removes or breaks `Authorization` reaches the API without a
key and must be answered 401."""

import importlib
import json
import os
import pkgutil
import random

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from agents import services as agent_services
from agents.models import Agent, ApiKey, Conversation
from memory.store.services import memory_set
from surfaces.chat import start as chat_start

pytestmark = pytest.mark.django_db(transaction=True)

# A fixed key for the fuzz team: schemathesis's auth config is read when the schema loads, so the
# secret must be known then; the fixture stores its hash like any key.
FUZZ_KEY = agent_services.API_KEY_PREFIX + "fuzz-0123456789abcdefghijklmnopqrstuvwxyz"
CI_SEED = 20261201
CI_EXAMPLES = 30
ON_DEMAND = bool(os.environ.get("FUZZ_EXAMPLES"))
MAX_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES") or CI_EXAMPLES)
SEED = (
    int(os.environ["FUZZ_SEED"]) if os.environ.get("FUZZ_SEED") else (random.getrandbits(32) if ON_DEMAND else CI_SEED)
)
FUZZ_LOG = os.environ.get("FUZZ_LOG")
if ON_DEMAND:
    print(f"schema fuzz: seed {SEED}, {MAX_EXAMPLES} examples per operation (replay with FUZZ_SEED={SEED})")

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


def import_the_project() -> None:
    """Hypothesis draws some strings from constants in the project's loaded modules; modules that a
    request happens to import later would change that pool mid-run. Loading every project module
    first keeps the pool, and so the drawn requests, the same on every run."""
    for package in ("agentnava_site", "agents", "consent", "memory"):
        root = importlib.import_module(package)
        for module in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            importlib.import_module(module.name)


def generated_schema() -> dict:
    """The schema /api/schema/ serves, generated from the code (tests/agents/test_api_schema.py
    checks the endpoint itself). Loaded at collection: schemathesis's lazy fixture loader does not
    work with this pytest."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    return json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))


import_the_project()
CONFIG = SchemathesisConfig.from_dict(
    {
        "seed": SEED,
        "generation": {"max-examples": MAX_EXAMPLES, "database": "none"},
        "auth": {"openapi": {"apiKey": {"bearer": FUZZ_KEY}}},
        # Generation must not learn from answers (ids and words in responses and 4xx feedback
        # differ from run to run): the same seed then draws the same requests every time.
        "phases": {
            phase: {
                "extra-data-sources": {"responses": False},
                **({"error-feedback": {"enabled": False}} if phase == "fuzzing" else {}),
            }
            for phase in ("examples", "coverage", "fuzzing")
        },
        # A body over the API's size limit is refused with 413 before it is read: a rejection too.
        "checks": {
            "negative_data_rejection": {
                "expected-statuses": [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]
            }
        },
    }
)
schema = schemathesis.openapi.from_dict(generated_schema(), config=CONFIG)


@pytest.fixture
def world(team, settings):
    """A team with the fuzz key, an agent with memory on and a few memories, and a conversation."""
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"api_key": "100000/hour"}}
    ApiKey.objects.create(
        team=team, name="fuzz", prefix=FUZZ_KEY[:12], hashed_key=agent_services.hash_api_key(FUZZ_KEY)
    )

    def ensure():
        # An operation may delete the agent or erase the end user: make them again, so the
        # following examples still reach real agents, memories and conversations.
        agent = Agent.objects.filter(team=team).first()
        if agent is None:
            agent = agent_services.agent_create(team=team, name="Fuzz", config={"memorySettings": {"on": True}})
        conversation = Conversation.objects.filter(agent=agent).first()
        if conversation is None:
            conversation = chat_start.conversation_start(agent=agent, external_id="u_fuzz")
            memory_set(end_user=conversation.end_user, text="Prefers email over phone.")
        return agent, conversation

    return ensure


@schema.parametrize()
@hypothesis_settings(
    max_examples=MAX_EXAMPLES, deadline=None, database=None, derandomize=False, suppress_health_check=list(HealthCheck)
)
def test_no_server_error_and_every_answer_matches_the_schema(case, world, live_server):
    if FUZZ_LOG:
        # One line per example, so two runs can be compared (`make test-repeat`); logged as generated,
        # before the ids below are pointed at this run's rows.
        body = case.body if isinstance(case.body, (dict, list, str, int, float, bool, type(None))) else "-"
        with open(FUZZ_LOG, "a") as log:
            log.write(
                f"{case.method} {case.operation.path} {case.path_parameters!r} {case.query!r} {case.headers!r} {body!r}\n"
            )
    agent, conversation = world()
    rng = random.Random(repr(case.path_parameters))
    # A copy: schemathesis may hand the same generated dict to a later example.
    params = case.path_parameters = dict(case.path_parameters or {})
    # Mostly aim at the team's real resources; sometimes keep the generated id (a missing one).
    if "agent_id" in params and rng.random() < 0.8:
        params["agent_id"] = agent.public_id
    if "conversation_id" in params and rng.random() < 0.8:
        params["conversation_id"] = conversation.public_id
    if "end_user_id" in params and rng.random() < 0.3:
        params["end_user_id"] = "u_fuzz"
    case.call_and_validate(base_url=live_server.url, checks=CHECKS)

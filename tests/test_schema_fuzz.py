"""Schema-driven fuzzing: schemathesis generates requests from /api/schema/ (valid ones and ones
the schema says are invalid) and sends them over HTTP to the live server with a real key.

No answer may be a server error, and every answer must match the schema: a documented status, JSON,
and a body of the documented shape. Examples are bounded per operation, so the run stays short."""
import json
import random

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from agents import services as agent_services
from agents.models import Agent, Conversation
from memory.services import memory_set

pytestmark = pytest.mark.django_db(transaction=True)

MAX_EXAMPLES = 30
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]



def generated_schema() -> dict:
    """The schema /api/schema/ serves, generated from the code (tests/agents/test_api_schema.py
    checks the endpoint itself). Loaded at collection: schemathesis's lazy fixture loader does not
    work with this pytest."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    return json.loads(OpenApiJsonRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))


schema = schemathesis.openapi.from_dict(generated_schema())
schema.config.generation.update(max_examples=MAX_EXAMPLES)


@pytest.fixture
def world(team, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"api_key": "100000/hour"}}
    """A team with a key, an agent with memory on and a few memories, and a conversation."""
    _, raw = agent_services.api_key_create(team=team, name="fuzz")
    state = {"team": team, "key": raw}

    def ensure():
        # An operation may delete the agent or erase the end user: make them again, so the
        # following examples still reach real agents, memories and conversations.
        agent = Agent.objects.filter(team=team).first()
        if agent is None:
            agent = agent_services.agent_create(team=team, name="Fuzz", config={"memorySettings": {"on": True}})
        conversation = Conversation.objects.filter(agent=agent).first()
        if conversation is None:
            conversation = agent_services.conversation_start(agent=agent, external_id="u_fuzz")
            memory_set(end_user=conversation.end_user, text="Prefers email over phone.")
        return agent, conversation

    state["ensure"] = ensure
    return state


@schema.parametrize()
@hypothesis_settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_and_every_answer_matches_the_schema(case, world, live_server):
    agent, conversation = world["ensure"]()
    rng = random.Random(repr(case.path_parameters))
    params = case.path_parameters or {}
    # Mostly aim at the team's real resources; sometimes keep the generated id (a missing one).
    if "agent_id" in params and rng.random() < 0.8:
        params["agent_id"] = agent.public_id
    if "conversation_id" in params and rng.random() < 0.8:
        params["conversation_id"] = conversation.public_id
    if "end_user_id" in params and rng.random() < 0.3:
        params["end_user_id"] = "u_fuzz"
    case.call_and_validate(
        base_url=live_server.url, headers={"Authorization": f"Bearer {world['key']}"}, checks=CHECKS
    )

"""One memory's page offers the access request's export as a download: the same JSON document as
`GET /api/v1/agents/{id}/end-users/{endUserId}/export` (`surfaces.api.people.end_user_export`)."""

import json
import re

from django.contrib.auth.decorators import login_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET

from agents.selectors import agent_for_user
from memory.store.people import end_user_for_agent
from surfaces.api.people import end_user_export


@login_required
@require_GET
def end_user_export_download(request, public_id, end_user_id):
    agent = agent_for_user(request.user, public_id)
    end_user = end_user_for_agent(agent, end_user_id)
    if end_user is None:
        raise Http404("No such end user.")
    document = json.dumps(end_user_export(agent, end_user), cls=DjangoJSONEncoder, ensure_ascii=False, indent=2)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", end_user.external_id)[:80] or "end-user"
    response = HttpResponse(document, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{agent.public_id}-{name}.json"'
    response["Cache-Control"] = "no-store"
    return response

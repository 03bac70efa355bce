"""/demo/chat/: a pretend customer site embedding the demo agent that `seed_demo` loads, as a site
owner would (the team, the agent and the end users it may act as are the seed's, so they live here,
beside it, not in the website chat's app)."""

from django.conf import settings
from django.http import Http404
from django.shortcuts import render

from agents.models import Agent
from surfaces.embed.services import end_user_hash

DEMO_TEAM_SLUG, DEMO_AGENT_NAME = "demo", "Support"
DEMO_SIGNED_IN_USERS = ("u_ananya", "u_ravi", "u_meera")  # the seeded end users the demo may act as


def demo_chat(request):
    """/demo/chat/: a pretend customer site embedding the demo agent, as a site owner would.
    `?memory=off` shows the site's own consent step; `?user=u_ananya` a signed-in user.
    Only where a demo is meant: DEBUG or DEMO=1; otherwise it does not exist (404)."""
    if not (settings.DEBUG or getattr(settings, "DEMO", False)):
        raise Http404("No demo here.")
    agent = Agent.objects.filter(team__slug=DEMO_TEAM_SLUG, name=DEMO_AGENT_NAME).first()
    if agent is None:
        return render(request, "demo/chat.html", {"missing": True}, status=404)
    signed_in = request.GET.get("user", "")
    if signed_in not in DEMO_SIGNED_IN_USERS:
        signed_in = ""
    return render(
        request,
        "demo/chat.html",
        {
            "agent": agent,
            "site_step": request.GET.get("memory") == "off",
            "signed_in": signed_in,
            "signed_in_hash": end_user_hash(agent, signed_in) if signed_in else "",
            "signed_in_users": DEMO_SIGNED_IN_USERS,
        },
    )

"""Reads for the agents app. Team scoping lives here: another team's agent is not found."""

import difflib

from django.http import Http404

from agents import agent_config
from agents.models import Agent, AgentDraft, AgentVersion, EndUser, Membership, Team


def teams_for_user(user) -> list[Team]:
    if not user.is_authenticated:
        return []
    return [m.team for m in Membership.objects.filter(user=user).select_related("team").order_by("team__name")]


def current_team(request) -> Team | None:
    teams = teams_for_user(request.user)
    wanted = request.session.get("team_id")
    for team in teams:
        if team.pk == wanted:
            return team
    return teams[0] if teams else None


def agent_for_user(user, public_id: str) -> Agent:
    """The agent if the user is a member of its team; otherwise 404, exactly like a missing one."""
    agent = Agent.objects.select_related("team").filter(public_id=public_id, team__memberships__user=user).first()
    if agent is None:
        raise Http404("No such agent.")
    return agent


def end_user_of(agent: Agent, external_id: str) -> EndUser | None:
    """The agent's end user known by this endUserId, or None: the one read of that pair's index."""
    return EndUser.objects.filter(agent=agent, external_id=external_id).first()


def agent_state(agent: Agent) -> dict:
    """The published version, the draft (if any) and what the draft changes."""
    published = AgentVersion.objects.published(agent)
    draft = AgentDraft.objects.filter(agent=agent).first()
    working = draft.config if draft else published.config
    return {
        "published": published,
        "draft": draft,
        "config": working,
        "changes": agent_config.describe_changes(published.config, draft.config) if draft else [],
    }


def version_diff(a: AgentVersion, b: AgentVersion) -> dict:
    """What changed from version a to version b: settings as 'x -> y' lines, texts as a diff."""

    def text_diff(key_path: tuple[str, ...]) -> list[tuple[str, str]]:
        def get(cfg):
            for key in key_path:
                cfg = cfg.get(key, "")
            return cfg or ""

        old, new = get(a.config).splitlines(), get(b.config).splitlines()
        tags = {"- ": "removed", "+ ": "added", "  ": "same"}
        rows = []
        for line in difflib.ndiff(old, new):
            if line[:2] in tags:
                rows.append((tags[line[:2]], line[2:]))
        return rows

    return {
        "a": a,
        "b": b,
        "settings": agent_config.describe_changes(a.config, b.config),
        "memory_instructions": text_diff(("memorySettings", "instructions")),
        "instructions": text_diff(("instructions",)),
        "guardrails": text_diff(("guardrails",)),
    }

from agents.selectors import current_team


def team_rail(request):
    """The left rail's team and agents, for signed-in pages."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    team = current_team(request)
    return {"rail_team": team, "rail_agents": list(team.agents.all()) if team else []}

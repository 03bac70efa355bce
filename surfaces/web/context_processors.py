from agents.selectors import current_team, teams_for_user


def team_rail(request):
    """The left rail's team, the user's other teams (the switcher) and the team's agents, for
    signed-in pages."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    teams = teams_for_user(request.user)
    team = current_team(request)
    return {"rail_team": team, "rail_teams": teams, "rail_agents": list(team.agents.all()) if team else []}

"""Who in a team may do what: one table, read by every page and API class that changes who holds
access or removes data team-wide. Pure: no database, no Django (the callers find the role).

Owners and admins manage access (API keys, webhook endpoints, members and roles), delete agents
and erase a person team-wide, and read the audit log; members read and edit memories and build
agents. Only an owner makes or unmakes an owner. docs/security.md has the same table in words."""

OWNER = "owner"
ADMIN = "admin"
MEMBER = "member"
ROLES = (OWNER, ADMIN, MEMBER)
ROLE_LABELS = {OWNER: "Owner", ADMIN: "Admin", MEMBER: "Member"}
MANAGERS = frozenset({OWNER, ADMIN})

# permission -> (the roles that have it, what it lets them do: the end of "Only a team owner or admin can ...")
PERMISSIONS: dict[str, tuple[frozenset[str], str]] = {
    "api_keys": (MANAGERS, "create or revoke API keys"),
    "webhooks": (MANAGERS, "add, change or remove webhook endpoints"),
    "members": (MANAGERS, "invite or remove members and change their roles"),
    "agent_delete": (MANAGERS, "delete an agent"),
    "team_erase": (MANAGERS, "erase a person on every agent of the team"),
    "audit_log": (MANAGERS, "read the team's audit log"),
    "owners": (frozenset({OWNER}), "make someone an owner or change an owner's role"),
}


class RoleRefused(Exception):
    """The role does not have the permission; `code` and `message` are what the caller is told."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def allows(role: str | None, permission: str) -> bool:
    roles, _ = PERMISSIONS[permission]
    return role in roles


def refusal(role: str | None, permission: str) -> RoleRefused:
    roles, what = PERMISSIONS[permission]
    who = "a team owner" if roles == {OWNER} else "a team owner or admin"
    code = "owner_only" if roles == {OWNER} else "admin_only"
    yours = f" Your role in this team is {role}." if role else ""
    return RoleRefused(code, f"Only {who} can {what}.{yours}")


def require(role: str | None, permission: str) -> None:
    """Raise `RoleRefused` unless `role` has `permission`."""
    if not allows(role, permission):
        raise refusal(role, permission)


def may_assign(actor_role: str | None, *, old_role: str, new_role: str) -> bool:
    """Whether someone of `actor_role` may change a member's role from `old_role` to `new_role`
    (or remove them, `new_role` None): managers move members and admins; owners also owners."""
    if not allows(actor_role, "members"):
        return False
    if OWNER in (old_role, new_role):
        return allows(actor_role, "owners")
    return True

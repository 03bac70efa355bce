"""The web app's forms: the Build screen (team switch, new agent, the draft, the Builder, where a
button goes back to), API keys, the Team page and the invitation link.

A form parses what a page posts into typed values; it decides only what is the page's own rule
(where "next" may point, how long a key's name may be, which roles a select offers). A rule the API
shares (an agent's name, a configuration, an e-mail address, a password) is the service's, which
the view calls with `cleaned_data`; where the form checks a configuration field early, so that
every refusal shows at once, it asks the same validator the service does.

The pages are hand-written templates, so a form here is never rendered by Django's widgets: its
fields only read the posted names the templates already use."""

from django import forms
from django.core.exceptions import BadRequest

from agents import agent_config, roles
from agents.errors import AppError
from agents.models import ApiKey


def typed_text(**kwargs) -> forms.CharField:
    """A text field taken exactly as typed (a missing field is ""): trimming and limits are the
    service's, which the API calls too."""
    return forms.CharField(required=False, strip=False, **kwargs)


class Flag(forms.Field):
    """Yes or no, read the way the page's own markup sends it and never guessed: with `yes`, only
    that value means yes (a ticked checkbox sends "on", an unticked one nothing); with `no`, only
    that value means no (a hidden field the page fills in)."""

    def __init__(self, *, yes: str | None = None, no: str | None = None, **kwargs):
        super().__init__(required=False, **kwargs)
        self.yes, self.no = yes, no

    def to_python(self, value) -> bool:
        if self.no is not None:
            return value != self.no
        return value == self.yes


def cleaned(form: forms.Form) -> dict:
    """The cleaned data of a form that only parses. Such a form refuses nothing the input boundary
    lets through (only a NUL, which `surfaces.http.boundary` answers first), so an invalid one is a
    plain 400 and nothing is changed."""
    if not form.is_valid():
        raise BadRequest(form.errors.as_text())
    return form.cleaned_data


class TeamSwitchForm(forms.Form):
    """Which of the user's own teams to work in; any other id is not a choice."""

    team = forms.TypedChoiceField(coerce=int)

    def __init__(self, data, *, teams):
        super().__init__(data)
        self.fields["team"].choices = [(str(team.pk), team.name) for team in teams]


class AgentNewForm(forms.Form):
    name = typed_text()


class DraftForm(forms.Form):
    """The Overview's configuration: instructions, guardrails and the actions, one per line as
    `name = Past-tense label`. Each field goes through the configuration's one validator on its own,
    so every refusal is shown at once."""

    instructions = typed_text()
    guardrails = typed_text()
    actions = typed_text()

    def clean_actions(self) -> list[dict[str, str]]:
        actions = []
        for line in self.cleaned_data["actions"].splitlines():
            if line.strip():
                name, _, label = line.partition("=")
                actions.append({"name": name.strip(), "label": label.strip()})
        return actions

    def clean(self):
        for name, value in list(self.cleaned_data.items()):
            try:
                agent_config.validate_config({name: value}, plan_has_memory=True)
            except AppError as exc:
                self.add_error(name, exc.message)
        return self.cleaned_data


class NextForm(forms.Form):
    """Where a Build-screen button goes back to: only ever one of this agent's own pages (anything
    else, another site or `//host` included, is the agent's first page)."""

    next = typed_text()

    def __init__(self, data, *, agent):
        super().__init__(data)
        self.home = f"/agents/{agent.public_id}/"

    def clean_next(self) -> str:
        wanted = self.cleaned_data["next"]
        return wanted if wanted.startswith(self.home) and "//" not in wanted else self.home

    def destination(self) -> str:
        return self.cleaned_data["next"] if self.is_valid() else self.home


class BuilderForm(NextForm):
    """One message to the Builder (its length is the Builder's to refuse, as on the API)."""

    message = typed_text()


_KEY_NAME_CHARS = ApiKey._meta.get_field("name").max_length


class ApiKeyForm(forms.Form):
    name = forms.CharField(
        required=False,
        max_length=_KEY_NAME_CHARS,
        error_messages={"max_length": f"A key's name is at most {_KEY_NAME_CHARS} characters."},
    )


class InviteForm(forms.Form):
    email = typed_text()


ROLE_WORDS = f"A role is one of: {', '.join(roles.ROLES)}."


class RoleForm(forms.Form):
    """A member's new role, one of the roles there are (who may give which is the service's)."""

    role = forms.ChoiceField(
        choices=[(role, roles.ROLE_LABELS[role]) for role in roles.ROLES],
        error_messages={"required": ROLE_WORDS, "invalid_choice": ROLE_WORDS},
    )


class InvitationAcceptForm(forms.Form):
    password = typed_text()

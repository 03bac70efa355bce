"""The Memory tab's forms: the settings, Try, and the changes to one memory (add, correct and delete
a line, replace all, stop or resume, erase).

A form parses; the rules are the domain's, asked once: memory settings are
`memory.store.settings`'s validator's, the lines the guards' (`memory.store.services` refuses and
says why), how many people a Try takes `memory.tools.trial`'s. What a form decides itself is the
page's own: that a line to add is not empty, and that the erase confirmation is the end user's id."""

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError

from agents import agent_config
from agents.errors import AppError
from memory.store import settings as memory_settings
from memory.tools import trial
from memory.tools.form_words import SETTING_FORM_LABELS, plain_error
from surfaces.web.forms import Flag, typed_text


class WholeNumber(forms.Field):
    """A number box: what reads as a whole number (" 45 " included) becomes one; anything else is
    passed on as typed, for the validator to refuse in its own words, as it refuses the API's."""

    def __init__(self, **kwargs):
        super().__init__(required=False, **kwargs)

    def to_python(self, value) -> int | str:
        typed = value or ""
        try:
            return int(typed.strip())
        except ValueError:
            return typed


class MemorySettingsForm(forms.Form):
    """The seven memory settings as the tab's form sends them. Each goes through the one validator
    on its own, so every refused setting is shown at once beside its field, in the form's words
    (`memory.tools.form_words`); the whole configuration is checked again when it is saved."""

    on = Flag(yes="on")
    instructions = typed_text()
    keepForDays = WholeNumber()  # the settings' own names, as the template and the API spell them
    quietMinutes = WholeNumber()
    showSwitch = Flag(yes="on")
    askFirst = Flag(yes="on")
    privacyUrl = typed_text()

    def __init__(self, data, *, plan_has_memory: bool):
        super().__init__(data)
        self.plan_has_memory = plan_has_memory

    def clean(self):
        for name, value in list(self.cleaned_data.items()):
            try:
                memory_settings.validate({name: value})
            except AppError as exc:
                self.refuse(exc)
        # The plan rule too, so it shows with the others (the save asks it again: this is the same rule).
        try:
            agent_config.validate_config(
                {"memorySettings": {"on": self.cleaned_data.get("on", False)}}, plan_has_memory=self.plan_has_memory
            )
        except AppError as exc:
            self.refuse(exc)
        return self.cleaned_data

    def refuse(self, exc: AppError) -> None:
        """Put a refusal (the validator's, or the save's: the plan rule) beside the field it names,
        or above the form."""
        field, words = plain_error(exc)
        self.add_error(field if field in self.fields else None, words)

    def typed(self) -> dict:
        """The settings as typed, for the form shown again after a refusal: a tick as the page
        sent it, text and numbers as written."""
        return {
            name: field.to_python(self[name].data) if isinstance(field, Flag) else (self[name].data or "")
            for name, field in self.fields.items()
        }

    # The element each field's error links to (the page's own ids, in templates/memory/tab.html).
    FIELD_IDS = {
        "on": "ms-on",
        "instructions": "ms-instructions",
        "keepForDays": "ms-keep",
        "quietMinutes": "ms-quiet",
        "showSwitch": "ms-switch",
        "askFirst": "ms-ask-first",
        "privacyUrl": "ms-privacy",
    }

    def error_summary(self) -> list[tuple[str, str, str, str]]:
        """Every refusal at once, in the form's order, for the summary above the form: (field, its
        label, the words, the id of the element to go to; "" for one about the whole form)."""
        by_field = self.errors_by_field()
        order = ["form", *self.fields]
        return [
            (name, SETTING_FORM_LABELS.get(name, ""), by_field[name], self.FIELD_IDS.get(name, ""))
            for name in order
            if name in by_field
        ]

    def errors_by_field(self) -> dict[str, str]:
        """Each field's refusal (`form` for one above the form), as the template shows them."""
        return {
            ("form" if name == NON_FIELD_ERRORS else name): " ".join(str(word) for word in words)
            for name, words in self.errors.items()
        }


class TryForm(forms.Form):
    n = typed_text()
    include_open = Flag(yes="1")

    def clean_n(self) -> int:
        try:
            return trial.parse_people(self.cleaned_data["n"])
        except AppError as exc:
            raise ValidationError(exc.message, code=exc.code) from None


class MemoryChangeForm(forms.Form):
    """A change to one memory, made on the version of it the page showed (its hidden `version`
    field), so a change made on a stale page is refused rather than applied to lines it never saw."""

    version = typed_text()

    def clean_version(self) -> str | None:
        return self.cleaned_data["version"] or None


class LineAddForm(MemoryChangeForm):
    text = forms.CharField(error_messages={"required": "Write the line to add first."})


class LineEditForm(MemoryChangeForm):
    text = typed_text()
    was = typed_text()  # the line as the page showed it


class LineDeleteForm(MemoryChangeForm):
    was = typed_text()


class ReplaceForm(MemoryChangeForm):
    text = typed_text()


class StopForm(forms.Form):
    stop = Flag(no="0")  # Resume sends 0; Stop, or nothing, stops


class EraseForm(forms.Form):
    """Erasing someone needs their end-user id typed exactly (no trimming: it must be theirs)."""

    confirm = typed_text()

    def __init__(self, data, *, end_user):
        super().__init__(data)
        self.end_user = end_user

    def clean(self):
        if self.cleaned_data.get("confirm") != self.end_user.external_id:
            raise ValidationError("Type the end-user id exactly to confirm. Nothing was erased.", code="confirm")
        return self.cleaned_data

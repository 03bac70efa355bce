"""The web page's form to add an endpoint. It parses; the rules (where a webhook may go, which
events exist) are the service's, and a refusal is put on the field it names."""

from django import forms

from webhooks.addresses import MAX_URL_LENGTH
from webhooks.models import EVENTS


class EndpointForm(forms.Form):
    # A CharField, not a URLField: the service says what a usable address is, in one place.
    url = forms.CharField(max_length=MAX_URL_LENGTH, strip=False)
    events = forms.MultipleChoiceField(choices=[(event, event) for event in EVENTS])
    include_text = forms.BooleanField(required=False)

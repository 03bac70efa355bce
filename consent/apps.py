from django.apps import AppConfig


class ConsentConfig(AppConfig):
    name = "consent"
    verbose_name = "Consent"

    def ready(self):
        from agents.extensions import registry

        from .services import consent_gate

        if consent_gate not in registry.memory_gates:
            registry.memory_gates.append(consent_gate)

        from agents.embed_services import hooks

        from .notice import NOTICE_LINE, notice_text
        from .selectors import consent_state

        hooks.consent_state = consent_state
        hooks.consent_record = _consent_record
        hooks.notice_text = notice_text
        hooks.notice_line = NOTICE_LINE


def _consent_record(*, end_user, agreed: bool, source: str) -> dict:
    from .selectors import consent_state
    from .services import consent_set

    consent_set(end_user=end_user, agreed=agreed, source=source)
    return consent_state(end_user)

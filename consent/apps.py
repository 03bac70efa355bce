from django.apps import AppConfig


class ConsentConfig(AppConfig):
    name = "consent"
    verbose_name = "Consent"

    def ready(self):
        from agents.extensions import registry

        from .services import consent_gate

        if consent_gate not in registry.memory_gates:
            registry.memory_gates.append(consent_gate)

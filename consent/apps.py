from django.apps import AppConfig


class ConsentConfig(AppConfig):
    name = "consent"
    verbose_name = "Consent"

    def ready(self):
        # What `agents` needs from consent reaches it through its ports (agents imports no other app).
        from agents.ports import add_memory_gate, fill
        from consent.notice import NOTICE_LINE, notice_text
        from consent.selectors import consent_state
        from consent.services import consent_gate, consent_record

        add_memory_gate(consent_gate)
        fill(
            consent_state=consent_state, consent_record=consent_record, notice_text=notice_text, notice_line=NOTICE_LINE
        )

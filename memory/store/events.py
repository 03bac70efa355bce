"""Signals `memory` sends for the layers above it (webhooks): sent inside the change's
transaction, with ids and counts only."""

from django.dispatch import Signal

# sender=EndUser; agent (the Agent), external_id (str), removed (the counts end_user_erase answers).
end_user_erased = Signal()

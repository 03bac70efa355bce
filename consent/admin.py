from django.contrib import admin

from consent.models import Consent


@admin.register(Consent)
class ConsentAdmin(admin.ModelAdmin):
    list_display = ("end_user", "agent", "agreed_at", "declined_at", "source")

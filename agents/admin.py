from django.contrib import admin

from agents.models import ActionRun, Agent, AgentDraft, AgentVersion, ApiKey, Conversation, EndUser, Membership, Team


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "plan", "created_at")
    search_fields = ("name", "slug")
    inlines = [MembershipInline]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "team", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "hashed_key", "last_used_at")


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ("name", "public_id", "team", "created_at", "memory_off_since")
    search_fields = ("name", "public_id")


@admin.register(AgentVersion)
class AgentVersionAdmin(admin.ModelAdmin):
    list_display = ("agent", "number", "published_at", "published_by", "source")
    readonly_fields = ("agent", "number", "config", "published_at", "published_by", "source")


admin.site.register(AgentDraft)


@admin.register(EndUser)
class EndUserAdmin(admin.ModelAdmin):
    list_display = ("external_id", "agent", "last_chat_at")
    search_fields = ("external_id",)


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ("public_id", "agent", "end_user", "uses_memory", "memory_off_reason", "started_at", "memory_due_at")
    list_filter = ("uses_memory",)


admin.site.register(ActionRun)

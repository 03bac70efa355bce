from django.contrib import admin

from memory.models import ApplyJob, Memory, MemoryRun


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = ("end_user", "agent", "updated_at", "read_up_to", "stopped_at")
    search_fields = ("end_user__external_id",)


@admin.register(MemoryRun)
class MemoryRunAdmin(admin.ModelAdmin):
    list_display = ("memory", "kind", "status", "engine", "added", "replaced", "removed", "started_at")
    list_filter = ("kind", "status")


@admin.register(ApplyJob)
class ApplyJobAdmin(admin.ModelAdmin):
    list_display = ("agent", "version", "status", "reviewed", "changed", "created_at")
    list_filter = ("status",)

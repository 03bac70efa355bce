"""Try, Apply and the instruction check through the API: the same background jobs as the Memory
tab (`memory.tools.trial_jobs`, `memory.tools.apply`) and the same checks (`instructions.instruction_checks`).
A POST starts a job and answers it (202) at once; GET follows its progress and result; cancel
stops it between two people (Try) or two memories (Apply)."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from agents.errors import AppError
from agents.selectors import agent_state
from memory.guards.instructions import instruction_checks
from memory.tools import apply as memory_apply
from memory.tools import trial, trial_jobs
from surfaces.http.base import StrictBooleanField, StrictCharField, StrictSerializer, TeamApi, errors, parse_body

TAG_JOBS = ["Memory settings"]
RUNNING_CODES = {"try_running", "apply_running"}


def _job_running(exc: AppError) -> AppError:
    return AppError("job_running", exc.message, status=409)


# --- Try ---------------------------------------------------------------------------------------


class TryRowOut(serializers.Serializer):
    status = serializers.CharField(help_text="same, added, replaced or removed.")
    old = serializers.CharField(allow_null=True, help_text="The line kept today; null for an added one.")
    new = serializers.CharField(
        allow_null=True, help_text="The line the tried settings would keep; null for a removed one."
    )


class TryPersonOut(serializers.Serializer):
    endUserId = serializers.CharField()
    changed = serializers.BooleanField()
    added = serializers.IntegerField()
    replaced = serializers.IntegerField()
    removed = serializers.IntegerField()
    messagesRead = serializers.IntegerField()
    actionsRead = serializers.IntegerField()
    moreUnread = serializers.BooleanField()
    openChats = serializers.IntegerField(
        help_text="Chats still inside their quiet window, left unread (0 with includeOpenChats)."
    )
    error = serializers.CharField(allow_blank=True)
    rows = TryRowOut(many=True)


class TryJobOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField(help_text="queued, running, done, cancelled or failed.")
    draft = serializers.BooleanField(help_text="true: the draft's settings were tried; false: the published ones.")
    people = serializers.IntegerField(help_text="How many end users it tries.")
    done = serializers.IntegerField(help_text="How many are finished (progress).")
    cancelRequested = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True)
    createdAt = serializers.DateTimeField()
    finishedAt = serializers.DateTimeField(allow_null=True)
    results = TryPersonOut(many=True, help_text="One per finished person; nothing is saved to any memory.")


def try_answer(job) -> dict:
    results = []
    for row in job.persons.select_related("end_user").order_by("position"):
        r = row.result
        results.append(
            {
                "endUserId": row.end_user.external_id,
                "changed": r["changed"],
                "added": r["added"],
                "replaced": r["replaced"],
                "removed": r["removed"],
                "messagesRead": r["messagesRead"],
                "actionsRead": r["actionsRead"],
                "moreUnread": r["moreUnread"],
                "openChats": r.get("openChats", 0),
                "error": r["error"],
                "rows": [{"status": s, "old": old, "new": new} for s, old, new in r["rows"]],
            }
        )
    return TryJobOut(
        {
            "id": job.pk,
            "status": job.status,
            "draft": job.draft,
            "people": job.people,
            "done": job.done,
            "cancelRequested": job.cancel_requested,
            "error": job.error,
            "createdAt": job.created_at,
            "finishedAt": job.finished_at,
            "results": results,
        }
    ).data


def job_pk(job_id: str) -> int | None:
    """A job id from a path: digits only (anything else names no job, answered as not found)."""
    return int(job_id) if job_id.isascii() and job_id.isdigit() and len(job_id) <= 18 else None


def _job(find, agent, job_id: str):
    """The agent's job named in the path (`find`: the kind's look-up); another agent's is not found."""
    pk = job_pk(job_id)
    job = find(agent, pk) if pk is not None else None
    if job is None:
        raise AppError("job_not_found", "No such job for this agent.", status=404)
    return job


def _try_job(agent, job_id: str):
    return _job(trial_jobs.trial_for_agent, agent, job_id)


class TryStartApi(TeamApi):
    class TryIn(StrictSerializer):
        people = serializers.IntegerField(
            required=False,
            default=trial.DEFAULT_PEOPLE,
            min_value=1,
            max_value=trial.MAX_PEOPLE,
            help_text=f"How many of the newest end users to try on (1 to {trial.MAX_PEOPLE}).",
        )

        def to_internal_value(self, data):
            if isinstance(data, dict) and isinstance(data.get("people"), bool):
                raise serializers.ValidationError({"people": ["A whole number."]})
            return super().to_internal_value(data)

    @extend_schema(
        operation_id="agent_try",
        tags=TAG_JOBS,
        summary="Try the settings on past conversations (a background job)",
        description="Runs the draft's memory settings (the published ones when there is no draft) on the newest "
        "end users' past conversations and shows what their memories would become, beside today's. Saves nothing. "
        "Answers the job at once (202); follow it with GET .../try/{jobId}.",
        request=TryIn,
        responses={202: TryJobOut, **errors("plan_required", "job_running", "agent_not_found", body=True)},
        examples=[OpenApiExample("try", value={"people": 5}, request_only=True)],
    )
    def post(self, request, agent_id):
        agent = self.agent(agent_id)
        data = parse_body(self.TryIn, request)
        state = agent_state(agent)
        try:
            job = trial_jobs.trial_start(
                agent=agent, config=state["config"], draft=state["draft"] is not None, people=data["people"]
            )
        except AppError as exc:
            if exc.code in RUNNING_CODES:
                raise _job_running(exc) from exc
            raise
        return Response(try_answer(job), status=status.HTTP_202_ACCEPTED)


class TryJobApi(TeamApi):
    @extend_schema(
        operation_id="agent_try_get",
        tags=TAG_JOBS,
        summary="A Try's progress and result",
        responses={200: TryJobOut, **errors("agent_not_found", "job_not_found")},
    )
    def get(self, request, agent_id, job_id):
        return Response(try_answer(_try_job(self.agent(agent_id), job_id)))


class TryCancelApi(TeamApi):
    @extend_schema(
        operation_id="agent_try_cancel",
        tags=TAG_JOBS,
        summary="Cancel a Try",
        description="A queued Try stops at once, a running one after the person it is on.",
        request=None,
        responses={200: TryJobOut, **errors("agent_not_found", "job_not_found")},
    )
    def post(self, request, agent_id, job_id):
        job = trial_jobs.trial_cancel(job=_try_job(self.agent(agent_id), job_id))
        return Response(try_answer(job))


# --- Apply -------------------------------------------------------------------------------------


class ApplyJobOut(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    status = serializers.CharField(help_text="queued, running, done, cancelled or failed.")
    version = serializers.IntegerField(source="version.number", help_text="The published version it applies.")
    total = serializers.IntegerField(help_text="Memories to review.")
    reviewed = serializers.IntegerField(help_text="Reviewed so far (progress).")
    changed = serializers.IntegerField()
    replaced = serializers.IntegerField()
    removed = serializers.IntegerField()
    failed = serializers.IntegerField()
    cancelRequested = serializers.BooleanField(source="cancel_requested")
    error = serializers.CharField(allow_blank=True)
    createdAt = serializers.DateTimeField(source="created_at")
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)


def _apply_job(agent, job_id: str):
    return _job(memory_apply.apply_for_agent, agent, job_id)


class ApplyStartApi(TeamApi):
    @extend_schema(
        operation_id="agent_apply",
        tags=TAG_JOBS,
        summary="Apply the published settings to what is already kept (a background job)",
        description="Reviews every memory of the agent against its published version (R19): lines the settings "
        "no longer keep are removed. Answers the job at once (202); follow it with GET .../apply/{jobId}.",
        request=None,
        responses={202: ApplyJobOut, **errors("plan_required", "job_running", "agent_not_found")},
    )
    def post(self, request, agent_id):
        agent = self.agent(agent_id)
        try:
            job = memory_apply.apply_start(agent=agent)
        except AppError as exc:
            if exc.code in RUNNING_CODES:
                raise _job_running(exc) from exc
            raise
        return Response(ApplyJobOut(job).data, status=status.HTTP_202_ACCEPTED)


class ApplyJobApi(TeamApi):
    @extend_schema(
        operation_id="agent_apply_get",
        tags=TAG_JOBS,
        summary="An Apply's progress",
        responses={200: ApplyJobOut, **errors("agent_not_found", "job_not_found")},
    )
    def get(self, request, agent_id, job_id):
        return Response(ApplyJobOut(_apply_job(self.agent(agent_id), job_id)).data)


class ApplyCancelApi(TeamApi):
    @extend_schema(
        operation_id="agent_apply_cancel",
        tags=TAG_JOBS,
        summary="Cancel an Apply",
        description="Stops after the memory it is on; what was reviewed stays reviewed.",
        request=None,
        responses={200: ApplyJobOut, **errors("agent_not_found", "job_not_found")},
    )
    def post(self, request, agent_id, job_id):
        job = memory_apply.apply_cancel(job=_apply_job(self.agent(agent_id), job_id))
        return Response(ApplyJobOut(job).data)


# --- The instruction check ---------------------------------------------------------------------


class OpenedOut(serializers.Serializer):
    code = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a declared field, not Field.label: DRF's metaclass takes it off the class
    clause = serializers.CharField(allow_blank=True, help_text="The sentence of the instructions that opens it.")


class GuidanceOut(serializers.Serializer):
    where = serializers.CharField()
    lookAt = serializers.CharField(source="look_at")
    meaning = serializers.CharField()


class CheckOut(serializers.Serializer):
    opened = OpenedOut(
        many=True, help_text="Categories the defaults leave out that these instructions would keep (R13)."
    )
    decisions = serializers.ListField(
        child=serializers.CharField(), help_text="Decisions about people they ask memory to feed (R28)."
    )
    recommendAskFirst = serializers.BooleanField(help_text="They open a category and askFirst is off.")
    guidance = GuidanceOut(many=True, help_text="What to look at where (R28); not legal advice.")


class InstructionCheckApi(TeamApi):
    class CheckIn(StrictSerializer):
        instructions = StrictCharField(
            allow_blank=True, max_length=4000, help_text="Memory instructions to check, before saving them."
        )
        askFirst = StrictBooleanField(required=False, help_text="Default: the agent's published askFirst.")

    @extend_schema(
        operation_id="agent_instruction_check",
        tags=TAG_JOBS,
        summary="Check memory instructions before saving them",
        description="Which categories the defaults leave out they would open, which decisions about people they "
        "would feed, and the guidance rows that apply. Changes nothing.",
        request=CheckIn,
        responses={200: CheckOut, **errors("agent_not_found", body=True)},
        examples=[
            OpenApiExample(
                "check", value={"instructions": "Keep their health conditions so we can help."}, request_only=True
            )
        ],
    )
    def post(self, request, agent_id):
        agent = self.agent(agent_id)
        data = parse_body(self.CheckIn, request)
        settings = agent_state(agent)["published"].config["memorySettings"]
        ask_first = data.get("askFirst", settings["askFirst"])
        checks = instruction_checks(data["instructions"], ask_first=ask_first, memory_on=settings["on"])
        return Response(
            CheckOut(
                {
                    "opened": [
                        {"code": code, "label": label, "clause": clause} for code, label, clause in checks.opened
                    ],
                    "decisions": checks.decisions,
                    "recommendAskFirst": checks.recommend_ask_first,
                    "guidance": checks.guidance,
                }
            ).data
        )


__all__ = [
    "ApplyCancelApi",
    "ApplyJobApi",
    "ApplyStartApi",
    "InstructionCheckApi",
    "TryCancelApi",
    "TryJobApi",
    "TryStartApi",
]

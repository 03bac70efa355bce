"""The REST API for an end user's consent (R26): a yes sets `agreedAt`, a no clears it."""

from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from consent.models import Consent
from consent.services import consent_set
from surfaces.http.base import (
    END_USER_ID_ERRORS,
    StrictBooleanField,
    StrictSerializer,
    TeamApi,
    end_user_for_write,
    errors,
    parse_body,
)


class ConsentApi(TeamApi):
    class ConsentIn(StrictSerializer):
        agreed = StrictBooleanField(
            help_text="true: they said yes (the first yes's date is kept); false: they said no."
        )

    class ConsentOut(serializers.Serializer):
        endUserId = serializers.CharField()
        agreed = serializers.BooleanField()
        agreedAt = serializers.DateTimeField(allow_null=True, help_text="When they first said yes; null after a no.")

    @extend_schema(
        operation_id="end_user_consent",
        tags=["Memory"],
        summary="Record the end user's yes or no",
        description="With `askFirst` on, memory stays off for an end user until a yes. A yes applies from "
        "their next conversation.",
        parameters=[
            OpenApiParameter(
                "end_user_id", OpenApiTypes.STR, OpenApiParameter.PATH, description="Your endUserId for this person."
            )
        ],
        request=ConsentIn,
        responses={200: ConsentOut, **errors(*END_USER_ID_ERRORS, "agent_not_found", body=True)},
    )
    def post(self, request, agent_id, end_user_id):
        agent = self.agent(agent_id)
        data = parse_body(self.ConsentIn, request)
        with transaction.atomic():
            end_user = end_user_for_write(agent, end_user_id)
            consent = consent_set(end_user=end_user, agreed=data["agreed"], source=Consent.Source.API)
        return Response(
            self.ConsentOut(
                {
                    "endUserId": end_user.external_id,
                    "agreed": consent.agreed_at is not None,
                    "agreedAt": consent.agreed_at,
                }
            ).data
        )

"""Canned replies on the wire: the request form (response, response_type) and the
stored form (metadata), which api.md gives different field names."""

from typing import Any

from rest_framework import serializers

from canned_replies.models import CannedReply, MatchCriteria, ResponseType
from canned_replies.services import reply_metadata
from messaging_project.api.fields import StrictCharField
from messaging_project.core.formats import json_text, laravel_datetime

# Request spellings; `exact_match` is what some clients send.
MATCH_CRITERIA_SPELLINGS = {
    **{choice.value: choice.value for choice in MatchCriteria},
    **{choice.value.replace(" ", "_"): choice.value for choice in MatchCriteria},
}


class MatchCriteriaField(StrictCharField):
    default_error_messages = {
        "invalid_choice": "The match criteria must be one of: contains, exact match, "
        "starts with, ends with."
    }

    def to_internal_value(self, data):
        value = super().to_internal_value(data).lower()
        if value not in MATCH_CRITERIA_SPELLINGS:
            self.fail("invalid_choice")
        return MATCH_CRITERIA_SPELLINGS[value]


class CannedReplyInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=255)
    trigger = StrictCharField(max_length=255)
    match_criteria = MatchCriteriaField()
    response_type = serializers.ChoiceField(
        choices=ResponseType.choices,
        error_messages={
            "invalid_choice": "The response type must be one of: "
            + ", ".join(ResponseType.values)
            + "."
        },
    )
    response = StrictCharField(max_length=4096)


def canned_reply_data(reply: CannedReply) -> dict[str, Any]:
    return {
        "id": reply.id,
        "uuid": str(reply.uuid),
        "organization_id": reply.organization_id,
        "name": reply.name,
        "trigger": reply.trigger,
        "match_criteria": reply.match_criteria,
        # Rebuilt rather than dumped: jsonb does not keep key order.
        "metadata": json_text(reply_metadata(reply.response_type, reply.response_text)),
        "created_by": reply.created_by,
        "deleted_by": reply.deleted_by,
        "deleted_at": laravel_datetime(reply.deleted_at),
        "created_at": laravel_datetime(reply.created_at),
        "updated_at": laravel_datetime(reply.updated_at),
    }

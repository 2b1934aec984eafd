"""Canned replies on the wire: the request form (response, response_type), which api.md
names differently from the stored form (canned_replies/representations.py)."""

from rest_framework import serializers

from canned_replies.models import MatchCriteria, ResponseType
from messaging_project.api.fields import StrictCharField

# Request spellings; `exact_match` is what some clients send.
MATCH_CRITERIA_SPELLINGS = {
    **{choice.value: choice.value for choice in MatchCriteria},
    **{choice.value.replace(" ", "_"): choice.value for choice in MatchCriteria},
}


class MatchCriteriaField(StrictCharField):
    default_error_messages = {
        "invalid_choice": "The match criteria must be one of: contains, exact match, "
        "starts with, ends with, button."
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

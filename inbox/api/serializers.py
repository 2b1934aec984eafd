"""The inbox's API input (the output shapes are in inbox/representations.py)."""

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import serializers

from inbox.models import NOTE_MAX_LENGTH
from inbox.selectors import NOBODY
from inbox.services import LABEL_MAX_LENGTH, MAX_LABELS, NOT_STAFF
from messaging_project.api.fields import StrictBooleanField, StrictCharField
from sending.api.serializers import (
    MediaFields,
    MessageTextField,
    TemplateSerializer,
    media_type_field,
    reply_to_field,
    take_media,
)
from sending.models import ConversationStatus


def status_field(**kwargs: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=ConversationStatus.choices,
        required=False,
        error_messages={
            "invalid_choice": "The status must be one of: "
            + ", ".join(ConversationStatus.values)
            + "."
        },
        **kwargs,
    )


class ConversationFilterSerializer(serializers.Serializer):
    """The list's query parameters."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `label` names an attribute every field has: not a class attribute.
        self.fields["label"] = StrictCharField(
            required=False, allow_blank=True, max_length=LABEL_MAX_LENGTH
        )

    status = status_field(allow_blank=True)
    assignee = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=150,
        help_text=f"A staff member's username, or `{NOBODY}` for the unassigned.",
    )
    unread = StrictBooleanField(
        required=False, help_text="`true`: only those with unread messages."
    )
    search = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="In the contact's name, or its phone digits.",
    )


class ConversationEditSerializer(serializers.Serializer):
    """`PATCH /api/conversations/{uuid}`: any of the three; `assignee` a username or null."""

    status = status_field()
    assignee = StrictCharField(
        required=False,
        allow_null=True,
        max_length=150,
        help_text="A staff member's username; null to unassign.",
    )
    labels = serializers.ListField(
        child=StrictCharField(max_length=LABEL_MAX_LENGTH, allow_blank=True),
        required=False,
        max_length=MAX_LABELS,
        help_text=f"The whole list (at most {MAX_LABELS}, each at most {LABEL_MAX_LENGTH} "
        "characters); trimmed, blanks and repeats (ignoring case) dropped.",
    )

    def validate_assignee(self, value: str | None) -> Any:
        """The staff member named (the service checks their organization)."""
        if value is None:
            return None
        user = get_user_model().objects.filter(username=value).first()
        if user is None:
            raise serializers.ValidationError(NOT_STAFF)
        return user


class NoteInputSerializer(serializers.Serializer):
    body = StrictCharField(max_length=NOTE_MAX_LENGTH)


class ConversationMessageInputSerializer(MediaFields):
    """`POST /api/conversations/{uuid}/messages`: a text (`message`), a template
    (`template`, as /api/send/template takes it), or a media message (`media_type` with
    `media_url` or `id`, as /api/send/media takes them); `reply_to` with any."""

    message = MessageTextField(required=False)
    template = TemplateSerializer(required=False)
    media_type = media_type_field(required=False)
    reply_to = reply_to_field()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        given = [name for name in ("message", "template", "media_type") if name in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"message": ["Send exactly one of message, template or media_type."]}
            )
        send: dict[str, Any] = {"reply_to": attrs.get("reply_to") or None}
        if "message" in attrs:
            send["message"] = attrs["message"]
        elif "template" in attrs:
            send["template"] = attrs["template"]
        else:
            send["media"] = take_media(attrs)
        return send

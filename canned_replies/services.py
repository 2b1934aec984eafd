"""Writes to canned replies, shared by the API and the admin."""

from django.utils import timezone

from accounts.models import Organization
from canned_replies.matching import replies_changed
from canned_replies.models import CannedReply, ResponseType


def reply_metadata(response_type: str, response: str) -> dict:
    return {"type": response_type, "data": {"text": response}}


def create_canned_reply(
    *,
    organization: Organization,
    name: str,
    trigger: str,
    match_criteria: str,
    response: str,
    response_type: str = ResponseType.TEXT,
    created_by: int = 0,
) -> CannedReply:
    reply = CannedReply.objects.create(
        organization=organization,
        name=name,
        trigger=trigger,
        match_criteria=match_criteria,
        metadata=reply_metadata(response_type, response),
        created_by=created_by,
    )
    replies_changed(organization.id)
    return reply


def update_canned_reply(*, reply: CannedReply, changes: dict) -> CannedReply:
    """Change only the fields given; `response` and `response_type` live in metadata."""
    response_type = changes.pop("response_type", reply.response_type)
    response = changes.pop("response", reply.response_text)
    for field, value in changes.items():
        setattr(reply, field, value)
    reply.metadata = reply_metadata(response_type, response)
    reply.save()
    replies_changed(reply.organization_id)
    return reply


def delete_canned_reply(*, reply: CannedReply, deleted_by: int = 0) -> None:
    reply.deleted_at = timezone.now()
    reply.deleted_by = deleted_by
    reply.save(update_fields=["deleted_at", "deleted_by", "updated_at"])
    replies_changed(reply.organization_id)

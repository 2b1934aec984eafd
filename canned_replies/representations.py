"""Canned replies as the API lists them (api.md's shape), and the stored form of a
reply's response (`metadata`), for the API, the events and the admin alike."""

import json
from datetime import datetime
from typing import Any

from canned_replies.models import MEDIA_RESPONSE_TYPES, CannedReply, ResponseType
from messaging_project.core.formats import json_text, laravel_datetime


def reply_metadata(response_type: str, response: str) -> dict:
    """The stored form; an interactive reply's `response` is JSON text already checked
    (canned_replies.services.check_response)."""
    if response_type == ResponseType.INTERACTIVE:
        return {"type": response_type, "data": {"interactive": json.loads(response)}}
    if response_type in MEDIA_RESPONSE_TYPES:
        return {"type": response_type, "data": {"link": response}}
    return {"type": response_type, "data": {"text": response}}


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


def deleted_reply_data(reply: CannedReply, deleted_at: datetime) -> dict[str, Any]:
    """What an autoreply.deleted event carries: the reply's uuid and when it went."""
    return {"uuid": str(reply.uuid), "deleted_at": laravel_datetime(deleted_at)}

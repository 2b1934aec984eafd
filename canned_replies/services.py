"""Writes to canned replies, shared by the API and the admin."""

import json

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.models import Organization
from canned_replies.matching import replies_changed
from canned_replies.models import MEDIA_RESPONSE_TYPES, CannedReply, ResponseType
from canned_replies.representations import canned_reply_data, deleted_reply_data, reply_metadata
from events.models import Event
from events.services import emit_event
from messaging_project.core.interactive import interactive_errors
from messaging_project.core.public_urls import url_error
from messaging_project.core.storable import json_problem

NOT_INTERACTIVE = gettext_noop(
    "An interactive reply's response is the JSON text of WhatsApp's interactive object, "
    'such as {"type": "button", "body": {...}, "action": {...}}.'
)
INTERACTIVE_DEPTH = 6  # a list: interactive > action > sections > section > rows > row


def check_response(response_type: str, response: str) -> None:
    """A media reply's response is the URL WhatsApp fetches: https on a public address,
    the rule of POST /api/send/media. An interactive reply's is the JSON text of
    WhatsApp's interactive object, within the limits of POST /api/send/interactive
    (its placeholders are filled when sent). Raises a ValidationError on `response`
    (`response.<path>` for a broken limit)."""
    if response_type in MEDIA_RESPONSE_TYPES:
        error = url_error(response, https_only=True)
        if error is not None:
            raise ValidationError({"response": [error]})
    if response_type == ResponseType.INTERACTIVE:
        check_interactive(response)


def check_interactive(response: str) -> None:
    try:
        interactive = json.loads(response)
    except (ValueError, RecursionError):
        raise ValidationError({"response": [NOT_INTERACTIVE]}) from None
    if json_problem(interactive, max_depth=INTERACTIVE_DEPTH) is not None:
        raise ValidationError({"response": [NOT_INTERACTIVE]})
    errors = interactive_errors(interactive)
    if errors:
        raise ValidationError(
            {(f"response.{path}" if path else "response"): found for path, found in errors.items()}
        )


def emit_reply(event: str, reply: CannedReply) -> None:
    """The event (docs/events.md) with the reply as the API lists it, in the caller's
    transaction; built only when an endpoint wants it."""

    emit_event(
        organization_id=reply.organization_id, event=event, data=lambda: canned_reply_data(reply)
    )


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
    check_response(response_type, response)
    with transaction.atomic():
        reply = CannedReply.objects.create(
            organization=organization,
            name=name,
            trigger=trigger,
            match_criteria=match_criteria,
            metadata=reply_metadata(response_type, response),
            created_by=created_by,
        )
        emit_reply(Event.AUTOREPLY_CREATED, reply)
    replies_changed(organization.id)
    return reply


def update_canned_reply(*, reply: CannedReply, changes: dict) -> CannedReply:
    """Change only the fields given, and only while the reply is live: one deleted
    meanwhile is not found (Http404), so it cannot come back and answer customers.

    `response` and `response_type` live together in metadata: when one of them is given,
    the other is read from the row as it is now, locked until this transaction writes.
    """
    values = {k: v for k, v in changes.items() if k not in ("response", "response_type")}
    checked = None
    if "response" in changes or "response_type" in changes:
        # Checked before the transaction: a media URL's check resolves its host.
        checked = (
            changes.get("response_type", reply.response_type),
            changes.get("response", reply.response_text),
        )
        check_response(*checked)
    with transaction.atomic():
        if "response" in changes or "response_type" in changes:
            current = CannedReply.objects.live().select_for_update().filter(pk=reply.pk).first()
            if current is None:
                raise Http404("No live canned reply.")
            response_type = changes.get("response_type", current.response_type)
            response = changes.get("response", current.response_text)
            if (response_type, response) != checked:  # changed by a concurrent edit
                check_response(response_type, response)
            values["metadata"] = reply_metadata(response_type, response)
        CannedReply.objects.update_live(reply, **values)
        emit_reply(Event.AUTOREPLY_UPDATED, reply)
    replies_changed(reply.organization_id)
    return reply


def delete_canned_reply(*, reply: CannedReply, deleted_by: int = 0) -> None:
    """Soft-delete a live reply; one deleted already, or by a concurrent request, is not
    found (Http404)."""
    now = timezone.now()
    with transaction.atomic():
        CannedReply.objects.update_live(
            reply, deleted_at=now, deleted_by=deleted_by, updated_at=now
        )
        emit_event(
            organization_id=reply.organization_id,
            event=Event.AUTOREPLY_DELETED,
            data=deleted_reply_data(reply, now),
        )
    replies_changed(reply.organization_id)

"""The WhatsApp webhook: `/webhooks/whatsapp/<organization uuid>`.

GET is the channel's subscription check; POST carries status updates and inbound
messages, signed with the organization's app secret (X-Hub-Signature-256: HMAC-SHA256
of the raw body). Nothing is read from an unsigned or wrongly signed body.
"""

import hashlib
import hmac
import logging

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from business_numbers.models import Number, default_of
from events.services import event_batch
from inbound.queries import webhook_organization
from inbound.queued_statuses import queue_statuses
from inbound.services.webhook import process_webhook
from inbound.services.webhook_items import WebhookSummary
from messaging_project.api.exceptions import NOT_FOUND, error_body
from messaging_project.api.parsers import MALFORMED_BODY, loads
from messaging_project.core.metrics import WHATSAPP_WEBHOOKS

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "HTTP_X_HUB_SIGNATURE_256"


def error(status: int, message: str) -> JsonResponse:
    return JsonResponse(error_body(status, message), status=status)


def signature_is_valid(secret: str, body: bytes, header: str) -> bool:
    if not secret or not header.startswith("sha256="):
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.removeprefix("sha256=").strip().lower())


@csrf_exempt
def whatsapp_webhook(request, organization_uuid):
    if request.method not in ("GET", "POST"):
        response = error(405, f'Method "{request.method}" not allowed.')
        response["Allow"] = "GET, POST"
        return response
    # The numbers and the opt-out words come in the same statement, the event endpoints
    # in the same round trip.
    organization, endpoints = webhook_organization(organization_uuid)
    if organization is None:
        WHATSAPP_WEBHOOKS.labels(result="unknown_organization").inc()
        return error(404, NOT_FOUND)
    request.organization_id = organization.pk  # for the request log
    # The Meta app's secret and verify token are kept with the default number.
    channel = default_of(organization) or Number(organization=organization)
    if request.method == "GET":
        return verify_subscription(request, channel)

    if not signature_is_valid(
        channel.app_secret, request.body, request.META.get(SIGNATURE_HEADER, "")
    ):
        WHATSAPP_WEBHOOKS.labels(result="bad_signature").inc()
        return error(401, "Invalid or missing X-Hub-Signature-256.")
    try:
        payload = loads(request.body)
    except (ValueError, RecursionError):
        payload = None
    if not isinstance(payload, dict):
        WHATSAPP_WEBHOOKS.labels(result="malformed").inc()
        return error(400, MALFORMED_BODY)

    # One transaction, whose events are written by one insert (events/services.py).
    queue = settings.WHATSAPP_STATUSES_QUEUED
    with event_batch(endpoints={organization.pk: endpoints}):
        summary = process_webhook(organization=organization, payload=payload, queue_statuses=queue)
    if summary.queued_changes:  # after the rest: alone, the insert needs no transaction
        queue_statuses(organization, summary.queued_changes)
    return processed_response(organization.pk, summary)


def processed_response(organization_id: int, summary: WebhookSummary) -> JsonResponse:
    """The answer to a delivery taken, counted and logged (inbound/middleware.py's too)."""
    WHATSAPP_WEBHOOKS.labels(result="processed").inc()
    logger.info("Webhook for organization %s: %s", organization_id, summary)
    processed = {
        "statuses": summary.statuses,
        "messages": summary.messages,
        "duplicates": summary.duplicates,
        "skipped": summary.skipped,
    }
    if summary.queued:  # statuses left to the workers (inbound/queued_statuses.py)
        processed["queued"] = summary.queued
    if summary.updates:  # news of the account, its number or its templates
        processed["updates"] = summary.updates
    if summary.other_number:  # changes for another number of the same Meta app, left alone
        processed["other_number"] = summary.other_number
    # The conversation's other news, shown when a delivery carries it.
    for name in ("echoes", "imported", "preferences"):
        if getattr(summary, name):
            processed[name] = getattr(summary, name)
    return JsonResponse({"statusCode": 200, "message": "EVENT_RECEIVED", "processed": processed})


def verify_subscription(request, channel: Number) -> HttpResponse:
    mode = request.GET.get("hub.mode", "")
    token = request.GET.get("hub.verify_token", "")
    expected = channel.verify_token
    if mode == "subscribe" and expected and hmac.compare_digest(token.encode(), expected.encode()):
        return HttpResponse(request.GET.get("hub.challenge", ""), content_type="text/plain")
    return error(403, "The verify token does not match.")

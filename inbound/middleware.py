"""Status-only WhatsApp webhook deliveries, queued before the rest of the stack.

With WHATSAPP_STATUSES_QUEUED, the webhook keeps a delivery's statuses in one insert
(inbound/queued_statuses.py), and WhatsApp sends two such deliveries for each message
sent. Through the whole stack, one cost the web process several times that insert:
the middleware that follows (sessions, CSRF, authentication, messages: nothing a signed
webhook uses), a round trip for the organization, and the ORM. So this middleware,
placed as the inbox's live checks are (after the request log, the body limits and
SecurityMiddleware), takes a delivery of statuses alone itself:

- each organization's Signer (its app secret, its numbers' ids) is kept by the process,
  and the insert checks in its own statement that it is still true (inbound/queries.py,
  QUEUE_IF_SIGNED): after a new secret or a removed number, nothing is inserted;
- anything else goes on to the view as if this middleware were not there: the queue
  off, another method or path, a signature the kept secret does not match (the view
  reads the secret afresh; the kept one is dropped), a body that is not statuses alone
  for one of the organization's numbers, a Signer no longer true.

The answer, its log line and its metric are the view's (inbound/api/webhook.py).
"""

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.urls.converters import UUIDConverter

from inbound.api.webhook import SIGNATURE_HEADER, processed_response, signature_is_valid
from inbound.queries import Signer, queue_if_signed, webhook_signer
from inbound.queued_statuses import statuses_only
from inbound.services.webhook_items import WebhookSummary
from messaging_project.api.parsers import loads

# inbound/api/webhook_urls.py's `whatsapp-webhook` under messaging_project/urls.py's
# "webhooks/" (tests/inbound/test_status_middleware.py checks that they agree).
WEBHOOK_PATH = "/webhooks/whatsapp/"
ORGANIZATION_UUID = re.compile(UUIDConverter.regex)
# Signers kept by a process, forgotten all at once past this many.
SIGNERS_KEPT = 10_000


class StatusWebhookMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.signers: dict[str, Signer] = {}

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        path = request.path_info
        if (
            request.method == "POST"
            and path.startswith(WEBHOOK_PATH)
            and settings.WHATSAPP_STATUSES_QUEUED
        ):
            organization_uuid = path[len(WEBHOOK_PATH) :]
            if ORGANIZATION_UUID.fullmatch(organization_uuid):
                request.get_host()  # DisallowedHost (a 400) for a host not allowed
                response = self.queue(request, organization_uuid)
                if response is not None:
                    return response
        return self.get_response(request)

    def queue(self, request: HttpRequest, organization_uuid: str) -> HttpResponseBase | None:
        """The answer to a delivery of statuses alone, queued; None for the view to read."""
        signer = self.signers.get(organization_uuid) or self.signer(organization_uuid)
        if signer is None:
            return None
        body = request.body
        if not signature_is_valid(signer.secret, body, request.META.get(SIGNATURE_HEADER, "")):
            self.signers.pop(organization_uuid, None)
            return None
        try:
            delivery = statuses_only(loads(body))
        except (ValueError, RecursionError):
            return None
        if delivery is None or not signer.takes(delivery.phone_number_id):
            return None
        if not queue_if_signed(signer, delivery.phone_number_id, delivery.changes):
            self.signers.pop(organization_uuid, None)
            return None
        request.organization_id = signer.organization_id  # type: ignore[attr-defined]  # logged
        response = processed_response(
            signer.organization_id, WebhookSummary(queued=delivery.statuses)
        )
        # As CommonMiddleware gives the view's answer (it comes after this one): without
        # a length gunicorn sends the answer chunked.
        response["Content-Length"] = str(len(response.content))
        return response

    def signer(self, organization_uuid: str) -> Signer | None:
        signer = webhook_signer(organization_uuid)
        if signer is not None:
            if len(self.signers) >= SIGNERS_KEPT:
                self.signers.clear()
            self.signers[organization_uuid] = signer
        return signer

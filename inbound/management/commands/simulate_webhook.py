import hashlib
import hmac
import json
import urllib.error
import urllib.request
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.test import RequestFactory
from django.urls import reverse

from accounts.commands import organization_argument
from business_numbers.models import Number
from events.services import event_batch
from inbound.api.webhook import SIGNATURE_HEADER, whatsapp_webhook
from inbound.services.webhook import process_webhook


class Command(BaseCommand):
    help = (
        "Deliver a stored WhatsApp webhook payload (a JSON file: one webhook, or a file of "
        'the test suite\'s {"payloads": {NAME: webhook}} form) to ORGANIZATION, as WhatsApp '
        "would: signed with the organization's app secret and handled by its webhook, here "
        "in this process (or posted to a running service with --url). An organization "
        "without an app secret (the sandbox) gets it unsigned, through the same handling, "
        "as simulate_inbound does. The payload's business account and number ids become "
        "the organization's, unless --keep-ids."
    )

    def add_arguments(self, parser):
        parser.add_argument("organization", help="uuid or exact name")
        parser.add_argument("file", help="the payload file (JSON)")
        parser.add_argument("--payload", help="the NAME of one payload of a file of many")
        parser.add_argument(
            "--url", help="post to this running service (e.g. http://localhost:8000) instead"
        )
        parser.add_argument(
            "--keep-ids", action="store_true", help="deliver the ids as the file has them"
        )

    def handle(self, *args, organization, file, payload, url, keep_ids, **options):
        org = organization_argument(organization)
        channel = Number.objects.default_for(org)
        for name, webhook in self.webhooks(Path(file), payload):
            if not keep_ids:
                webhook = as_own(webhook, channel)
            body = json.dumps(webhook).encode()
            if url:
                status, answer = self.post(url, org, channel, body)
            elif channel.app_secret:
                status, answer = self.deliver(org, channel, body)
            else:
                with event_batch():  # as the webhook view does
                    summary = process_webhook(organization=org, payload=webhook)
                status = 200
                counts = {key: value for key, value in vars(summary).items() if key != "replies"}
                answer = {"processed": counts}
                self.stdout.write("(unsigned: the organization has no app secret)")
            label = f"{name}: " if name else ""
            self.stdout.write(f"{label}{status} {json.dumps(answer.get('processed', answer))}")

    def webhooks(self, path: Path, wanted: str | None) -> list[tuple[str, dict]]:
        try:
            document = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise CommandError(f"Cannot read {path}: {error}") from None
        if not isinstance(document, dict):
            raise CommandError(f"{path} holds no webhook (a JSON object).")
        if isinstance(document.get("payloads"), dict):
            found = list(document["payloads"].items())
            if wanted is not None:
                found = [(name, webhook) for name, webhook in found if name == wanted]
                if not found:
                    names = ", ".join(document["payloads"])
                    raise CommandError(f"No payload {wanted!r} in {path}; it has: {names}.")
            return found
        if wanted is not None:
            raise CommandError(f"{path} holds one webhook; --payload names one of many.")
        return [("", document)]

    def deliver(self, org, channel: Number, body: bytes) -> tuple[int, dict]:
        """Through the webhook view itself, signed: what WhatsApp's delivery would do."""
        path = reverse("whatsapp-webhook", args=[org.uuid])
        request = RequestFactory().post(
            path,
            body,
            content_type="application/json",
            # A META key: mypy cannot tell it from the named parameters secure and headers.
            **{SIGNATURE_HEADER: signature(channel.app_secret, body)},  # type: ignore[arg-type]
        )
        response = whatsapp_webhook(request, organization_uuid=org.uuid)
        return response.status_code, json.loads(response.content)

    def post(self, url: str, org, channel: Number, body: bytes) -> tuple[int, dict]:
        if not channel.app_secret:
            raise CommandError("The organization has no app secret to sign the delivery with.")
        target = url.rstrip("/") + reverse("whatsapp-webhook", args=[org.uuid])
        request = urllib.request.Request(  # noqa: S310 (the operator's own service)
            target,
            data=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": signature(channel.app_secret, body),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")
        except (urllib.error.URLError, OSError) as error:
            raise CommandError(f"Cannot reach {target}: {error}") from None


def signature(secret: str, body: bytes) -> str:
    """X-Hub-Signature-256, as WhatsApp signs: HMAC-SHA256 of the raw body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def as_own(webhook: dict, channel: Number) -> dict:
    """The webhook as if about the organization's business account and number."""
    webhook = json.loads(json.dumps(webhook))
    for entry in webhook.get("entry") or []:
        if not isinstance(entry, dict):
            continue
        if channel.business_account_id:
            entry["id"] = channel.business_account_id
        for change in entry.get("changes") or []:
            value = change.get("value") if isinstance(change, dict) else None
            metadata = value.get("metadata") if isinstance(value, dict) else None
            if isinstance(metadata, dict) and channel.phone_number_id:
                metadata["phone_number_id"] = channel.phone_number_id
            if isinstance(value, dict) and channel.display_phone_number:
                for key in ("display_phone_number", "phone_number"):
                    if key in value:
                        value[key] = channel.display_phone_number
    return webhook

import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.commands import organization_argument
from messaging_project.api.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.api.worker import run_task_now
from sending.gateway import sandbox
from sending.inbound import process_webhook
from sending.models import AutoReply, AutoReplyState, Channel, ChannelKind, Chat, ChatType

# An auto-reply a worker took first is waited for this long (plus the channel's timeout).
WAIT_SECONDS = 5


class Command(BaseCommand):
    help = (
        "Pretend a customer sent TEXT from PHONE to a sandbox organization: the message goes "
        "through the same inbound path as a real webhook, canned replies included."
    )

    def add_arguments(self, parser):
        parser.add_argument("organization", help="uuid or exact name")
        parser.add_argument("phone", help="the customer's number, e.g. +14155552671")
        parser.add_argument("text")
        parser.add_argument("--name", default="", help="the customer's WhatsApp profile name")

    def handle(self, *args, organization, phone, text, name, **options):
        org = organization_argument(organization)
        channel = Channel.of(org)
        if channel.kind != ChannelKind.SANDBOX:
            raise CommandError(
                f"{org.name!r} sends through the Cloud API; simulate_inbound only runs for "
                "sandbox organizations, so that it never messages a real customer."
            )
        try:
            digits = normalize_phone(phone)
        except InvalidPhoneNumber as error:
            raise CommandError(str(error)) from None
        wam_id = sandbox.new_message_id(digits)
        payload = {
            "object": "whatsapp_business_account",
            "entry": [
                {
                    "id": channel.business_account_id or "sandbox",
                    "changes": [
                        {
                            "field": "messages",
                            "value": {
                                "messaging_product": "whatsapp",
                                "contacts": [{"profile": {"name": name}, "wa_id": digits}],
                                "messages": [
                                    {
                                        "from": digits,
                                        "id": wam_id,
                                        "timestamp": str(int(time.time())),
                                        "type": "text",
                                        "text": {"body": text},
                                    }
                                ],
                            },
                        }
                    ],
                }
            ],
        }
        with transaction.atomic():
            summary = process_webhook(organization=org, payload=payload)
        for task_id in summary.replies:
            # Here and now, unless a running worker took it first: then wait for it.
            if not run_task_now(task_id):
                self.wait_for_reply(org, wam_id)
        inbound = Chat.objects.get(organization=org, wam_id=wam_id)
        self.stdout.write(f"Recorded inbound chat {inbound.uuid} from +{digits}.")
        reply = (
            Chat.objects.filter(
                organization=org, contact=inbound.contact, type=ChatType.OUTBOUND, id__gt=inbound.id
            )
            .order_by("id")
            .first()
        )
        if reply is None:
            self.stdout.write("No canned reply matched; nothing was sent.")
        else:
            body = reply.metadata.get("text", {}).get("body", "")
            self.stdout.write(f"Auto-reply ({reply.status}): {body}")

    def wait_for_reply(self, organization, wam_id: str) -> None:
        pending = AutoReply.objects.filter(
            organization=organization,
            inbound__wam_id=wam_id,
            state__in=[AutoReplyState.PENDING, AutoReplyState.SENDING],
        )
        deadline = time.monotonic() + WAIT_SECONDS + settings.WHATSAPP_TIMEOUT
        while pending.exists() and time.monotonic() < deadline:
            time.sleep(0.1)

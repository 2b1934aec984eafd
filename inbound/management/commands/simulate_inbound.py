import mimetypes
import time
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from accounts.commands import organization_argument
from business_numbers.gateway import sandbox
from business_numbers.models import Number, NumberKind
from events.services import event_batch
from inbound.media import fetch_media
from inbound.services.media import MAX_BYTES
from inbound.services.webhook import process_webhook
from messaging_project.core.phones import InvalidPhoneNumber, normalize_phone
from messaging_project.worker.inline import run_task_now
from sending.models import Chat, ChatType

MEDIA_KINDS = ("image", "audio", "video", "document", "sticker")

# An auto-reply a worker took first is waited for this long (plus the channel's timeout).
WAIT_SECONDS = 5


class Command(BaseCommand):
    help = (
        "Pretend a customer sent TEXT from PHONE to a sandbox organization: the message goes "
        "through the same inbound path as a real webhook, canned replies included. With "
        "--media FILE the customer sends that file (TEXT, if given, is its caption): it is "
        "fetched from the sandbox channel into storage as a real customer's photo would be."
    )

    def add_arguments(self, parser):
        parser.add_argument("organization", help="uuid or exact name")
        parser.add_argument("phone", help="the customer's number, e.g. +14155552671")
        parser.add_argument("text", nargs="?", default=None)
        parser.add_argument("--name", default="", help="the customer's WhatsApp profile name")
        parser.add_argument("--media", metavar="FILE", help="send this file as media")
        parser.add_argument(
            "--media-type",
            choices=MEDIA_KINDS,
            help="the kind of media (default: from the file's type; anything unknown is a "
            "document)",
        )

    def handle(self, *args, organization, phone, text, name, media, media_type, **options):
        org = organization_argument(organization)
        channel = Number.objects.default_for(org)
        if channel.kind != NumberKind.SANDBOX:
            raise CommandError(
                f"{org.name!r} sends through the Cloud API; simulate_inbound only runs for "
                "sandbox organizations, so that it never messages a real customer."
            )
        try:
            digits = normalize_phone(phone)
        except InvalidPhoneNumber as error:
            raise CommandError(str(error)) from None
        if media is None and text is None:
            raise CommandError("Give the TEXT of the message, or a file with --media.")
        if media_type and media is None:
            raise CommandError("--media-type goes with --media FILE.")
        message = (
            self.media_message(Path(media), media_type, caption=text)
            if media is not None
            else {"type": "text", "text": {"body": text}}
        )
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
                                        **message,
                                    }
                                ],
                            },
                        }
                    ],
                }
            ],
        }
        with event_batch():  # as the webhook view does
            summary = process_webhook(organization=org, payload=payload)
        for task_id in summary.replies:
            # Here and now, unless a running worker took it first: then wait for it.
            if not run_task_now(task_id):
                self.wait_for_reply(task_id)
        inbound = Chat.objects.select_related("media").get(organization=org, wam_id=wam_id)
        self.stdout.write(f"Recorded inbound chat {inbound.uuid} from +{digits}.")
        if inbound.media is not None:
            # Here and now; the queued task then finds it done (or a worker did it first).
            fetch_media.call(inbound.media.pk)
            inbound.media.refresh_from_db()
            fetched = inbound.media
            if fetched.status == "available":
                self.stdout.write(
                    f"Media: {fetched.kind} ({fetched.mime_type}, {fetched.size} bytes) "
                    f"available at GET /api/chats/{inbound.uuid}/media"
                )
            else:
                self.stdout.write(f"Media: {fetched.kind} {fetched.status} {fetched.last_error}")
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
            kind = reply.metadata.get("type")
            body = (reply.metadata.get("text") or {}).get("body", "")
            if kind != "text" and isinstance(reply.metadata.get(kind), dict):
                body = f"{kind} {reply.metadata[kind].get('link', '')}"
            self.stdout.write(f"Auto-reply ({reply.status}): {body}")

    def media_message(self, path: Path, kind: str | None, *, caption: str | None) -> dict:
        """The webhook's message for a file the customer sends, which the sandbox channel
        then holds under a new media id."""
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        mime_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        kind = kind or media_kind(mime_type)
        size = path.stat().st_size
        if size > MAX_BYTES[kind]:
            raise CommandError(
                f"{path.name} has {size} bytes; WhatsApp takes at most {MAX_BYTES[kind]} for "
                f"a {kind}."
            )
        media_id = sandbox.new_media_id()
        with path.open("rb") as handle:
            sha256 = sandbox.put_media(media_id, File(handle, name=path.name))
        content = {"mime_type": mime_type, "sha256": sha256, "id": media_id}
        if caption and kind in ("image", "video", "document"):
            content["caption"] = caption
        if kind == "document":
            content["filename"] = path.name
        return {"type": kind, kind: content}

    def wait_for_reply(self, task_id: str) -> None:
        """Until the worker that took the reply's task has run it (its AutoReply is
        written by that run)."""
        running = DBTaskResult.objects.filter(
            pk=task_id, status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING]
        )
        deadline = time.monotonic() + WAIT_SECONDS + settings.WHATSAPP_TIMEOUT
        while running.exists() and time.monotonic() < deadline:
            time.sleep(0.1)


def media_kind(mime_type: str) -> str:
    if mime_type == "image/webp":
        return "sticker"
    family = mime_type.split("/", 1)[0]
    return family if family in ("image", "audio", "video") else "document"

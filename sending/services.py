"""Sending, templates and the channel settings. The API, the admin and the commands
all come through here.

A send validates what it can, finds or creates the contact (a creation is its own
short transaction), calls the channel outside any transaction (a slow WhatsApp must
not hold database locks), then records the chat with the status the channel gave. A failed send is
recorded too, as `failed` with the error, and the GatewayError goes on to the caller.

Once the channel has answered, its answer is recorded exactly once: a connection lost
meanwhile is reopened and the chat inserted again (`record`); a database that stays
away is a SendNotRecorded carrying what the channel said, which is also logged.
"""

import logging
import re
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Channel, Organization
from contacts.models import Contact
from contacts.services import contact_for_phone
from messaging_project.api.database import reconnecting
from messaging_project.api.exceptions import UNAVAILABLE_ERRORS
from messaging_project.api.idempotency import point_of_no_return
from sending.gateway import FailureKind, Gateway, GatewayError, gateway_for
from sending.models import Chat, ChatStatus, ChatType, MessageTemplate

logger = logging.getLogger(__name__)

# What a send's answer may set the new chat to; any other `message_status` is `accepted`
# (`failed` is a refusal, see `deliver`; `received` belongs to inbound chats).
SEND_STATUSES = {
    ChatStatus.ACCEPTED,
    ChatStatus.HELD_FOR_QUALITY_ASSESSMENT,
    ChatStatus.PAUSED,
    ChatStatus.SENT,
    ChatStatus.DELIVERED,
    ChatStatus.READ,
}

# Placeholders in a template's text: `{{1}}` (positional) or `{{first_name}}` (named).
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}")
ID_PATTERN = re.compile(r"^[0-9]{1,32}$")
SECRET_PATTERN = re.compile(r"^\S{1,1024}$")


class SendNotRecorded(Exception):
    """The channel answered a send, but the database could not record the chat even after
    reconnecting: the message may have been sent. Carries what the channel said."""

    def __init__(self, *, wam_id: str | None, error: GatewayError | None) -> None:
        super().__init__(f"send not recorded (message id {wam_id})")
        self.wam_id = wam_id  # WhatsApp's id, when it accepted the message
        self.error = error  # the channel's error, when it did not


@dataclass(frozen=True)
class SendResult:
    chat: Chat
    answer: dict[str, Any]  # the channel's answer: messaging_product, contacts, messages
    phone_input: str  # the number as the caller wrote it, echoed in `contacts[0].input`

    @property
    def wa_id(self) -> str:
        contacts = self.answer.get("contacts") or [{}]
        return str(contacts[0].get("wa_id") or self.chat.contact.phone)


# Payloads, exactly as the Cloud API documents them.


def text_payload(*, phone: str, message: str) -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": phone,
        "type": "text",
        "text": {"preview_url": False, "body": message},
    }


def button_payload(
    *,
    phone: str,
    message: str,
    buttons: list[dict[str, str]],
    header: str | None = None,
    footer: str | None = None,
) -> dict[str, Any]:
    interactive: dict[str, Any] = {"type": "button"}
    if header:
        interactive["header"] = {"type": "text", "text": header}
    interactive["body"] = {"text": message}
    if footer:
        interactive["footer"] = {"text": footer}
    interactive["action"] = {
        "buttons": [
            {"type": "reply", "reply": {"id": button["id"], "title": button["title"]}}
            for button in buttons
        ]
    }
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": phone,
        "type": "interactive",
        "interactive": interactive,
    }


def template_payload(*, phone: str, template: dict[str, Any]) -> dict[str, Any]:
    language = {"code": template["language"]["code"]}
    body: dict[str, Any] = {"name": template["name"], "language": language}
    if template.get("components") is not None:
        body["components"] = template["components"]
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": phone,
        "type": "template",
        "template": body,
    }


# Sending.


def send_message(
    *,
    organization: Organization,
    phone: str,
    message: str,
    phone_input: str | None = None,
    header: str | None = None,
    footer: str | None = None,
    buttons: list[dict[str, str]] | None = None,
) -> SendResult:
    """A text message, or with buttons an interactive reply-button message.

    `phone` is digits with the country code; `phone_input` the number as the caller
    wrote it. The input is expected valid (the API's serializer checks WhatsApp's limits).
    """
    gateway = gateway_for(organization)
    if buttons:
        payload = button_payload(
            phone=phone, message=message, buttons=buttons, header=header, footer=footer
        )
        metadata = {
            "type": "interactive",
            "text": {"header": header or None, "body": message, "footer": footer or None},
            "buttons": [
                {"type": "reply", "text": button["title"], "value": button["id"]}
                for button in buttons
            ],
        }
    else:
        payload = text_payload(phone=phone, message=message)
        metadata = {"type": "text", "text": {"body": message}}
    return deliver(
        organization=organization,
        gateway=gateway,
        phone=phone,
        phone_input=phone_input,
        payload=payload,
        metadata=metadata,
    )


def send_template(
    *,
    organization: Organization,
    phone: str,
    template: dict[str, Any],
    phone_input: str | None = None,
) -> SendResult:
    """A template message; `template` is `{name, language: {code}, components?}` as the API got it.

    When the template is known locally its body parameters are counted (a mismatch
    is a ValidationError, before anything is sent) and the chat keeps the rendered text.
    """
    name, language = template["name"], template["language"]["code"]
    components = template.get("components") or []
    known = (
        MessageTemplate.objects.live()
        .filter(organization=organization, name=name, language=language)
        .first()
    )
    if known is not None:
        check_parameter_count(known, components)
        metadata = rendered_metadata(known, components)
    gateway = gateway_for(organization)
    payload = template_payload(phone=phone, template=template)
    if known is None:  # nothing to render from: keep what was sent
        metadata = {"type": "template", "template": payload["template"]}
    return deliver(
        organization=organization,
        gateway=gateway,
        phone=phone,
        phone_input=phone_input,
        payload=payload,
        metadata=metadata,
    )


def deliver(
    *,
    organization: Organization,
    gateway: Gateway,
    phone: str,
    phone_input: str | None,
    payload: dict[str, Any],
    metadata: dict[str, Any],
) -> SendResult:
    contact = contact_for_phone(organization=organization, phone=phone)
    # From here the message may reach WhatsApp: an error of ours must not free the
    # request's Idempotency-Key for a retry that would send it again.
    point_of_no_return()
    try:
        # Outside any transaction: the network may take WHATSAPP_TIMEOUT seconds.
        answer = gateway.send_message(payload)
    except GatewayError as error:
        record_failure(organization=organization, contact=contact, metadata=metadata, error=error)
        raise
    # The gateway checked the answer's shape: an id, and a message_status text or none.
    message = answer["messages"][0]
    wam_id, status = message["id"], message.get("message_status")
    if status == ChatStatus.FAILED:
        error = failed_on_arrival(wam_id)
        record_failure(
            organization=organization,
            contact=contact,
            metadata=metadata,
            error=error,
            wam_id=wam_id,
        )
        raise error
    chat = Chat(
        organization=organization,
        contact=contact,
        type=ChatType.OUTBOUND,
        wam_id=wam_id,
        metadata=metadata,
        status=status if status in SEND_STATUSES else ChatStatus.ACCEPTED,
    )
    try:
        chat = record(chat)
    except IntegrityError:
        # The id is already one of this organization's messages: the status updates
        # could not tell the two apart, so this answer cannot be trusted.
        error = repeated_message_id(wam_id)
        record_failure(organization=organization, contact=contact, metadata=metadata, error=error)
        raise error from None
    chat.contact = contact  # the same instance, so the response needs no query
    return SendResult(chat=chat, answer=answer, phone_input=phone_input or f"+{phone}")


def record(chat: Chat, *, error: GatewayError | None = None) -> Chat:
    """Insert a chat the channel has answered for, once, through a lost connection.

    Raises IntegrityError for a message id the organization already has, and
    SendNotRecorded (after logging what is known) when the database stays away.
    """

    def insert() -> Chat:
        try:
            with transaction.atomic():
                chat.save(force_insert=True)
        except IntegrityError:
            # An attempt whose answer was lost may have committed: the uuid is unique.
            stored = Chat.objects.filter(uuid=chat.uuid).first()
            if stored is None:
                raise
            return stored
        return chat

    try:
        return reconnecting(insert)
    except UNAVAILABLE_ERRORS as lost:
        # The only record left of what WhatsApp said: for an operator to reconcile.
        logger.error(
            "Send not recorded, the database is unavailable (%s): organization %s, "
            "contact %s, message id %s, status %s, error code %s, error %r",
            lost,
            chat.organization_id,
            chat.contact_id,
            chat.wam_id,
            chat.status,
            chat.error_code,
            chat.error_title,
        )
        raise SendNotRecorded(wam_id=chat.wam_id, error=error) from lost


def repeated_message_id(wam_id: str) -> GatewayError:
    logger.warning("WhatsApp answered a send with the id of an earlier message: %s", wam_id)
    return GatewayError(
        FailureKind.UNAVAILABLE,
        "The WhatsApp channel answered with the message id of an earlier message.",
        type="invalid_response",
        details=f"message id {wam_id}",
        http_status=200,
    )


def failed_on_arrival(wam_id: str) -> GatewayError:
    """A 200 whose message_status is `failed`: WhatsApp took the request and refused the message."""
    logger.warning("WhatsApp answered a send with message_status failed: %s", wam_id)
    return GatewayError(
        FailureKind.REFUSED,
        "The WhatsApp channel answered that the message failed.",
        type="message_failed",
        details=f"message id {wam_id}",
        http_status=200,
    )


def record_failure(
    *,
    organization: Organization,
    contact: Contact,
    metadata: dict[str, Any],
    error: GatewayError,
    wam_id: str | None = None,
) -> Chat:
    """The failed chat of a send; `wam_id` when the channel gave the failed message an id."""
    # Code and message have their columns; the rest of Graph's error object goes here.
    details = {
        "type": error.type,
        "details": error.details,
        "fbtrace_id": error.fbtrace_id,
        "http_status": error.http_status,
    }
    if error.unusable_code is not None:
        details["code"] = error.unusable_code  # a code the error_code column cannot hold
    chat = Chat(
        organization=organization,
        contact=contact,
        type=ChatType.OUTBOUND,
        wam_id=wam_id,
        metadata=metadata,
        status=ChatStatus.FAILED,
        error_code=error.code,
        error_title=error.message,
        error_details=details,
    )
    try:
        chat = record(chat, error=error)
    except IntegrityError:
        # The id is one of the organization's earlier messages: kept with the details.
        chat.wam_id = None
        chat = record(chat, error=error)
    error.chat = chat  # for callers that want to show it
    return chat


# Templates.


def placeholders(text: str) -> list[str]:
    """The distinct placeholder names of a template text, in order of appearance."""
    return list(dict.fromkeys(PLACEHOLDER.findall(text or "")))


def sent_parameters(components: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    parameters: list[dict[str, Any]] = []
    for component in components:
        if str(component.get("type", "")).lower() == kind:
            parameters.extend(component.get("parameters") or [])
    return parameters


def check_parameter_count(template: MessageTemplate, components: list[dict[str, Any]]) -> None:
    body = template.component("BODY") or {}
    expected = len(placeholders(body.get("text", "")))
    given = len(sent_parameters(components, "body"))
    if expected != given:
        raise ValidationError(
            {
                "template.components": [
                    f"The template {template.name} ({template.language}) takes {expected} body "
                    f"parameter(s); {given} given."
                ]
            }
        )


def parameter_text(parameter: dict[str, Any]) -> str:
    """What a parameter shows: its text, or the fallback of a currency or date."""
    if "text" in parameter:
        return str(parameter["text"])
    for kind in ("currency", "date_time"):
        if isinstance(parameter.get(kind), dict):
            return str(parameter[kind].get("fallback_value", ""))
    return ""


def fill(text: str, parameters: list[dict[str, Any]]) -> str:
    """Replace `{{1}}` by the first parameter, `{{name}}` by the parameter named so."""
    by_name = {str(p.get("parameter_name")): p for p in parameters if p.get("parameter_name")}

    def value(match: re.Match) -> str:
        key = match.group(1)
        if key in by_name:
            return parameter_text(by_name[key])
        if key.isdigit() and 0 < int(key) <= len(parameters):
            return parameter_text(parameters[int(key) - 1])
        return match.group(0)

    return PLACEHOLDER.sub(value, text)


def rendered_metadata(
    template: MessageTemplate, components: list[dict[str, Any]]
) -> dict[str, Any]:
    """The chat metadata of a known template: the text as the recipient reads it."""
    header = template.component("HEADER") or {}
    body = template.component("BODY") or {}
    footer = template.component("FOOTER") or {}
    header_format = str(header.get("format", "TEXT")).lower() if header else "text"
    url_parameters = {
        str(c.get("index")): c.get("parameters") or []
        for c in components
        if str(c.get("type", "")).lower() == "button"
    }
    buttons = []
    for index, button in enumerate((template.component("BUTTONS") or {}).get("buttons") or []):
        value = button.get("url") or button.get("phone_number")
        if value and button.get("url"):
            value = fill(value, url_parameters.get(str(index), []))
        buttons.append({"type": button.get("type"), "text": button.get("text"), "value": value})
    header_text = header.get("text") if header_format == "text" else None
    if header_text:
        header_text = fill(header_text, sent_parameters(components, "header"))
    return {
        "type": header_format,
        "template": {"name": template.name, "language": template.language},
        "text": {
            "header": header_text or None,
            "body": fill(body.get("text", ""), sent_parameters(components, "body")),
            "footer": footer.get("text"),
        },
        "buttons": buttons,
    }


@dataclass(frozen=True)
class SyncResult:
    created: int
    updated: int
    removed: int


def sync_templates(*, organization: Organization) -> SyncResult:
    """Copy the business account's templates from the channel; soft-delete the vanished ones."""
    remote = gateway_for(organization).list_templates()  # network first, outside the transaction
    now = timezone.now()
    created = updated = 0
    seen: set[int] = set()
    with transaction.atomic():
        existing = {
            (t.name, t.language): t
            for t in MessageTemplate.objects.select_for_update().filter(organization=organization)
        }
        for item in remote:
            name, language = str(item.get("name", ""))[:512], str(item.get("language", ""))[:16]
            if not name or not language:
                continue
            values = {
                "category": str(item.get("category") or "")[:32],
                "status": str(item.get("status") or "")[:32],
                "components": item.get("components") or [],
                "external_id": str(item.get("id") or "")[:64],
                "deleted_at": None,
            }
            template = existing.get((name, language))
            if template is None:
                template = MessageTemplate.objects.create(
                    organization=organization, name=name, language=language, **values
                )
                existing[(name, language)] = template
                created += 1
            else:
                for field, value in values.items():
                    setattr(template, field, value)
                template.save()
                updated += 1
            seen.add(template.pk)
        removed = (
            MessageTemplate.objects.live()
            .filter(organization=organization)
            .exclude(pk__in=seen)
            .update(deleted_at=now, updated_at=now)
        )
    return SyncResult(created=created, updated=updated, removed=removed)


# The channel settings.


def configure_channel(
    *,
    organization: Organization,
    sandbox: bool = False,
    phone_number_id: str | None = None,
    access_token: str | None = None,
    business_account_id: str | None = None,
    app_secret: str | None = None,
    verify_token: str | None = None,
) -> Organization:
    """Switch an organization to the sandbox, or to the Cloud API with its credentials.

    The sandbox clears every stored credential. For the Cloud API, the phone number id
    and access token are required; the optional settings not given keep their value.
    """
    optional = {
        "business_account_id": business_account_id,
        "app_secret": app_secret,
        "verify_token": verify_token,
    }
    if sandbox:
        if phone_number_id or access_token or any(v is not None for v in optional.values()):
            raise ValidationError(
                {"sandbox": ["The sandbox takes no credentials; give either --sandbox or them."]}
            )
        organization.channel = Channel.SANDBOX
        for field in ("phone_number_id", "access_token", *optional):
            setattr(organization, field, "")
        organization.save()
        return organization

    errors: dict[str, list[str]] = {}
    if not phone_number_id:
        errors["phone_number_id"] = ["The phone number id is required for the Cloud API."]
    elif not ID_PATTERN.match(phone_number_id):
        errors["phone_number_id"] = ["The phone number id must be digits."]
    if not access_token:
        errors["access_token"] = ["The access token is required for the Cloud API."]
    elif not SECRET_PATTERN.match(access_token):
        errors["access_token"] = ["The access token must be one word of at most 1024 characters."]
    if business_account_id is not None and not ID_PATTERN.match(business_account_id):
        errors["business_account_id"] = ["The business account id must be digits."]
    for field in ("app_secret", "verify_token"):
        value = optional[field]
        if value is not None and not SECRET_PATTERN.match(value):
            errors[field] = [f"The {field.replace('_', ' ')} must be one word without spaces."]
        elif value is not None and len(value) > 255:
            errors[field] = [f"The {field.replace('_', ' ')} must be at most 255 characters."]
    if errors:
        raise ValidationError(errors)

    organization.channel = Channel.CLOUD_API
    organization.phone_number_id = phone_number_id
    organization.access_token = access_token
    for field, value in optional.items():
        if value is not None:
            setattr(organization, field, value)
    organization.save()
    return organization

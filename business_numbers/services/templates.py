"""Message templates: the local copy synced from the channel, and what a template send
shows (its body parameters counted, its text rendered for the chat)."""

import re
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from business_numbers.gateway import gateway_for
from business_numbers.models import MessageTemplate, Number

# Placeholders in a template's text: `{{1}}` (positional) or `{{first_name}}` (named).
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}")
APPROVED = "APPROVED"


class TemplateNotApproved(ValidationError):
    """The template is known locally and WhatsApp has not approved it (paused, disabled,
    rejected, pending...). A ValidationError, so that a caller that only knew those
    (a campaign's creation) still refuses it as bad input; the send API answers 422."""

    code = "template_not_approved"

    def __init__(self, template: MessageTemplate) -> None:
        self.template = template
        self.status = template.status
        self.message = (
            f"The template {template.name} ({template.language}) is {template.status} on "
            "WhatsApp, not APPROVED: it cannot be sent until WhatsApp approves it again."
        )
        super().__init__({"template": [self.message]})

    @property
    def channel_error(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "type": "template_status",
            "message": self.message,
            "details": {"status": self.status, "reason": self.template.reason or None},
            "fbtrace_id": None,
        }


def check_approved(template: MessageTemplate | None) -> None:
    """A template known locally must be APPROVED; one never synced (or whose status was
    never reported) is left to WhatsApp."""
    if template is not None and template.status and template.status.upper() != APPROVED:
        raise TemplateNotApproved(template)


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


def synced_template(number: Number, template: dict[str, Any]):
    """The number's synced template a send names (`name`, `language.code`), or None."""
    return (
        MessageTemplate.objects.live()
        .filter(
            number=number,
            name=template["name"],
            language=template["language"]["code"],
        )
        .first()
    )


def check_template(*, number: Number, template: dict[str, Any]) -> None:
    """The body parameters a send names, counted against the number's synced template
    when it is known (a ValidationError naming template.components); a known template
    WhatsApp has not approved is a TemplateNotApproved."""
    known = synced_template(number, template)
    check_approved(known)
    if known is not None:
        check_parameter_count(known, template.get("components") or [])


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


def synced_news(item: dict[str, Any], template: MessageTemplate | None) -> dict[str, str]:
    """The reason and quality a listed template gives. Its `rejected_reason` is "NONE"
    unless it was rejected: the reason kept (a pause's explanation from the webhook)
    stays while the status does, and goes when the status changed. A quality score left
    out keeps the one known."""
    news = {}
    reason = str(item.get("rejected_reason") or "")[:255]
    if reason.upper() not in ("", "NONE"):
        news["reason"] = reason
    elif template is None or template.status != str(item.get("status") or "")[:32]:
        news["reason"] = ""
    score = item.get("quality_score")
    quality = str(score.get("score") or "") if isinstance(score, dict) else ""
    if quality:
        news["quality"] = quality.upper()[:32]
    return news


@dataclass(frozen=True)
class SyncResult:
    created: int
    updated: int
    removed: int


def sync_templates(*, number: Number) -> SyncResult:
    """Copy the number's business account's templates from the channel; soft-delete the
    vanished ones."""
    remote = gateway_for(number).list_templates()  # network first, outside the transaction
    now = timezone.now()
    created = updated = 0
    seen: set[int] = set()
    with transaction.atomic():
        existing = {
            (t.name, t.language): t
            for t in MessageTemplate.objects.select_for_update().filter(number=number)
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
            values.update(synced_news(item, template))
            if template is None:
                template = MessageTemplate.objects.create(
                    organization_id=number.organization_id,
                    number=number,
                    name=name,
                    language=language,
                    **values,
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
            .filter(number=number)
            .exclude(pk__in=seen)
            .update(deleted_at=now, updated_at=now)
        )
    return SyncResult(created=created, updated=updated, removed=removed)

"""Numbers and templates as the API shows them, for the API, the events and the admin."""

from functools import lru_cache
from typing import Any, cast

from business_numbers.models import MessageTemplate, Number, NumberKind, QualityRating
from messaging_project.core.formats import iso_datetime, json_text, laravel_datetime

# PostgreSQL's jsonb does not keep key order, so the metadata string is written in one
# fixed order: these keys first, as api.md shows them, then any others alphabetically.
KEY_ORDER = [
    "type",
    "sub_type",
    "index",
    "name",
    "language",
    "code",
    "template",
    "text",
    "header",
    "body",
    "footer",
    "components",
    "parameters",
    "buttons",
    "value",
]
KEY_RANK = {key: rank for rank, key in enumerate(KEY_ORDER)}


@lru_cache(maxsize=1024)
def key_order(keys: tuple[str, ...]) -> list[str]:
    """`keys` in KEY_ORDER; worked out once for each shape: a page of chats repeats a few."""
    return sorted(keys, key=lambda key: (KEY_RANK.get(key, len(KEY_ORDER)), key))


def canonical(value: Any) -> Any:
    """`value` with every object's keys in that order. Copies with its own stack, not by
    recursion: metadata that older code stored unchecked may nest hundreds deep. Only the
    objects and lists go on the stack, the rest is copied where it is met: a chat's
    metadata is mostly strings, and pushing each cost its copy twice the time."""
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, slot = stack.pop()
        copied: Any
        if isinstance(item, dict):
            copied = {}
            for key in key_order(tuple(item)):
                child = copied[key] = item[key]
                if isinstance(child, dict | list):
                    stack.append((child, copied, key))
        else:
            copied = list(item)
            for index, child in enumerate(item):
                if isinstance(child, dict | list):
                    stack.append((child, copied, index))
        parent[slot] = copied
    return root[0]


def template_metadata_text(template: MessageTemplate) -> str:
    """The template as the channel describes it (Graph's template object), JSON-encoded
    like a chat's metadata, as the original product lists it."""
    text = json_text(
        canonical(
            {
                "name": template.name,
                "components": template.components,
                "language": template.language,
                "status": template.status,
                "category": template.category,
                "id": template.external_id,
            }
        )
    )
    return cast(str, text)  # an object's JSON: never None


def template_data(template: MessageTemplate) -> dict[str, Any]:
    return {
        "id": template.id,
        "uuid": str(template.uuid),
        "organization_id": template.organization_id,
        "name": template.name,
        "language": template.language,
        "category": template.category,
        "status": template.status,
        "reason": template.reason or None,
        "quality": template.quality or None,
        "components": template.components,
        "external_id": template.external_id,
        "metadata": template_metadata_text(template),
        "created_at": laravel_datetime(template.created_at),
        "updated_at": laravel_datetime(template.updated_at),
    }


def channel_data(channel: Number) -> dict[str, Any]:
    """`GET /api/channel` (docs/channel.md): the default number and its health as
    WhatsApp last reported them. The sandbox's number is always healthy."""
    if channel.kind == NumberKind.SANDBOX:
        health: dict[str, Any] = {
            "quality_rating": QualityRating.GREEN.value,
            "messaging_limit": "TIER_UNLIMITED",
            "account_status": "ACTIVE",
            "restrictions": [],
        }
    else:
        health = {
            "quality_rating": channel.quality_rating,
            "messaging_limit": channel.messaging_limit or None,
            "account_status": channel.account_status or None,
            "restrictions": channel.restrictions or [],
        }
    return {
        "phone_number_id": channel.phone_number_id or None,
        "display_phone_number": channel.display_phone_number or None,
        "verified_name": channel.verified_name or None,
        **health,
        "enforce_service_window": channel.enforce_service_window,
        "updated_at": iso_datetime(channel.health_updated_at),
    }


# The API's names for a number's kind (docs/numbers.md).
KIND_NAMES: dict[str, str] = {NumberKind.SANDBOX: "sandbox", NumberKind.CLOUD_API: "cloud"}


def number_data(number: Number) -> dict[str, Any]:
    """`GET /api/numbers/{uuid}`: the number, its health and whether it is the default;
    its access token is never shown."""
    health = channel_data(number)
    return {
        "uuid": str(number.uuid),
        "label": number.label,
        "kind": KIND_NAMES.get(number.kind, number.kind),
        "phone_number_id": number.phone_number_id or None,
        "business_account_id": number.business_account_id or None,
        "display_phone_number": number.display_phone_number or None,
        "verified_name": number.verified_name or None,
        "quality_rating": health["quality_rating"],
        "messaging_limit": health["messaging_limit"],
        "account_status": health["account_status"],
        "is_default": number.is_default,
        "created_at": laravel_datetime(number.created_at),
    }

"""The webhook's fields other than `messages`: what WhatsApp says about the account,
its number, its templates and its customers' preferences (docs/webhooks.md).

(Over 400 lines: one short handler per webhook field, listed in FIELD_HANDLERS.)

Each field has one handler, named in FIELD_HANDLERS; a handler gets the change's
`value` and runs in its own savepoint, so a malformed change is skipped alone. A field
without a handler is counted in the staff's log of unhandled items (and as skipped).

These changes are about a business account (the entry's id), sometimes naming a number
of it. The webhook is the organization's own (its URL), so news about another business
account, or another number, of the same Meta app is left alone and counted as
`other_number`, as messages for another number are.

Every handler writes only what changed: news delivered again changes nothing, emits
nothing and counts as a duplicate. News comes in no promised order (WhatsApp retries a
delivery for days): each field of a template or number keeps the time of the news that
last set it (`news_times`), and older news (by its entry's `time`, else its own
`timestamp`) leaves that field alone, counting as a duplicate (docs/webhooks.md).
"""

import logging
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Organization
from business_numbers.models import (
    MessageTemplate,
    Number,
    QualityRating,
    forget_numbers,
    numbers_of,
)
from business_numbers.representations import channel_data, template_data
from events.models import Event
from events.services import emit_event
from inbound.services.customers import (
    record_business_app_echoes,
    record_history,
    record_user_preferences,
)
from inbound.services.webhook_items import WebhookSummary, as_dict, as_list, guarded
from messaging_project.core.storable import is_storable_json, without_unstorable
from sending.models import UnhandledWebhookItem

logger = logging.getLogger(__name__)

# How the log of unhandled items names a change that names no field.
NO_FIELD = "(no field)"
# A handler gets the change's value and the news' time (unix seconds; None when unknown).
FieldHandler = Callable[[Organization, dict, WebhookSummary, int | None], None]


def untimed(handler: Callable[[Organization, dict, WebhookSummary], None]) -> FieldHandler:
    """A handler whose items carry their own times (messages, preferences)."""

    def handle(organization: Organization, value: dict, summary: WebhookSummary, at) -> None:
        handler(organization, value, summary)

    return handle


FIELD_HANDLERS: dict[str, FieldHandler] = {
    # Customers and the conversation (inbound/services/customers.py)
    "user_preferences": untimed(record_user_preferences),
    "smb_message_echoes": untimed(record_business_app_echoes),
    "history": untimed(record_history),
}


def record_account_news(
    organization: Organization,
    field: object,
    value: dict,
    summary: WebhookSummary,
    *,
    account_id: object = None,
    entry_time: object = None,
) -> None:
    """One change of a field other than `messages`; `account_id` is its entry's id (the
    WhatsApp business account it is about), `entry_time` its entry's `time`."""
    if not for_account(organization, account_id, value):
        summary.other_number += 1
        logger.info("Webhook %s for another account, organization %s", field, organization.pk)
        return
    handler = FIELD_HANDLERS.get(field) if isinstance(field, str) else None
    if handler is None:
        summary.skipped += 1
        # Whatever it is, the staff see it (an empty value, or a field that is not text,
        # included): nothing WhatsApp sends is dropped unseen.
        name = field if isinstance(field, str) and field else NO_FIELD
        guarded(log_unhandled, organization, value, summary, name)
        return
    if not value:  # a known field with nothing in it
        summary.skipped += 1
        return
    guarded(handler, organization, value, summary, news_time(entry_time, value))


def news_time(entry_time: object, value: dict) -> int | None:
    """When WhatsApp says the news happened (unix seconds): its entry's `time`, else the
    change's own `timestamp`; None when neither is a usable time."""
    for candidate in (entry_time, value.get("timestamp")):
        if isinstance(candidate, bool):
            continue
        if isinstance(candidate, str) and candidate.strip().isdigit():
            candidate = int(candidate.strip())
        if isinstance(candidate, int | float) and 0 < candidate < 2**53:
            return int(candidate)
    return None


def fresh_changes(
    record: MessageTemplate | Number, changes: dict[str, Any], at: int | None
) -> tuple[dict[str, Any], dict[str, int]]:
    """Of a news item's changes, those it may make (the fields whose last news is not
    newer), and the record's news times after it. Equal times apply: the same news
    again changes nothing anyway."""
    if at is None:
        return changes, {}
    known = dict(record.news_times) if isinstance(record.news_times, dict) else {}
    fresh = {}
    for field, new in changes.items():
        last = known.get(field)
        if isinstance(last, int) and last > at:
            continue
        fresh[field] = new
        known[field] = at
    return fresh, known


def for_account(organization: Organization, account_id: object, value: dict) -> bool:
    """Whether a change is the organization's. One naming a number (`metadata`, as the
    customers' fields do) is routed by it, as messages are; one about the business
    account alone (templates, the account) by the entry's id. What names neither, or an
    organization without those settings (the sandbox), is taken."""
    numbers = numbers_of(organization)
    named = as_dict(value.get("metadata")).get("phone_number_id")
    if named is not None:
        ids = {number.phone_number_id for number in numbers if number.phone_number_id}
        return not ids or str(named) in ids
    account = str(account_id) if account_id not in (None, "") else ""
    accounts = {number.business_account_id for number in numbers if number.business_account_id}
    return not accounts or account == "" or account in accounts


def log_unhandled(
    organization: Organization, value: dict, summary: WebhookSummary, field: str
) -> None:
    """Count one item of a field nobody handles, keeping it as it came. An update of the
    row first (the usual case once seen), else its insert; two first deliveries racing
    meet the unique constraint, and the loser counts by the update."""
    now = timezone.now()
    field = without_unstorable(field)[:64]
    payload = value if is_storable_json(value) else None
    seen = UnhandledWebhookItem.objects.filter(organization=organization, field=field)
    changes = {"count": F("count") + 1, "last_payload": payload, "last_seen": now}
    if seen.update(**changes):
        return
    try:
        with transaction.atomic():
            UnhandledWebhookItem.objects.create(
                organization=organization,
                field=field,
                count=1,
                last_payload=payload,
                first_seen=now,
                last_seen=now,
            )
    except IntegrityError:
        seen.update(**changes)


def text(value: Any, length: int) -> str:
    """A value WhatsApp gave as text (or a number), cleaned and capped; "" for anything else."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return ""
    return without_unstorable(str(value)).strip()[:length]


# Templates -----------------------------------------------------------------------------

# Template events that are a template's status, as Graph's template list names them.
# FLAGGED (at risk), LOCKED and UNLOCKED (editing) leave the status as it is; REINSTATED
# makes it sendable again.
TEMPLATE_STATES = {
    "APPROVED": "APPROVED",
    "REINSTATED": "APPROVED",
    "PENDING": "PENDING",
    "REJECTED": "REJECTED",
    "PAUSED": "PAUSED",
    "DISABLED": "DISABLED",
    "IN_APPEAL": "IN_APPEAL",
    "PENDING_DELETION": "PENDING_DELETION",
    "DELETED": "DELETED",
    "ARCHIVED": "ARCHIVED",
}
# The reasons WhatsApp gives when there is none.
NO_REASON = ("", "NONE")


def news_template(organization: Organization, value: dict) -> MessageTemplate | None:
    """The local template a change is about: by WhatsApp's id, else by name and language;
    locked for the change. None when the organization has not synced it."""
    external_id = text(value.get("message_template_id"), 64)
    name = text(value.get("message_template_name"), 512)
    language = text(value.get("message_template_language"), 16)
    if not external_id and not (name and language):
        raise KeyError("message_template_id")
    match = Q(external_id=external_id) if external_id else Q(pk__in=[])
    if name and language:
        # The webhook writes a locale `en-US`; Graph's template list (the sync) `en_US`.
        match |= Q(name=name, language__in={language, language.replace("-", "_")})
    found = list(
        MessageTemplate.objects.live()
        .select_for_update()
        .filter(match, organization=organization)
        .order_by("id")
    )
    # The id wins over the name when both match different rows.
    by_id = [template for template in found if external_id and template.external_id == external_id]
    return (by_id or found or [None])[0]


def change_template(
    organization: Organization,
    value: dict,
    summary: WebhookSummary,
    changes: dict[str, Any],
    at: int | None,
    template: MessageTemplate | None = None,
) -> None:
    """Write `changes` to the template the change names (`template` when found
    already), those fields that differ and no newer news set; one
    template.status.update for it."""
    template = template or news_template(organization, value)
    if template is None:
        logger.info("Template news for a template organization %s has not synced", organization.pk)
        summary.updates += 1
        return
    fresh, times = fresh_changes(template, changes, at)
    changed = {field: new for field, new in fresh.items() if getattr(template, field) != new}
    if not changed:
        summary.duplicates += 1
        if times and times != template.news_times:  # the same state, told later
            MessageTemplate.objects.filter(pk=template.pk).update(news_times=times)
        return
    for field, new in changed.items():
        setattr(template, field, new)
    fields = [*changed, "updated_at"]
    if times:
        template.news_times = times
        fields.append("news_times")
    template.save(update_fields=fields)
    summary.updates += 1
    emit_event(
        organization_id=organization.pk,
        event=Event.TEMPLATE_STATUS_UPDATE,
        data=lambda: template_data(template),
    )


def template_status_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    event = text(value.get("event"), 32).upper()
    if not event:
        raise KeyError("event")
    changes: dict[str, Any] = {}
    if event in TEMPLATE_STATES:
        changes["status"] = TEMPLATE_STATES[event]
        changes["reason"] = template_reason(value)
    category = text(value.get("message_template_category"), 32).upper()
    if category:
        changes["category"] = category
    if not changes:  # FLAGGED, LOCKED...: nothing of ours changes
        summary.updates += 1
        return
    change_template(organization, value, summary, changes, at)


def template_reason(value: dict) -> str:
    """Why the template has its status: the pause's or rejection's explanation, else
    WhatsApp's reason code; "" when it gave none."""
    other = as_dict(value.get("other_info"))
    rejection = as_dict(value.get("rejection_info"))
    for reason in (other.get("description"), rejection.get("reason"), value.get("reason")):
        reason = text(reason, 255)
        if reason.upper() not in NO_REASON:
            return reason
    return ""


def template_quality_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    quality = text(value.get("new_quality_score"), 32).upper()
    if not quality:
        raise KeyError("new_quality_score")
    change_template(organization, value, summary, {"quality": quality}, at)


def template_category_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    # A category WhatsApp corrected comes as `correct_category` in older versions.
    category = text(value.get("new_category") or value.get("correct_category"), 32).upper()
    if not category:
        raise KeyError("new_category")
    change_template(organization, value, summary, {"category": category}, at)


# What a components update may name, and the component it changes.
COMPONENT_TEXTS = {
    "message_template_title": "HEADER",
    "message_template_element": "BODY",
    "message_template_footer": "FOOTER",
}


def template_components_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    """An approved edit of the template's texts: the header, body and footer take them
    (the rendered text of later sends follows)."""
    texts = {kind: text(value[key], 4096) for key, kind in COMPONENT_TEXTS.items() if key in value}
    if not any(texts.values()):
        raise KeyError("message_template_element")
    template = news_template(organization, value)
    components = [dict(c) for c in as_list(template.components)] if template else []
    for kind, new in texts.items():
        if not new:
            continue
        for component in components:
            if str(component.get("type", "")).upper() == kind:
                component["text"] = new
                break
        else:
            added = {"type": kind, "format": "TEXT"} if kind == "HEADER" else {"type": kind}
            components.append({**added, "text": new})
    change_template(organization, value, summary, {"components": components}, at, template)


# The number's health --------------------------------------------------------------------

# A quality event's rating: FLAGGED is a low quality, UNFLAGGED its end.
QUALITY_EVENTS = {"FLAGGED": QualityRating.RED, "UNFLAGGED": QualityRating.GREEN}
# Account events that are the account's status (the ban's state for DISABLED_UPDATE).
ACCOUNT_EVENTS = {
    "ACCOUNT_RESTRICTION": "RESTRICTED",
    "ACCOUNT_DELETED": "DELETED",
    "ACCOUNT_OFFBOARDED": "OFFBOARDED",
    "ACCOUNT_RECONNECTED": "ACTIVE",
}
BAN_STATES = {
    "DISABLE": "BANNED",
    "SCHEDULE_FOR_DISABLE": "SCHEDULED_FOR_DISABLE",
    "REINSTATE": "ACTIVE",
}
ALERTS_KEPT = 20


def messaging_limit(value: dict) -> str:
    """The number's messaging limit as a tier name (TIER_1K...): the business portfolio's
    limit where given, else the number's own (`current_limit`, older versions)."""
    for key in (
        "max_daily_conversations_per_business",
        "current_limit",
        "max_daily_conversation_per_phone",
    ):
        limit = text(value.get(key), 32).upper()
        if limit:
            return tier_name(limit)
    return ""


def tier_name(limit: str) -> str:
    if limit.startswith("TIER_"):
        return limit
    if limit in ("UNLIMITED", "-1"):  # -1: unlimited, in the older parameter
        return "TIER_UNLIMITED"
    if limit.isdigit():
        count = int(limit)
        return f"TIER_{count // 1000}K" if count >= 1000 and count % 1000 == 0 else f"TIER_{count}"
    raise ValueError(f"unusable messaging limit {limit[:32]!r}")


def news_channel(organization: Organization, value: dict, *keys: str) -> Number | None:
    """The organization's number a change is about, locked for the change; None when it
    is not the organization's (docs/numbers.md):

    - a change naming a display number goes to the number showing it; a display number
      another organization's number shows is never taken; a display number nobody shows
      yet goes to the organization's only number whose display number is not known yet
      (none, or several: not ours to guess);
    - a change naming none is about the default number.
    """
    named = next((text(value.get(key), 32).lstrip("+") for key in keys if value.get(key)), "")
    numbers = numbers_of(organization)
    if not named:
        found = Number.objects.default_for(organization)
    else:
        shown = [number for number in numbers if number.display_phone_number == named]
        if shown:
            found = shown[0]
        elif (
            Number.objects.live()
            .filter(display_phone_number=named)
            .exclude(organization=organization)
            .exists()
        ):
            return None
        else:
            unknown = [number for number in numbers if not number.display_phone_number]
            if len(unknown) != 1:
                return None
            found = unknown[0]
    # FOR NO KEY UPDATE: every chat and conversation recorded meanwhile checks its
    # foreign key to this row (FOR KEY SHARE), which a plain FOR UPDATE would wait for,
    # and a delivery holding a message and news would wait for another in a circle.
    number = Number.objects.select_for_update(no_key=True).get(pk=found.pk)
    number.organization = organization
    return number


def change_channel(
    organization: Organization,
    summary: WebhookSummary,
    channel: Number | None,
    changes: dict[str, Any],
    at: int | None,
) -> None:
    """Write `changes` to the channel, those fields that differ and no newer news set;
    one channel.updated for it."""
    if channel is None:
        summary.other_number += 1
        return
    fresh, times = fresh_changes(channel, changes, at)
    changed = {field: new for field, new in fresh.items() if getattr(channel, field) != new}
    if not changed:
        summary.duplicates += 1
        if times and times != channel.news_times:  # the same state, told later
            Number.objects.filter(pk=channel.pk).update(news_times=times)
        return
    channel.health_updated_at = timezone.now()
    for field, new in changed.items():
        setattr(channel, field, new)
    fields = [*changed, "health_updated_at"]
    if times:
        channel.news_times = times
        fields.append("news_times")
    channel.save(update_fields=fields)
    summary.updates += 1
    forget_numbers(organization)  # read again, with these changes, when next needed
    emit_event(
        organization_id=organization.pk,
        event=Event.CHANNEL_UPDATED,
        data=lambda: channel_data(channel),
    )


def display_number_learned(channel: Number | None, value: dict) -> dict[str, str]:
    """The number's display number, when news names it and it is not known yet."""
    number = text(value.get("display_phone_number"), 32).lstrip("+")
    if channel is not None and number and not channel.display_phone_number:
        return {"display_phone_number": number}
    return {}


def phone_number_quality_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    event = text(value.get("event"), 32).upper()
    if not event:
        raise KeyError("event")
    channel = news_channel(organization, value, "display_phone_number")
    changes: dict[str, Any] = {}
    if event in QUALITY_EVENTS:
        changes["quality_rating"] = QUALITY_EVENTS[event]
    limit = messaging_limit(value)
    if limit:
        changes["messaging_limit"] = limit
    changes.update(display_number_learned(channel, value))
    change_channel(organization, summary, channel, changes, at)


def phone_number_name_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    decision = text(value.get("decision"), 32).upper()
    if not decision:
        raise KeyError("decision")
    channel = news_channel(organization, value, "display_phone_number")
    changes: dict[str, Any] = {}
    name = text(value.get("requested_verified_name"), 255)
    if decision == "APPROVED" and name:
        changes["verified_name"] = name
    changes.update(display_number_learned(channel, value))
    change_channel(organization, summary, channel, changes, at)


def account_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    event = text(value.get("event"), 64).upper()
    if not event:
        raise KeyError("event")
    channel = news_channel(organization, value, "phone_number")
    changes: dict[str, Any] = {}
    if event == "DISABLED_UPDATE":
        state = text(as_dict(value.get("ban_info")).get("waba_ban_state"), 32).upper()
        if state not in BAN_STATES:
            raise ValueError(f"unknown ban state {state!r}")
        changes["account_status"] = BAN_STATES[state]
        if state == "REINSTATE":
            changes["restrictions"] = []
    elif event == "VERIFIED_ACCOUNT":
        # A sandbox number upgraded to a verified account: kept in the number's log of
        # alerts. It says nothing of a ban or a restriction, so it lifts none.
        verified = verification_alert(value)
        if channel is not None and verified not in as_list(channel.alerts):
            alerts = [verified, *as_list(channel.alerts)][:ALERTS_KEPT]
            changes["alerts"] = alerts
    elif event in ACCOUNT_EVENTS:
        changes["account_status"] = ACCOUNT_EVENTS[event]
        if event == "ACCOUNT_RESTRICTION":
            changes["restrictions"] = restrictions(value.get("restriction_info"))
        elif changes["account_status"] == "ACTIVE":
            changes["restrictions"] = []
    # Other events (partners, pricing tiers, violations' notices) say nothing of the
    # number's health: handled, nothing to keep.
    change_channel(organization, summary, channel, changes, at)


def verification_alert(value: dict) -> dict:
    """VERIFIED_ACCOUNT as an entry of the number's alerts (account_alerts' shape)."""
    return {
        "entity_type": "PHONE_NUMBER",
        "entity_id": text(value.get("phone_number"), 64),
        "alert_type": "VERIFIED_ACCOUNT",
        "alert_severity": "INFORMATIONAL",
        "alert_status": "ACTIVE",
        "alert_description": "The number was upgraded to a verified account.",
    }


def restrictions(info: Any) -> list[dict]:
    kept = []
    for item in as_list(info):
        item = as_dict(item)
        kind = text(item.get("restriction_type"), 64)
        if kind:
            expiration = item.get("expiration")
            kept.append(
                {"restriction_type": kind, "expiration": expiration}
                if isinstance(expiration, int) and not isinstance(expiration, bool)
                else {"restriction_type": kind}
            )
    return kept


def account_review_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    """The business account's review: APPROVED makes it active; REJECTED keeps it so."""
    decision = text(value.get("decision"), 32).upper()
    if not decision:
        raise KeyError("decision")
    channel = news_channel(organization, value)
    changes: dict[str, Any] = {}
    if decision == "APPROVED" and channel is not None and not channel.account_status:
        changes["account_status"] = "ACTIVE"
    elif decision == "REJECTED":
        changes["account_status"] = "REJECTED"
    change_channel(organization, summary, channel, changes, at)


def account_alerts(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    info = as_dict(value.get("alert_info"))
    alert = {
        "entity_type": text(value.get("entity_type"), 64),
        "entity_id": text(value.get("entity_id"), 64),
        "alert_type": text(info.get("alert_type"), 128),
        "alert_severity": text(info.get("alert_severity"), 32),
        "alert_status": text(info.get("alert_status"), 32),
        "alert_description": text(info.get("alert_description"), 1024),
    }
    if not alert["alert_type"]:
        raise KeyError("alert_type")
    channel = news_channel(organization, value)
    if channel is None:
        summary.other_number += 1
        return
    if alert in as_list(channel.alerts):  # delivered again
        summary.duplicates += 1
        return
    alerts = [alert, *as_list(channel.alerts)][:ALERTS_KEPT]
    # A log, newest first, not a state: kept whatever its time.
    change_channel(organization, summary, channel, {"alerts": alerts}, None)


def business_capability_update(
    organization: Organization, value: dict, summary: WebhookSummary, at: int | None
):
    limit = messaging_limit(value)
    channel = news_channel(organization, value)
    changes = {"messaging_limit": limit} if limit else {}
    change_channel(organization, summary, channel, changes, at)


FIELD_HANDLERS.update(
    {
        "message_template_status_update": template_status_update,
        "message_template_quality_update": template_quality_update,
        "template_category_update": template_category_update,
        "message_template_components_update": template_components_update,
        "phone_number_quality_update": phone_number_quality_update,
        "phone_number_name_update": phone_number_name_update,
        "account_update": account_update,
        "account_review_update": account_review_update,
        "account_alerts": account_alerts,
        "business_capability_update": business_capability_update,
    }
)

"""Queued statuses (WHATSAPP_STATUSES_QUEUED): the webhook keeps a delivery's statuses
in one insert and answers; the workers apply them in batches (docs/webhooks.md,
"Queued statuses").

Applied as the webhook applies them (the same parsing, `store_statuses`, the same
events), a batch of deliveries at a time: the message ids of a whole batch held in one
round trip, their statuses inserted and their chats moved in another (two deliveries of
one message in turn: each is its own event, as in the request). Each status keeps the
moment the webhook took it (`received_at`). A delivery of statuses alone is queued
before the rest of the web stack (inbound/middleware.py).

Exactly once: a batch is taken with FOR UPDATE SKIP LOCKED and deleted in the
transaction that applies it, so two workers take different deliveries, and a worker
killed half-way leaves its batch to the next. Statuses are idempotent anyway (a status
event is stored once), so a delivery WhatsApp sent twice, queued twice, is applied once.
A batch that fails for another reason than the database is applied again one delivery
at a time: a delivery that fails on its own keeps its error and stays in the table for
an operator (`tasks_status` counts them), and holds up no other.
"""

import logging
import threading
from collections import defaultdict
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Count, Min, Q
from django.utils import timezone

from accounts.models import Organization
from events.services import event_batch
from inbound.models import QueuedStatuses
from inbound.services.statuses import parse_statuses
from inbound.services.webhook_items import WebhookSummary, as_dict, as_list
from messaging_project.core.storable import is_storable_json
from sending.queries import hold_message_ids
from sending.services import StatusUpdate, store_statuses

logger = logging.getLogger(__name__)

# Deliveries applied per transaction: a second of a busy number's statuses.
BATCH = 500
# Seconds between batches short of BATCH: with the queue on, a status shows on its chat
# within about this much, and a busy queue's statuses gather into batches meanwhile
# (taken as they came, a batch was one or two deliveries, at the cost of one each);
# with it off, rows left from when it was on are still applied.
GATHER_QUEUED = 0.1
GATHER_OFF = 5.0
# The database, not the statuses: the batch is tried again as it is.
LOST_DATABASE = (OperationalError, InterfaceError)


def queue_statuses(organization: Organization, changes: list[dict]) -> None:
    """Keep the changes' statuses for the workers: one insert, in the caller's
    transaction if it has one."""
    QueuedStatuses.objects.create(organization=organization, changes=changes)


# The keys of a change that carries statuses and nothing else (Meta's documented status
# notification; the captured ones in tests/inbound/payloads).
STATUS_CHANGE_KEYS = frozenset({"messaging_product", "metadata", "statuses"})


@dataclass(frozen=True)
class StatusDelivery:
    changes: list[dict]  # each change's value, as queue_statuses keeps them
    phone_number_id: str  # the one number they are all for
    statuses: int


def statuses_only(payload: object) -> StatusDelivery | None:
    """A delivery of nothing but statuses for one named number, which the webhook would
    queue whole (inbound/middleware.py); None for anything else: the webhook's view
    reads it."""
    if not isinstance(payload, dict) or not isinstance(payload.get("entry"), list):
        return None
    changes, numbers, count = [], set(), 0
    for entry in payload["entry"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("changes"), list):
            return None
        for change in entry["changes"]:
            if not isinstance(change, dict) or change.get("field") != "messages":
                return None
            value = change.get("value")
            if not isinstance(value, dict):
                return None
            statuses, metadata = value.get("statuses"), value.get("metadata")
            if not (isinstance(statuses, list) and statuses and isinstance(metadata, dict)):
                return None
            if not value.keys() <= STATUS_CHANGE_KEYS or metadata.get("phone_number_id") is None:
                return None
            changes.append(value)
            numbers.add(str(metadata["phone_number_id"]))
            count += len(statuses)
    if len(numbers) != 1 or not is_storable_json(changes):
        return None
    return StatusDelivery(changes, numbers.pop(), count)


def apply_queued_statuses(limit: int = BATCH) -> int:
    """Apply the oldest queued deliveries (up to `limit`) in one transaction; how many
    were taken (0: none waits)."""
    waiting = QueuedStatuses.objects.filter(error="")
    if not waiting.exists():  # the idle look: one statement, no transaction
        return 0
    with transaction.atomic():
        taken = list(waiting.select_for_update(skip_locked=True).order_by("id")[:limit])
        if not taken:
            return 0
        try:
            with event_batch():  # a savepoint: a failure here undoes only the batch
                apply(taken)
        except LOST_DATABASE:
            raise
        except Exception:
            logger.exception("Queued statuses: a batch failed; applying it one by one")
            for queued in taken:
                apply_alone(queued)
        QueuedStatuses.objects.filter(pk__in=[q.pk for q in taken], error="").delete()
    return len(taken)


def apply_alone(queued: QueuedStatuses) -> None:
    try:
        with event_batch():
            apply([queued])
    except LOST_DATABASE:
        raise
    except Exception as error:
        logger.exception("Queued statuses %s cannot be applied; kept aside", queued.pk)
        queued.error = f"{type(error).__name__}: {error}"[:2000]
        queued.save(update_fields=["error"])


def apply(taken: list[QueuedStatuses]) -> None:
    """Each organization's statuses stored together, organizations in the order of their
    ids (two workers hold their message ids in one order: no deadlock)."""
    by_organization: dict[int, list[QueuedStatuses]] = defaultdict(list)
    for queued in taken:
        by_organization[queued.organization_id].append(queued)
    organizations = Organization.objects.in_bulk(list(by_organization))
    for organization_id in sorted(by_organization):
        organization = organizations.get(organization_id)
        if organization is None:  # deleted since the webhook queued it: nothing to apply to
            logger.info("Queued statuses of organization %s dropped: it is gone", organization_id)
            continue
        summary = WebhookSummary()
        deliveries = [
            parse_statuses(organization, items(queued), summary, queued.received_at)
            for queued in by_organization[organization_id]
        ]
        rounds = in_rounds(deliveries)
        if len(rounds) > 1:  # every round's message ids held first, in one order
            hold_message_ids(organization_id, {update.wam_id for each in rounds for update in each})
        for updates in rounds:
            store_statuses(organization, updates)


def items(queued: QueuedStatuses) -> list[tuple[dict, dict]]:
    """The delivery's status items, each with its change's value (as the webhook reads
    them)."""
    return [
        (as_dict(item), value)
        for value in map(as_dict, as_list(queued.changes))
        for item in as_list(value.get("statuses"))
    ]


def in_rounds(deliveries: list[list[StatusUpdate]]) -> list[list[StatusUpdate]]:
    """The deliveries' statuses in as few rounds as keep apart two deliveries of one
    message: its chat then moves, and is an event, once per delivery, as when the
    webhook applies them (a `sent` and its `delivered` in one batch are two events)."""
    rounds: list[list[StatusUpdate]] = []
    named: set[str] = set()
    for updates in deliveries:
        ids = {update.wam_id for update in updates}
        if not rounds or not named.isdisjoint(ids):
            rounds.append([])
            named = set()
        rounds[-1] += updates
        named |= ids
    return [updates for updates in rounds if updates]


def backlog() -> str:
    """One line for `tasks_status`."""
    counts = QueuedStatuses.objects.aggregate(
        waiting=Count("id", filter=Q(error="")),
        oldest=Min("received_at", filter=Q(error="")),
        aside=Count("id", filter=~Q(error="")),
    )
    line = f"{counts['waiting']} webhook delivery(ies) of statuses queued"
    if counts["oldest"] is not None:
        age = (timezone.now() - counts["oldest"]).total_seconds()
        line += f", the oldest for {age:.1f} s"
    if counts["aside"]:
        line += f"; {counts['aside']} could not be applied (their error is kept)"
    return line


class StatusQueue:
    """The queued statuses as one of the worker's queues (messaging_project/worker/queues.py)."""

    name = "queued-statuses"

    def backlog(self) -> str:
        return backlog()

    def run_due(self, worker_id: str = "") -> int:
        return apply_queued_statuses()

    def serve(self, worker_id: str, stopping: threading.Event) -> None:
        """Apply batches until `stopping`. A failure the batch's own recovery did not
        catch (the database gone, a bug) is logged and the queue goes on after a pause:
        statuses wait in their table, and a dead thread would leave them there until the
        worker restarts."""
        failures = 0
        while not stopping.is_set():
            try:
                taken = apply_queued_statuses()
                failures = 0
            except Exception as error:
                failures += 1
                logger.exception("Queued statuses: a batch failed; trying again")
                if isinstance(error, DatabaseError):
                    connection.close()
                stopping.wait(min(30.0, 0.5 * 2**failures))
                continue
            if taken < BATCH:
                stopping.wait(GATHER_QUEUED if settings.WHATSAPP_STATUSES_QUEUED else GATHER_OFF)

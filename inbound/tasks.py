"""The sandbox's status webhooks, played as WhatsApp would post them.

A message the sandbox accepted moves to `sent`, `delivered` and `read` the way a real
one does: through WhatsApp's status webhook, handed to `process_webhook` as the webhook
view hands it, so the chat moves, the message.status.update events go out, and a
campaign's counts and the metrics count it exactly as they count a real status.

`after_acceptance` listens for the outbound chats sending records (sending.recorded)
and, for those of sandbox numbers, enqueues one task in the recording transaction,
after the first of SANDBOX_STATUS_DELAYS; each run posts one status for the batch and
enqueues the next, in its own transaction. A status's time is the acceptance's plus the
delays, fixed when the batch is enqueued, so a run that happens twice (a worker died)
stores nothing twice (the status events' unique constraint).
"""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django_tasks import task

from business_numbers.gateway.sandbox import STATUS_STEPS, status_webhook
from business_numbers.models import Number, NumberKind
from events.services import event_batch
from inbound.services.webhook import process_webhook
from sending.models import ChatSource, ChatStatus, ChatType
from sending.recorded import MessagesOut


def after_acceptance(record: MessagesOut) -> None:
    """Enqueue the statuses of the sandbox's newly accepted messages (a listener of
    sending.recorded: quick, no network)."""
    delays = settings.SANDBOX_STATUS_DELAYS
    if not delays:
        return
    accepted = [
        chat
        for chat in record.chats
        if chat.type == ChatType.OUTBOUND
        and chat.source == ChatSource.API
        and chat.status == ChatStatus.ACCEPTED
        and chat.wam_id
        and chat.number.kind == NumberKind.SANDBOX
    ]
    if not accepted:
        return
    recipients = {str(chat.wam_id): chat.contact.phone or chat.contact.user_id for chat in accepted}
    accepted_at = int(timezone.now().timestamp())
    play_sandbox_statuses.using(run_after=timezone.now() + timedelta(seconds=delays[0])).enqueue(
        accepted[0].number_id, recipients, accepted_at, 0
    )


@task()
def play_sandbox_statuses(
    number_id: int, recipients: dict[str, str], accepted_at: int, step: int
) -> str:
    """Post the `step`th status (sent, delivered, read) of the messages `recipients`
    names, then enqueue the next; what was posted, or why nothing was."""
    number = (
        Number.objects.live()
        .select_related("organization")
        .filter(pk=number_id, kind=NumberKind.SANDBOX)
        .first()
    )
    if number is None:
        return "not a sandbox number any more"
    delays = settings.SANDBOX_STATUS_DELAYS
    status = STATUS_STEPS[step]
    timestamp = accepted_at + round(sum(delays[: step + 1]))
    payload = status_webhook(number, status=status, timestamp=timestamp, recipients=recipients)
    with event_batch():  # one transaction, as the webhook view's
        process_webhook(organization=number.organization, payload=payload)
        following = step + 1
        if following < min(len(delays), len(STATUS_STEPS)):
            later = timezone.now() + timedelta(seconds=delays[following])
            play_sandbox_statuses.using(run_after=later).enqueue(
                number_id, recipients, accepted_at, following
            )
    return status

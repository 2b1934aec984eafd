"""The download of an inbound message's media, by a task (docs/media.md): the webhook
records the ChatMedia row and enqueues `fetch_media` (inbound/services/message_items.py),
which fetches the file from the number's channel into Django's storage
(inbound/services/media.py)."""

import logging

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django_tasks import task

from business_numbers.gateway import ChannelNotConfigured
from inbound.services import media as inbound_media
from messaging_project.worker.priorities import INTERACTIVE
from messaging_project.worker.retries import retry_later
from sending.models import ChatMedia, MediaState

logger = logging.getLogger(__name__)

# A fetch may run again after its worker died (the task runs at least once): downloading
# twice is harmless, so a run also takes over one left `fetching`, and only the latest
# attempt may record its file.
FETCHABLE = [MediaState.PENDING, MediaState.RETRYING, MediaState.FETCHING]


@task(priority=INTERACTIVE)
def fetch_media(media_pk: int) -> str:
    """Download one inbound message's media into storage; the state it is left in."""
    claimed = ChatMedia.objects.filter(pk=media_pk, state__in=FETCHABLE).update(
        state=MediaState.FETCHING, attempts=F("attempts") + 1, updated_at=timezone.now()
    )
    if not claimed:
        state = ChatMedia.objects.filter(pk=media_pk).values_list("state", flat=True).first()
        return state or "gone"
    media = ChatMedia.objects.select_related("organization").get(pk=media_pk)
    mine = ChatMedia.objects.filter(pk=media_pk, state=MediaState.FETCHING, attempts=media.attempts)
    try:
        stored = inbound_media.download(media)
    except ChannelNotConfigured as error:
        logger.warning("Media %s not fetched: the channel is not configured", media_pk)
        mine.update(state=MediaState.FAILED, last_error=error.detail, updated_at=timezone.now())
        return MediaState.FAILED
    except inbound_media.MediaFailed as failure:
        if failure.retryable and media.attempts < settings.TASK_MAX_ATTEMPTS:
            with transaction.atomic():
                retry_later(fetch_media, media_pk, attempt=media.attempts)
                mine.update(
                    state=MediaState.RETRYING,
                    last_error=failure.message,
                    updated_at=timezone.now(),
                )
            logger.warning(
                "Media %s not fetched (attempt %s), retrying later: %s",
                media_pk,
                media.attempts,
                failure.message,
            )
            return MediaState.RETRYING
        logger.warning("Media %s not fetched: %s", media_pk, failure.message)
        mine.update(state=MediaState.FAILED, last_error=failure.message, updated_at=timezone.now())
        return MediaState.FAILED
    recorded = mine.update(
        state=MediaState.AVAILABLE,
        file=stored.name,
        size=stored.size,
        mime_type=stored.mime_type,
        last_error="",
        updated_at=timezone.now(),
    )
    if not recorded:  # a later run took over meanwhile: its file is the one kept
        default_storage.delete(stored.name)
        return "superseded"
    return MediaState.AVAILABLE

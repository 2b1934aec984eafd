"""Writes of a contact's opt-out of campaigns: the words that set and clear it (an
inbound STOP or START, or the organization's own words), and the organization's words.
The inbound webhook, campaigns (the channel's error 131050) and the admin come through
here."""

from django.db import transaction
from django.utils import timezone

from accounts.models import Organization
from contacts.models import Contact, OptOutWords
from contacts.services import emit_contact
from events.models import Event

# Meta's own opt-out and opt-in words; an organization adds its own (OptOutWords).
STOP_WORDS = frozenset({"stop"})
START_WORDS = frozenset({"start"})


def normalized_words(text: str) -> str:
    """Case-folded, trimmed, inner whitespace collapsed: `  Stop ` is `stop`."""
    return " ".join(text.casefold().split())


def opt_out_intent(*, organization: Organization, text: str) -> bool | None:
    """True when an inbound text is an opt-out word, False for an opt-in word, else None.
    The organization's own words are read through it: loaded with it (select_related
    "opt_out_words"), they cost no query."""
    said = normalized_words(text)
    if not said or len(said) > 255:
        return None
    stop, start = set(STOP_WORDS), set(START_WORDS)
    try:
        words = organization.opt_out_words
    except OptOutWords.DoesNotExist:
        words = None
    if words is not None:
        stop |= {normalized_words(line) for line in words.stop_words.splitlines()} - {""}
        start |= {normalized_words(line) for line in words.start_words.splitlines()} - {""}
    if said in stop:
        return True
    if said in start:
        return False
    return None


def set_opted_out(*, contact_id: int, opted_out: bool) -> bool:
    """Mark a live contact opted out of campaigns (or back in); whether it changed."""
    with transaction.atomic():
        changed = (
            Contact.objects.live()
            .filter(pk=contact_id)
            .exclude(opted_out=opted_out)
            .update(opted_out=opted_out, updated_at=timezone.now())
        )
        if changed:
            contact = Contact.objects.get(pk=contact_id)
            emit_contact(Event.CONTACT_UPDATED, contact)
    return bool(changed)


def apply_opt_out_words(*, organization: Organization, contact: Contact, text: str) -> bool | None:
    """An inbound text from `contact`: STOP (or the organization's words) opts it out,
    START back in. The new state when it is one of those words, else None."""
    intent = opt_out_intent(organization=organization, text=text)
    if intent is not None:
        set_opted_out(contact_id=contact.pk, opted_out=intent)
        contact.opted_out = intent
    return intent


def save_opt_out_words(
    *, organization: Organization, stop_words: str, start_words: str
) -> OptOutWords:
    """The organization's own opt-out and opt-in words (one a line), created or replaced."""
    words, _ = OptOutWords.objects.update_or_create(
        organization=organization,
        defaults={"stop_words": stop_words, "start_words": start_words},
    )
    return words

"""The admin inbox's template helpers: a contact's number as people write it, and the
time left in a conversation's 24-hour customer-service window."""

from datetime import datetime

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext, ngettext

from messaging_project.core.phones import formatted_phone
from sending.models import Conversation

register = template.Library()


@register.filter
def phone(contact) -> str:
    """`+49 151 23456789`; a contact known only by its WhatsApp user id shows that."""
    return formatted_phone(contact.phone) if contact.phone else contact.user_id


@register.simple_tag
def window_left(conversation: Conversation, now: datetime) -> str:
    """How long free text may still be sent: "23 h left", "40 min left", or closed."""
    expires = conversation.window_expires_at
    if expires is None or expires <= now:
        label = gettext("Closed") if expires else gettext("Not open")
        return format_html('<span class="inbox-window closed">{}</span>', label)
    minutes = int((expires - now).total_seconds() // 60)
    if minutes >= 60:
        hours = minutes // 60
        left = ngettext("%(hours)d hour left", "%(hours)d hours left", hours) % {"hours": hours}
    else:
        left = ngettext("%(minutes)d minute left", "%(minutes)d minutes left", minutes) % {
            "minutes": minutes
        }
    return format_html(
        '<span class="inbox-window open" title="{}">{}</span>',
        expires.isoformat(),
        left,
    )

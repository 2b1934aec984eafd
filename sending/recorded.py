"""What sending recorded, told to the apps above it: messages in and out, conversations
created or reopened, and statuses. (A chat's moves are not told: the chat keeps the
status the figures counted until they count it again, sending.models.Chat.)

One explicit registry (CONTRIBUTING.md, "Where code goes"): an app above sending (campaigns, and the
inbox and analytics that come next) registers a listener for a kind of record in its
`AppConfig.ready()`, and sending calls every listener of that kind inside the
transaction that recorded it, so that what a listener writes commits or rolls back
with the record. Sending never imports the apps that listen.

A listener must be quick and must not call the network: it runs on the webhook's and
the send's hot paths. With no listener for a kind, announcing it costs a dict look-up.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from accounts.models import Organization
    from sending.models import Chat, Conversation


@dataclass(frozen=True)
class MessagesIn:
    """Inbound chats just recorded, of one organization (each with its contact)."""

    chats: "list[Chat]"


@dataclass(frozen=True)
class MessagesOut:
    """Outbound chats just recorded, of one organization: sent through this service
    (accepted or failed), or from the WhatsApp Business app (`source`)."""

    chats: "list[Chat]"


@dataclass(frozen=True)
class ConversationsChanged:
    """Conversations of one organization that chats just recorded created, or reopened
    (an inbound message to a `resolved` or `pending` one), each as it is now; announced
    before those chats are inserted, in their transaction."""

    created: "list[Conversation]"
    reopened: "list[Conversation]"


@dataclass(frozen=True)
class StatusesRecorded:
    """New status updates of one delivery that found their chats (`chats` by message id);
    `updates` are sending.services.StatusUpdate, oldest first."""

    organization: "Organization"
    updates: list[Any]
    chats: "dict[str, Chat]" = field(default_factory=dict)


@dataclass(frozen=True)
class StatusesKept:
    """New status updates that found no chat and carry a send's callback data: perhaps
    a send whose outcome is unknown. Kept aside until their chat is recorded."""

    organization: "Organization"
    updates: list[Any]


Record = MessagesIn | MessagesOut | ConversationsChanged | StatusesRecorded | StatusesKept
R = TypeVar(
    "R",
    MessagesIn,
    MessagesOut,
    ConversationsChanged,
    StatusesRecorded,
    StatusesKept,
)

LISTENERS: dict[type, list[Callable[[Any], None]]] = {}


def listen(kind: type[R], listener: Callable[[R], None]) -> None:
    """Call `listener(record)` for every record of `kind` (registered once, in ready())."""
    listeners = LISTENERS.setdefault(kind, [])
    if listener not in listeners:
        listeners.append(listener)


def announce(record: Record) -> None:
    """Tell the listeners of this record's kind, in the caller's transaction."""
    for listener in LISTENERS.get(type(record), ()):
        listener(record)


def listens_for(kind: type) -> bool:
    """Whether anyone listens for `kind`: a caller may skip building a record nobody reads."""
    return bool(LISTENERS.get(kind))

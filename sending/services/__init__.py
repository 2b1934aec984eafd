"""Sending's services: every write of the app, for the API, the admin and the commands.

- `send`: sending a message and recording its chat (`send_message`, `send_template`,
  `send_media`);
- `payloads`: the Cloud API's message payloads;
- `templates`: the templates synced from the channel, and a template send's text;
- `channel`: the channel settings (`configure_channel`).

The public service functions and their results and errors are exposed here, so that
callers write `services.send_message(...)`; everything else is imported from its module.
"""

from sending.services.channel import configure_channel
from sending.services.send import (
    SendFailed,
    SendNotRecorded,
    SendResult,
    send_media,
    send_message,
    send_template,
    synced_template,
)
from sending.services.templates import SyncResult, sync_templates

__all__ = [
    "SendFailed",
    "SendNotRecorded",
    "SendResult",
    "SyncResult",
    "configure_channel",
    "send_media",
    "send_message",
    "send_template",
    "sync_templates",
    "synced_template",
]

"""Sending's services: every write of the app, for the API, the admin, the commands and
the apps above (campaigns).

- `send`: sending a message and recording its chat (`send_message`, `send_template`,
  `send_media`); `chats`: the chat recorded exactly once for a channel's answer;
- `bulk`: one template to many numbers, the channel called from the caller's threads
  (`prepare_template_send`, `TemplateSend.call`, `record_answers`);
- `inbound`, `statuses`, `media`, `events`: what the WhatsApp webhook brings in (messages,
  statuses, media downloads) and the events they emit;
- `payloads`: the Cloud API's message payloads;
- `templates`: the templates synced from the channel, and a template send's text;
- `refusals`: sends refused before the channel is called (`TemplateNotApproved`,
  `ServiceWindowClosed`);
- `channel`: the channel settings (`configure_channel`, `set_service_window`);
- `settlement`: sends whose outcome is unknown, settled by their status webhooks
  (`settle_unknown_sends`, `hold_callback_data`, `chats_with_statuses`, and
  `listen_for_kept_statuses` / `listen_for_chat_statuses` for the apps that own them).

The public service functions and their results and errors are exposed here: another
app imports them from `sending.services`, never from the modules behind it.
"""

from sending.services.bulk import Outcome, TemplateSend, prepare_template_send, record_answers
from sending.services.channel import configure_channel, set_service_window
from sending.services.chats import SendFailed, SendNotRecorded
from sending.services.refusals import ServiceWindowClosed, TemplateNotApproved
from sending.services.send import SendResult, send_media, send_message, send_template
from sending.services.settlement import UnknownSend, hold_callback_data, settle_unknown_sends
from sending.services.statuses import (
    StatusUpdate,
    chats_with_statuses,
    listen_for_chat_statuses,
    listen_for_kept_statuses,
)
from sending.services.templates import SyncResult, check_template, sync_templates, synced_template

__all__ = [
    "Outcome",
    "SendFailed",
    "SendNotRecorded",
    "SendResult",
    "ServiceWindowClosed",
    "StatusUpdate",
    "SyncResult",
    "TemplateNotApproved",
    "TemplateSend",
    "UnknownSend",
    "chats_with_statuses",
    "check_template",
    "hold_callback_data",
    "configure_channel",
    "listen_for_chat_statuses",
    "listen_for_kept_statuses",
    "prepare_template_send",
    "record_answers",
    "send_media",
    "send_message",
    "send_template",
    "set_service_window",
    "settle_unknown_sends",
    "sync_templates",
    "synced_template",
]

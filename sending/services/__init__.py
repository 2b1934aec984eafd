"""Sending's services: every write of the app, for the API, the admin, the commands and
the apps above (campaigns).

- `send`: sending a message and recording its chat (`send_message`, `send_template`,
  `send_media`, and `send_content` for interactive, reaction, location and contacts
  messages); `chats`: the chat recorded exactly once for a channel's answer;
- `bulk`: one template to many numbers, the channel called from the caller's threads
  (`prepare_template_send`, `TemplateSend.call`, `record_answers`);
- `statuses`, `events`: statuses stored and chats moved forward (`store_statuses`), and
  the events they emit (the webhook's parsing, inbound media downloads and auto-replies
  are the `inbound` app's);
- `conversations`: the conversation of a contact and a number, created with its first chat
  and moved by every chat after;
- `payloads`: the Cloud API's message payloads;
- `refusals`: sends refused before the channel is called (`ServiceWindowClosed`, with
  `CONVERSATION_WINDOW` for a conversation's send);
- `settlement`: sends whose outcome is unknown, settled by their status webhooks
  (`settle_unknown_sends`, `hold_callback_data`, `chats_with_statuses`), and an
  auto-reply whose outcome is unknown (`record_unknown_send`, `auto_reply_chat_uuid`).

What sending recorded is told to the apps above through `sending.recorded`.

The public service functions and their results and errors are exposed here: another
app imports them from `sending.services`, never from the modules behind it.
"""

from sending.services.bulk import Outcome, TemplateSend, prepare_template_send, record_answers
from sending.services.chats import SendFailed, SendNotRecorded
from sending.services.conversations import insert_chat
from sending.services.refusals import CONVERSATION_WINDOW, ServiceWindowClosed
from sending.services.routing import FROM_UNKNOWN, Route, route
from sending.services.send import (
    SendResult,
    auto_reply_metadata,
    send_content,
    send_media,
    send_message,
    send_reaction,
    send_template,
)
from sending.services.settlement import (
    DIED_DURING_THE_CALL,
    UnknownSend,
    auto_reply_chat_uuid,
    hold_callback_data,
    is_settled,
    read_holding_callback_data,
    record_unknown_send,
    settle_unknown_sends,
)
from sending.services.statuses import StatusUpdate, chats_with_statuses, store_statuses

__all__ = [
    "CONVERSATION_WINDOW",
    "DIED_DURING_THE_CALL",
    "FROM_UNKNOWN",
    "Route",
    "Outcome",
    "SendFailed",
    "SendNotRecorded",
    "SendResult",
    "ServiceWindowClosed",
    "StatusUpdate",
    "TemplateSend",
    "UnknownSend",
    "auto_reply_chat_uuid",
    "auto_reply_metadata",
    "chats_with_statuses",
    "hold_callback_data",
    "insert_chat",
    "is_settled",
    "prepare_template_send",
    "read_holding_callback_data",
    "record_answers",
    "record_unknown_send",
    "route",
    "send_content",
    "send_media",
    "send_message",
    "send_reaction",
    "send_template",
    "settle_unknown_sends",
    "store_statuses",
]

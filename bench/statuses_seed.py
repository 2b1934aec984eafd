"""Seeds the `statuses` scenario's scratch database; prints what its load needs as JSON.

Run by bench/statuses.py as `python -m bench.statuses_seed CHATS RECEIVER_URL`: an
organization on the Cloud API (the bench's app secret signs its webhooks) with an event
endpoint on RECEIVER_URL subscribed to message.status.update, and CHATS outbound chats
`accepted`, each to a contact of its own in its own conversation, as a campaign leaves
them: the chats the status webhooks name (`wamid.statuses.N`). Generated in SQL with
generate_series, as bench/seed.py does.
"""

import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "messaging_project.settings")
django.setup()

from django.db import connection, transaction  # noqa: E402

from bench.payloads import ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID  # noqa: E402
from bench.seed import organization, seed_contacts  # noqa: E402
from business_numbers.services import configure_channel  # noqa: E402
from events.models import Event  # noqa: E402
from events.services import create_endpoint  # noqa: E402

PHONE_BASE = 449_000_000_000
CONVERSATIONS_SQL = """
INSERT INTO sending_conversation (uuid, organization_id, contact_id, number_id, status,
    labels, unread, last_message_at, status_changed_at, created_at)
SELECT gen_random_uuid(), %(org)s, contact.id, %(number)s, 'open', '[]'::jsonb, 0, now(),
    now(), now()
FROM contacts_contact contact WHERE contact.organization_id = %(org)s
"""
# The chat of contact number n (its phone is PHONE_BASE + n) is wamid.statuses.n.
CHATS_SQL = """
INSERT INTO sending_chat (uuid, organization_id, created_by, created_at, contact_id, type,
    wam_id, metadata, status, error_title, number_id, conversation_id, source)
SELECT gen_random_uuid(), %(org)s, 0, now(), conversation.contact_id, 'outbound',
    'wamid.statuses.' || (contact.phone::bigint - %(phone_base)s),
    '{"type": "template", "template": {"name": "order_update"}}'::jsonb,
    'accepted', '', %(number)s, conversation.id, 'api'
FROM sending_conversation conversation
JOIN contacts_contact contact ON contact.id = conversation.contact_id
WHERE conversation.organization_id = %(org)s
"""


def main() -> None:
    chats, receiver_url = int(sys.argv[1]), sys.argv[2]
    with transaction.atomic(), connection.cursor() as cursor:
        org, token = organization("Bench statuses")
        number = configure_channel(
            organization=org,
            phone_number_id=PHONE_NUMBER_ID,
            access_token=ACCESS_TOKEN,
            app_secret=APP_SECRET,
        )
        create_endpoint(organization=org, url=receiver_url, events=[Event.MESSAGE_STATUS_UPDATE])
        seed_contacts(cursor, org, chats, PHONE_BASE)
        cursor.execute(CONVERSATIONS_SQL, {"org": org.pk, "number": number.pk})
        cursor.execute(CHATS_SQL, {"org": org.pk, "number": number.pk, "phone_base": PHONE_BASE})
    print(json.dumps({"uuid": str(org.uuid), "token": token}))


if __name__ == "__main__":
    main()

"""Seeds the `inbox` scenario's scratch database; prints what its load needs as JSON.

Run by bench/inbox.py as `python -m bench.inbox_seed SIZES_JSON`: an organization with
`conversations` contacts, each in a conversation with the default number (one message
a minute apart, newest last), and the first of them holding `messages` chats. Generated
in SQL with generate_series, as bench/seed.py does; the counts the services keep are
then written from the rows. Then two staff members, a manager and an agent, and the live
checks of `live_pages` open inbox pages (inbox/live.py): a tenth of them the list, the
others the newest conversations, each looked at by one of the two in turn.
"""

import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "messaging_project.settings")
django.setup()

from django.db import connection, transaction  # noqa: E402
from django.urls import reverse  # noqa: E402

from accounts.models import Role  # noqa: E402
from accounts.services import create_staff_user  # noqa: E402
from bench.seed import organization, seed_contacts  # noqa: E402
from business_numbers.models import Number  # noqa: E402
from inbox import live  # noqa: E402
from inbox.queries import recount_conversations  # noqa: E402
from sending.models import Conversation  # noqa: E402

CONVERSATIONS_SQL = """
INSERT INTO sending_conversation (uuid, organization_id, contact_id, number_id, status,
    labels, unread, last_message_at, last_inbound_at, status_changed_at, created_at)
SELECT gen_random_uuid(), %(org)s, contact.id, %(number)s,
    (ARRAY['open', 'open', 'pending', 'resolved'])[1 + contact.id %% 4], '[]'::jsonb,
    contact.id %% 3, now() - (contact.id * interval '1 minute'),
    now() - (contact.id * interval '1 minute'), now(), now()
FROM contacts_contact contact WHERE contact.organization_id = %(org)s
"""

# The busiest conversation: its contact is the one with the lowest id (the newest message).
MESSAGES_SQL = """
INSERT INTO sending_chat (uuid, organization_id, created_by, created_at, contact_id, type,
    wam_id, metadata, status, error_title, number_id, conversation_id, source)
SELECT gen_random_uuid(), %(org)s, 0, now() - ((%(count)s - n) * interval '1 second'),
    conversation.contact_id,
    CASE WHEN n %% 2 = 0 THEN 'inbound' ELSE 'outbound' END,
    'wamid.inbox.' || n,
    jsonb_build_object('type', 'text', 'text', jsonb_build_object('body', 'Message ' || n)),
    CASE WHEN n %% 2 = 0 THEN 'received' ELSE 'read' END, '', %(number)s, conversation.id,
    CASE WHEN n %% 2 = 0 THEN 'customer' ELSE 'api' END
FROM generate_series(1, %(count)s) AS n,
    (SELECT id, contact_id FROM sending_conversation WHERE organization_id = %(org)s
     ORDER BY contact_id LIMIT 1) AS conversation
RETURNING conversation_id
"""


def live_paths(org, pages: int) -> list[str]:
    """The live-check URLs of `pages` open inbox pages, as the admin renders them."""
    staff = [
        create_staff_user(
            username=f"bench-{role}", organization=org, password="bench-Pass-4821", role=role
        )
        for role in (Role.MANAGER, Role.AGENT)
    ]
    lists = pages // 10
    newest = Conversation.objects.filter(organization=org).order_by("-last_message_at", "-id")
    # An agent sees the unassigned conversations: the seeded ones all are.
    watched = [{"organization": org.pk}] * lists + [
        {"conversation": pk} for pk in newest.values_list("pk", flat=True)[: pages - lists]
    ]
    paths = []
    for n, watch in enumerate(watched):
        user = staff[n % len(staff)]
        token = live.token_for(live.Watch(user=user.pk, agent=user is staff[1], **watch))
        paths.append(reverse("inbox_admin:live", args=[token]))
    return paths


def main() -> None:
    sizes = json.loads(sys.argv[1])  # {"conversations": 100000, "messages": 10000, ...}
    with transaction.atomic(), connection.cursor() as cursor:
        org, token = organization("Bench inbox")
        seed_contacts(cursor, org, sizes["conversations"], 448_000_000_000)
        number = Number.objects.default_for(org)
        cursor.execute(CONVERSATIONS_SQL, {"org": org.pk, "number": number.pk})
        cursor.execute(
            MESSAGES_SQL, {"org": org.pk, "number": number.pk, "count": sizes["messages"]}
        )
        busiest = cursor.fetchone()[0]
        # Its count of messages, which recordings keep and this insert bypasses.
        cursor.execute(
            "UPDATE sending_conversation SET messages = %s WHERE id = %s",
            [sizes["messages"], busiest],
        )
        cursor.execute("SELECT uuid FROM sending_conversation WHERE id = %s", [busiest])
        busiest_uuid = str(cursor.fetchone()[0])
        recount_conversations(org.pk)
        live_checks = live_paths(org, sizes["live_pages"])
    print(json.dumps({"token": token, "busiest": busiest_uuid, "live": live_checks}))


if __name__ == "__main__":
    main()

"""Seeds the benchmark's scratch database; prints what the load scenarios need as JSON.

Run by the `api` scenario (bench/api.py) as `python -m bench.seed SIZES_JSON` with
DATABASE_URL pointing at its scratch database. Organizations, tokens and channel
settings go through the services (a handful of rows); contacts, groups, canned replies
and chats are generated in SQL with generate_series, a million rows in seconds.
"""

import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "messaging_project.settings")
django.setup()

from django.db import connection, transaction  # noqa: E402

from accounts import services as accounts  # noqa: E402
from bench.payloads import ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID  # noqa: E402
from business_numbers.services import configure_channel  # noqa: E402
from contacts.services import recount_contact_blocks  # noqa: E402

GROUPS_PER_ORGANIZATION = 10
ADDRESS = (
    '{"street": "1 Main St", "city": "Springfield", "state": null, "zip": "12345", "country": "US"}'
)

CONTACTS_SQL = """
INSERT INTO contacts_contact (uuid, organization_id, created_by, created_at, updated_at,
    first_name, last_name, phone, email, address, contact_group_id, is_favorite, user_id,
    opted_out)
SELECT gen_random_uuid(), %(org)s, 0, now(), now(),
    'First' || n, 'Last' || n, (%(phone_base)s + n)::text, 'contact' || n || '@example.com',
    %(address)s::jsonb,
    CASE WHEN n %% 3 = 0 THEN %(first_group)s + n %% %(groups)s END,
    n %% 10 = 0, '', false
FROM generate_series(1, %(count)s) AS n
"""

GROUPS_SQL = """
INSERT INTO contacts_contactgroup (uuid, organization_id, created_by, created_at, updated_at, name)
SELECT gen_random_uuid(), %(org)s, 0, now(), now(), 'Group ' || n
FROM generate_series(1, %(groups)s) AS n
RETURNING id
"""

# A mix of the four criteria, each trigger unique: "keyword 17 offer" and so on.
REPLIES_SQL = """
INSERT INTO canned_replies_cannedreply (uuid, organization_id, created_by, created_at,
    updated_at, name, trigger, match_criteria, metadata)
SELECT gen_random_uuid(), %(org)s, 0, now(), now(), 'Reply ' || n,
    'keyword ' || n || ' offer',
    (ARRAY['contains', 'exact match', 'starts with', 'ends with'])[1 + n %% 4],
    jsonb_build_object('type', 'text', 'data', jsonb_build_object('text', 'Answer ' || n))
FROM generate_series(1, %(count)s) AS n
"""

# Outbound chats the webhook scenario's status updates refer to.
# The chats are one contact's, from the organization's number, in their conversation.
CONVERSATION_SQL = """
INSERT INTO sending_conversation (uuid, organization_id, contact_id, number_id, created_at)
SELECT gen_random_uuid(), %(org)s,
    (SELECT min(id) FROM contacts_contact WHERE organization_id = %(org)s), %(number)s, now()
RETURNING id
"""
CHATS_SQL = """
INSERT INTO sending_chat (uuid, organization_id, created_by, created_at, contact_id, type,
    wam_id, metadata, status, error_title, number_id, conversation_id)
SELECT gen_random_uuid(), %(org)s, 0, now(),
    (SELECT min(id) FROM contacts_contact WHERE organization_id = %(org)s),
    'outbound', 'wamid.bench.' || n, '{"type": "text", "text": {"body": "Hello"}}'::jsonb,
    'accepted', '', %(number)s, %(conversation)s
FROM generate_series(1, %(count)s) AS n
"""


def organization(name: str, *, rate_limit: int | None = None):
    org = accounts.create_organization(name=name, rate_limit=rate_limit)
    return org, accounts.issue_token(organization=org, name="bench").token


def seed_contacts(cursor, org, count: int, phone_base: int) -> None:
    cursor.execute(GROUPS_SQL, {"org": org.pk, "groups": GROUPS_PER_ORGANIZATION})
    first_group = min(row[0] for row in cursor.fetchall())
    cursor.execute(
        CONTACTS_SQL,
        {
            "org": org.pk,
            "count": count,
            "phone_base": phone_base,
            "address": ADDRESS,
            "first_group": first_group,
            "groups": GROUPS_PER_ORGANIZATION,
        },
    )
    # The rows bypassed the services: count the organization's total and id blocks in SQL.
    recount_contact_blocks(organization_id=org.pk)


def main() -> None:
    sizes = json.loads(sys.argv[1])  # {"contacts": [10000, 100000, 1000000], "replies": 10000, ...}
    out: dict = {"organizations": {}}
    sized = []
    with transaction.atomic(), connection.cursor() as cursor:
        for index, count in enumerate(sizes["contacts"]):
            org, token = organization(f"Bench {count} contacts")
            sized.append(org)
            # Distinct, possible UK mobile numbers (447...) per organization.
            seed_contacts(cursor, org, count, 447_000_000_000 + index * 10_000_000)
            out["organizations"][f"contacts_{count}"] = {
                "uuid": str(org.uuid),
                "token": token,
                "contacts": count,
            }
        small_org = sized[0]
        cursor.execute(REPLIES_SQL, {"org": small_org.pk, "count": sizes["replies"]})
        # The app secret signs the status webhook's deliveries; nothing sends from here.
        number = configure_channel(
            organization=small_org,
            phone_number_id=PHONE_NUMBER_ID,
            access_token=ACCESS_TOKEN,
            app_secret=APP_SECRET,
        )
        cursor.execute(CONVERSATION_SQL, {"org": small_org.pk, "number": number.pk})
        conversation = cursor.fetchone()[0]
        chats = {"org": small_org.pk, "count": sizes["chats"], "number": number.pk}
        cursor.execute(CHATS_SQL, {**chats, "conversation": conversation})
        # The writes, and the sandbox's sends.
        org, token = organization("Bench writes")
        out["organizations"]["writes"] = {"uuid": str(org.uuid), "token": token}
        org, token = organization("Bench burst", rate_limit=60)
        out["organizations"]["burst"] = {"uuid": str(org.uuid), "token": token}
    print(json.dumps(out))


if __name__ == "__main__":
    main()

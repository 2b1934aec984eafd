"""Seeds the `analytics` scenario's scratch database; prints what its load needs as JSON.

Run by bench/analytics.py as `python -m bench.analytics_seed SIZES_JSON`: an organization
with two numbers whose rollup holds `chats` messages over the last `days` days, written
straight into the rollup's rows (every day and number, four billable categories), as
the fold would have left them. The chats themselves are not
written: the API reads the rollup only, so their number changes nothing it does.
"""

import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "messaging_project.settings")
django.setup()

from django.db import connection, transaction  # noqa: E402

from bench.seed import organization  # noqa: E402
from business_numbers.models import Number  # noqa: E402

# Each (day, number) row's share of the chats: a tenth inbound, the rest outbound
# at their furthest status.
MESSAGES_SQL = """
INSERT INTO analytics_dailymessages (organization_id, number_id, day, outbound, sent,
    delivered, read, failed, inbound)
SELECT %(org)s, number_id, current_date - d, %(each)s * 9 / 10, %(each)s * 88 / 100,
    %(each)s * 8 / 10, %(each)s / 2, %(each)s / 50, %(each)s / 10
FROM generate_series(0, %(days)s - 1) AS d, unnest(%(numbers)s::bigint[]) AS number_id
"""
BILLABLE_SQL = """
INSERT INTO analytics_dailybillable (organization_id, number_id, day, category, messages)
SELECT %(org)s, number_id, current_date - d, category, %(each)s / 5
FROM generate_series(0, %(days)s - 1) AS d, unnest(%(numbers)s::bigint[]) AS number_id,
    unnest(ARRAY['marketing', 'utility', 'authentication', 'service']) AS category
"""


def main() -> None:
    sizes = json.loads(sys.argv[1])  # {"chats": 10000000, "days": 90}
    with transaction.atomic(), connection.cursor() as cursor:
        org, token = organization("Bench analytics")
        first = Number.objects.default_for(org)
        second = Number.objects.create(organization=org, label="Second", kind="sandbox")
        numbers = [first.pk, second.pk]
        rows = sizes["days"] * len(numbers)
        values = {
            "org": org.pk,
            "numbers": numbers,
            "days": sizes["days"],
            "each": sizes["chats"] // rows,
        }
        cursor.execute(MESSAGES_SQL, values)
        cursor.execute(BILLABLE_SQL, values)
    print(json.dumps({"token": token}))


if __name__ == "__main__":
    main()

"""The `throughput` scenario: one number's campaign at 500 a second, with its statuses
flowing, and the same number's rate shared by two worker processes.

1. `campaign at 500/s`: a contact group of 20,000 at rate 500 through the Cloud API stand-in
   (200 ms delay), which posts each message's `sent` and then `delivered` status
   webhook back, one status per webhook, as WhatsApp does (bench/cloud_stub.py). From
   the arrivals at the stand-in: messages per second sustained, the busiest second,
   numbers sent twice; the CPU each kind of process spent per message (bench/cpu.py,
   statuses included); how many chats reached `delivered` once the webhooks drained.
2. `two workers, one number`: two task worker processes (standing for two machines)
   send a campaign of 10,000 at 500 at once, each one of its two sender tasks (the
   worker of `make run` is stopped meanwhile). The number's turns are in the database
   (campaigns/pacing.py), so together they keep its rate: the busiest second across
   both, and none sent twice.
"""

import json
import subprocess
import time

import requests

from bench import cpu
from bench.campaigns import (
    TEMPLATE,
    create_campaign,
    measured,
    numbers,
    read_arrivals,
    wait_done,
)
from bench.load import busy_cpu_seconds
from bench.payloads import CLOUD_API_SEED
from bench.report import target
from bench.stack import PYTHON, ROOT, Stack, log, stop_process_groups, stopped
from bench.statuses import QUEUED

RATE = 500
FULL = {"recipients": 20_000, "two_workers_recipients": 10_000}
QUICK = {"recipients": 3_000, "two_workers_recipients": 2_000}
# The sustained rate a campaign at RATE must reach: turns are 2% more than 1 / rate
# apart (campaigns/pacing.py), so 490 is the schedule itself.
SUSTAINED = 490


def seed(recipients: int) -> str:
    """The Cloud API organization, and a group of `recipients` contacts (a campaign's
    list of phones stops at 10,000); prints its "group" too."""
    return (
        CLOUD_API_SEED.rstrip().removesuffix(
            'print(json.dumps({"uuid": str(org.uuid), "token": token}))'
        )
        + f"""
from contacts.models import Contact
from contacts.services import contacts_for_phones, create_contact_group
group = create_contact_group(organization=org, name="Bench throughput")
# bench.campaigns.numbers("161"), as the service keeps them: digits only.
phones = [f"49161{{n:08d}}" for n in range({recipients})]
for start in range(0, len(phones), 1000):
    contacts_for_phones(organization=org, phones=phones[start:start + 1000])
Contact.objects.filter(organization=org).update(contact_group=group)
print(json.dumps({{"uuid": str(org.uuid), "token": token, "group": str(group.uuid)}}))
"""
    )


def create_group_campaign(base: str, token: str, group: str, rate: int) -> str:
    response = requests.post(
        f"{base}/api/campaigns",
        json={"name": "Bench", "template": TEMPLATE, "contact_group": group, "rate": rate},
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    response.raise_for_status()
    return response.json()["id"]


def delivered_chats(stack: Stack, phones: list[str]) -> int:
    """Chats to these numbers whose status reached `delivered` (their webhooks handled)."""
    wanted = [phone.lstrip("+") for phone in phones]
    return stack.sql(
        "SELECT count(*) FROM sending_chat c JOIN contacts_contact k ON k.id = c.contact_id "
        "WHERE c.status = 'delivered' AND k.phone = ANY(%s)",
        [wanted],
    )[0]


def wait_delivered(stack: Stack, phones: list[str], timeout: float = 120) -> int:
    deadline, seen = time.monotonic() + timeout, -1
    while time.monotonic() < deadline:
        seen = delivered_chats(stack, phones)
        if seen >= len(phones):
            break
        time.sleep(1)
    return seen


def one_campaign(stack: Stack, token: str, group: str, recipients: int) -> dict:
    phones = numbers("161", recipients)  # the group's (seed)
    before, busy_before, started = cpu.snapshot(), busy_cpu_seconds(), time.monotonic()
    uuid_ = create_group_campaign(stack.base, token, group, RATE)
    shown = wait_done(stack.base, token, uuid_, recipients / RATE * 4 + 120)
    delivered = wait_delivered(stack, phones)
    spent = cpu.spent(before, cpu.snapshot())
    busy_cores = (busy_cpu_seconds() - busy_before) / (time.monotonic() - started)
    row = measured(read_arrivals(stack.arrivals), phones, RATE)
    row.update(
        cpu_ms_per_message={kind: round(ms / recipients, 2) for kind, ms in spent.items()},
        busy_cores=round(busy_cores, 2),  # the whole machine's, meanwhile
        delivered=delivered,
        counts={k: shown[k] for k in ("status", "total", "sent", "failed", "unknown")},
    )
    return row


def start_worker(stack: Stack, worker_id: str) -> subprocess.Popen:
    """A task worker of its own that runs one task at a time, as `make run`'s runs."""
    return subprocess.Popen(
        [PYTHON, "manage.py", "db_worker", "--worker-id", worker_id, "--threads", "1"],
        cwd=ROOT,
        env=stack.env,
        stdout=stack.log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def two_workers(stack: Stack, token: str, recipients: int) -> dict:
    """A campaign sent by two worker processes at once. `make run`'s worker is stopped
    meanwhile and two started that run one task at a time, so that each takes one of the
    campaign's two sender tasks."""
    # Stopped at once: the web process may still be handling the first campaign's status
    # webhooks (transactions open), which stopped() would otherwise wait out.
    with stopped(stack.worker_pids()):
        workers = [start_worker(stack, f"bench-{n}") for n in range(2)]
        try:
            deadline = time.monotonic() + 60
            while (
                stack.sql(
                    "SELECT count(*) FROM base_workerheartbeat WHERE worker_id LIKE 'bench-%%'"
                )[0]
                < 2
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the two workers did not start:\n{stack.server_log()}")
                time.sleep(0.5)
            phones = numbers("162", recipients)
            uuid_ = create_campaign(stack.base, token, phones, RATE)
            wait_done(stack.base, token, uuid_, recipients / RATE * 4 + 120)
            senders = stack.sql(
                "SELECT count(DISTINCT r.claimed_by) FROM campaigns_recipient r "
                "JOIN campaigns_campaign c ON c.id = r.campaign_id WHERE c.uuid = %s",
                [uuid_],
            )[0]
        finally:
            stop_process_groups(workers)
    row = measured(read_arrivals(stack.arrivals), phones, RATE)
    row["workers_that_sent"] = senders
    return row


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else FULL
    with Stack(
        template,
        seed=seed(config["recipients"]),
        use_redis=False,
        post_statuses=True,
        threads=8,
        **QUEUED,
    ) as stack:
        seeded = json.loads(stack.seeded)
        token = seeded["token"]
        stack.wait_drained("before the campaign")
        one = one_campaign(stack, token, seeded["group"], config["recipients"])
        log(f"campaign at {RATE}/s: {json.dumps(one)}")
        stack.wait_drained("before the two workers")
        two = two_workers(stack, token, config["two_workers_recipients"])
        log(f"two workers, one number: {json.dumps(two)}")
    sustained = one["sustained_per_s"] or 0.0
    name, pair = f"campaign at {RATE}/s", f"two workers, one number at {RATE}/s"
    return {
        "targets": {
            f"{name}: messages per second sustained": target(
                sustained, sustained >= SUSTAINED, goal=f">= {SUSTAINED}"
            ),
            f"{name}: most arrivals within one second": target(
                one["busiest_second"], one["busiest_second"] <= RATE, goal=f"<= {RATE}"
            ),
            f"{name}: numbers sent twice": target(
                one["sent_twice"], one["sent_twice"] == 0, goal="0"
            ),
            f"{name}: chats delivered (statuses handled)": target(
                one["delivered"], one["delivered"] == one["recipients"], goal=str(one["recipients"])
            ),
            f"{pair}: most arrivals within one second": target(
                two["busiest_second"], two["busiest_second"] <= RATE, goal=f"<= {RATE}"
            ),
            f"{pair}: numbers sent twice": target(
                two["sent_twice"], two["sent_twice"] == 0, goal="0"
            ),
            f"{pair}: worker processes that sent": target(
                two["workers_that_sent"], two["workers_that_sent"] == 2, goal="2"
            ),
        },
        "config": config,
        "campaign": one,
        "two_workers": two,
    }

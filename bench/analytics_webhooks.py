"""What keeping the figures costs the webhooks (part of the `analytics` scenario): the
same inbound-message and status deliveries against two stacks of this tree, up side by
side, one as it runs in production (**on**) and one whose analytics app registers no
listener and runs no fold, on a database without the trigger that marks the chats moved
since counted (**off**, bench/analytics_off.py), so that the difference is the rollup's
statements, the records sending builds for them, those marks and the worker's fold (its
PostgreSQL backend counted with the stack's), and nothing else.

Interleaved rounds of a few seconds (the machine is shared), 8 wrk connections each:

- **inbound**: one text from a new sender: a contact, a conversation opened (Awaiting)
  and the message counted;
- **statuses**: one `sent` status with WhatsApp's billable pricing, for an outbound chat
  not seen before: the chat moved (marked, then counted as sent by the fold), the
  message billed once and its category counted, the most the rollup writes for a status.

The targets: each kind's throughput on, at least 95% of off, as the median over the
rounds of each round's own ratio. Beside them, each side's CPU per request (its web
workers and its PostgreSQL backends, read from /proc): the same cost seen another way,
less moved by what else runs on a shared machine than the throughput is.
"""

import json
import os
import time
from pathlib import Path

from bench.load import paired_ratio, summarize, wrk_once
from bench.payloads import delivery, message_body, signature
from bench.report import target
from bench.stack import PYTHON, Stack, log

CONFIG = {"rounds": 6, "round_s": 4}
QUICK = {"rounds": 2, "round_s": 1}
# Status bodies per second of a run: more than the stack can take, so that wrk never
# comes round to a body again (a repeat would be a duplicate, cheaper than a status).
BODIES_PER_S = 1500
CONNECTIONS = 8
# Two stacks up at once on one PostgreSQL (100 connections, maybe shared): 2 web workers
# of 4 threads take wrk's 8 connections at once, and the task worker (idle here) has 4.
STACK = {"workers": 2, "threads": 4, "TASK_WORKER_THREADS": "4"}
OFF = {"DJANGO_SETTINGS_MODULE": "bench.analytics_off"}

# An organization on the stand-in with outbound chats `wamid.bench.N` (N from 1) waiting
# for their first status, written in SQL (bench/seed.py's); prints {"uuid"}.
SEED = """
import json
from django.db import connection
from bench.payloads import ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID
from bench.seed import CHATS_SQL, CONVERSATION_SQL, organization, seed_contacts
from business_numbers.services import configure_channel
org, _ = organization("Bench analytics webhooks")
number = configure_channel(organization=org, phone_number_id=PHONE_NUMBER_ID,
                           access_token=ACCESS_TOKEN, app_secret=APP_SECRET)
with connection.cursor() as cursor:
    seed_contacts(cursor, org, 1, 447_100_000_000)
    cursor.execute(CONVERSATION_SQL, {{"org": org.pk, "number": number.pk}})
    conversation = cursor.fetchone()[0]
    cursor.execute(CHATS_SQL, {{"org": org.pk, "number": number.pk, "count": {chats},
                                "conversation": conversation}})
print(json.dumps({{"uuid": str(org.uuid)}}))
"""

FOLD = "from analytics.folding import fold; fold()"
# The off stack's database without what only the figures use (bench/analytics_off.py):
# the trigger that marks the chats moved since counted (sending.models.MovedChat).
OFF_SEED = """
with connection.cursor() as cursor:
    cursor.execute("DROP TRIGGER sending_chat_moved ON sending_chat")
"""

# WhatsApp's pricing on a billable message's status (Cloud API webhook reference).
PRICING = {"billable": True, "pricing_model": "PMP", "category": "marketing", "type": "regular"}


def status_body(chat: int) -> bytes:
    """One delivery: chat `wamid.bench.<chat>` sent, billable."""
    item = {
        "id": f"wamid.bench.{chat}",
        "status": "sent",
        "timestamp": str(int(time.time())),
        "recipient_id": "447100000001",
        "pricing": PRICING,
    }
    return delivery({"statuses": [item]})


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """The user and system CPU time the processes `pids` used so far (those gone: none)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICKS


class Load:
    """The deliveries for one stack, each status for a chat of its own."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.path = f"/webhooks/whatsapp/{json.loads(stack.seeded)['uuid']}"
        self.next_chat = 1
        self.next_phone = 447_200_000_000

    def bodies(self, kind: str, count: int) -> list[tuple[str, bytes]]:
        if kind == "statuses":
            made = [status_body(self.next_chat + n) for n in range(count)]
            self.next_chat += count
        else:
            made = [message_body(str(self.next_phone + n), "bench") for n in range(count)]
            self.next_phone += count
        return [(signature(body), body) for body in made]

    def serving_pids(self) -> list[int]:
        """The stack's web workers and the PostgreSQL backends on its database."""
        backends = "SELECT array_agg(pid) FROM pg_stat_activity WHERE datname = current_database()"
        return self.stack.web_pids() + list(self.stack.sql(backends)[0] or [])

    def measure(self, kind: str, seconds: float) -> dict:
        """One wrk run, with the CPU its serving processes used meanwhile (`cpu_ms`)."""
        body = self.bodies(kind, int(seconds * BODIES_PER_S))
        pids = self.serving_pids()
        before = cpu_seconds(pids)
        run = wrk_once(
            self.stack.base,
            method="POST",
            path=self.path,
            signed=body,
            connections=CONNECTIONS,
            duration=seconds,
            scratch=self.stack.scratch,
        )
        # Backends opened during the run count in full; those closed are not counted.
        pids = sorted(set(pids) | set(self.serving_pids()))
        return {**run, "cpu_ms": (cpu_seconds(pids) - before) * 1000}


KINDS = ("inbound", "statuses")
SIDES = ("on", "off")


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else CONFIG
    seconds = config["round_s"]
    # Every body a status run may send, warm-up included, has its chat.
    chats = (config["rounds"] * seconds + 1) * BODIES_PER_S
    seed = SEED.format(chats=chats)
    with (
        Stack(template, seed=seed, **STACK) as on,  # type: ignore[arg-type]
        Stack(template, seed=seed + OFF_SEED, **OFF, **STACK) as off,  # type: ignore[arg-type]
    ):
        loads = {"on": Load(on), "off": Load(off)}
        for side in SIDES:  # warm-up, not counted: the first requests pay for imports
            for kind in KINDS:
                loads[side].measure(kind, 1)
        for stack in (on, off):
            stack.wait_drained("before the rounds")
        runs: dict[tuple[str, str], list[dict]] = {(k, s): [] for k in KINDS for s in SIDES}
        for round_number in range(config["rounds"]):
            # Off first in every other round, so that neither side always follows the other.
            sides = SIDES if round_number % 2 == 0 else SIDES[::-1]
            for kind in KINDS:
                for side in sides:
                    loads[side].stack.analyze()
                    runs[(kind, side)].append(loads[side].measure(kind, seconds))
        for stack in (on, off):
            stack.wait_drained("after the rounds")
        # The increments the worker has not folded yet, folded as a read would.
        on.run([PYTHON, "manage.py", "shell", "-c", FOLD])
        counted = on.sql(
            "SELECT coalesce(sum(sent), 0), coalesce(sum(inbound), 0) FROM analytics_dailymessages"
        )
        ignored = off.sql("SELECT count(*) FROM analytics_dailymessages")[0]
    rows = {f"{kind}_{side}": summarize(runs[(kind, side)], connections=CONNECTIONS)
            for kind in KINDS for side in SIDES}  # fmt: skip
    for (kind, side), measured in runs.items():
        answered = sum(run["requests"] for run in measured)
        cpu_ms = sum(run["cpu_ms"] for run in measured)
        rows[f"{kind}_{side}"]["cpu_ms_per_request"] = round(cpu_ms / max(1, answered), 2)
    cpu = {
        kind: round(
            rows[f"{kind}_off"]["cpu_ms_per_request"] / rows[f"{kind}_on"]["cpu_ms_per_request"],
            3,
        )
        for kind in KINDS
    }
    errors = sum(row["non_2xx"] + row["socket_errors"] for row in rows.values())
    ratios = {kind: paired_ratio(rows[f"{kind}_on"], rows[f"{kind}_off"]) for kind in KINDS}
    # Every status answered moved a chat of its own, and every one was counted, warm-up
    # included; the stack without listeners counted nothing.
    statuses_sent = rows["statuses_on"]["requests"]
    log(
        f"analytics on/off: inbound {rows['inbound_on']['rps']}/{rows['inbound_off']['rps']} "
        f"req/s (x{ratios['inbound']}), statuses {rows['statuses_on']['rps']}/"
        f"{rows['statuses_off']['rps']} req/s (x{ratios['statuses']}); errors {errors}; "
        f"counted sent {counted[0]} (rounds {statuses_sent}), inbound {counted[1]}; "
        f"off's rows {ignored}; CPU ms a request on/off: inbound "
        f"{rows['inbound_on']['cpu_ms_per_request']}/{rows['inbound_off']['cpu_ms_per_request']}"
        f" (x{cpu['inbound']}), statuses {rows['statuses_on']['cpu_ms_per_request']}/"
        f"{rows['statuses_off']['cpu_ms_per_request']} (x{cpu['statuses']})"
    )
    honest = errors == 0 and ignored == 0 and counted[0] >= statuses_sent
    return {
        "targets": {
            "analytics kept: inbound webhook req/s relative to without": target(
                ratios["inbound"], ratios["inbound"] >= 0.95 and honest, goal=">= 0.95"
            ),
            "analytics kept: status webhook req/s relative to without": target(
                ratios["statuses"], ratios["statuses"] >= 0.95 and honest, goal=">= 0.95"
            ),
        },
        "rounds": [config["rounds"], seconds],
        "ratio_inbound": ratios["inbound"],
        "ratio_statuses": ratios["statuses"],
        # Off's CPU per request over on's: the throughput ratio a saturated CPU would give.
        "cpu_ratio_inbound": cpu["inbound"],
        "cpu_ratio_statuses": cpu["statuses"],
        "counted_sent": int(counted[0]),
        "counted_inbound": int(counted[1]),
        **rows,
    }

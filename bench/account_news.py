"""The `account_news` scenario: the webhook's fields other than messages (templates, the
number's health; inbound/services/account_news.py), handled, against messages alone.

Three kinds of signed delivery, in interleaved rounds of a few seconds (abab...), 8 wrk
connections each:

- **messages**: one inbound text from a new sender (matching no canned reply);
- **news**: one change of a template's status, the number's quality, its messaging
  limit or the account's alerts, taking turns, so that most of them write and emit;
- **mixed**: a message and a piece of news in the same delivery.

The target: news deliveries go at least 95% as fast as messages alone, the ratio being
the median over the rounds of each round's own ratio (the machine is shared).

And the inbound webhook against the tree before these fields were handled
(bench/baseline.py, BEFORE_ACCOUNT_NEWS): the same message deliveries, the same wrk
offer, on a stack of its own serving that commit, up beside this one and taking its turn
in the same rounds (**baseline**). The target: this tree's messages at least 95% of the
baseline's. A clone without that commit reports the target skipped, with the reason.
"""

import contextlib
import json
import time

from bench.baseline import BEFORE_ACCOUNT_NEWS, baseline_stack, missing_reason
from bench.load import paired_ratio, summarize, wrk_once
from bench.payloads import (
    ACCESS_TOKEN,
    APP_SECRET,
    PHONE_NUMBER_ID,
    message_body,
    signature,
)
from bench.report import target
from bench.stack import Stack, log

BUSINESS_ACCOUNT_ID = "100000000000000"  # payloads.delivery()'s entry id
TEMPLATE = "order_update"

SEED = f"""
import json
from accounts.services import create_organization, issue_token
from business_numbers.models import MessageTemplate
from business_numbers.services import configure_channel
org = create_organization(name="Bench account news")
number = configure_channel(organization=org, phone_number_id="{PHONE_NUMBER_ID}",
                           access_token="{ACCESS_TOKEN}", app_secret="{APP_SECRET}",
                           business_account_id="{BUSINESS_ACCOUNT_ID}")
MessageTemplate.objects.create(organization=org, number=number, name="{TEMPLATE}", language="en_US",
                               external_id="1689556908129832", status="APPROVED",
                               components=[{{"type": "BODY", "text": "Order {{{{1}}}}"}}])
token = issue_token(organization=org, name="bench").token
print(json.dumps({{"uuid": str(org.uuid), "token": token}}))
"""

# The baseline's organization, seeded in the tree before the account's news (its
# configure_channel was sending's): only messages are sent to it, so no template.
BASELINE_SEED = f"""
import json
from accounts.services import create_organization
from sending.services import configure_channel
org = create_organization(name="Bench account news baseline")
configure_channel(organization=org, phone_number_id="{PHONE_NUMBER_ID}",
                  access_token="{ACCESS_TOKEN}", app_secret="{APP_SECRET}",
                  business_account_id="{BUSINESS_ACCOUNT_ID}")
print(json.dumps({{"uuid": str(org.uuid)}}))
"""

CONFIG = {"rounds": 6, "round_s": 4}
QUICK = {"rounds": 2, "round_s": 1}


def news_change(n: int) -> dict:
    """The n-th piece of news: the four kinds in turn, each flipping a value."""
    kind, flip = n % 4, (n // 4) % 2
    if kind == 0:
        return {
            "field": "message_template_status_update",
            "value": {
                "event": ("PAUSED", "APPROVED")[flip],
                "message_template_id": 1689556908129832,
                "message_template_name": TEMPLATE,
                "message_template_language": "en_US",
                "reason": "NONE",
            },
        }
    if kind == 1:
        return {
            "field": "phone_number_quality_update",
            "value": {
                "display_phone_number": "15550000000",
                "event": ("FLAGGED", "UNFLAGGED")[flip],
                "current_limit": "TIER_10K",
            },
        }
    if kind == 2:
        return {
            "field": "business_capability_update",
            "value": {"max_daily_conversations_per_business": ("TIER_2K", "TIER_10K")[flip]},
        }
    return {
        "field": "account_alerts",
        "value": {
            "entity_type": "BUSINESS",
            "entity_id": "506914307656634",
            "alert_info": {
                "alert_severity": "WARNING",
                "alert_status": "ACTIVE",
                "alert_type": "INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED",
                "alert_description": f"Limits cannot be increased yet ({n}).",
            },
        },
    }


def news_body(n: int, *, with_message_from: str | None = None) -> bytes:
    changes = [news_change(n)]
    if with_message_from is not None:
        message = json.loads(message_body(with_message_from, "bench"))
        changes = message["entry"][0]["changes"] + changes
    entry = {"id": BUSINESS_ACCOUNT_ID, "time": int(time.time()), "changes": changes}
    return json.dumps({"object": "whatsapp_business_account", "entry": [entry]}).encode()


def bodies(kind: str, count: int, phone_base: int) -> list[tuple[str, bytes]]:
    if kind == "messages":
        made = [message_body(str(phone_base + n), "bench") for n in range(count)]
    elif kind == "news":
        made = [news_body(n) for n in range(count)]
    else:
        made = [news_body(n, with_message_from=str(phone_base + n)) for n in range(count)]
    return [(signature(body), body) for body in made]


KINDS = ("messages", "news", "mixed")


def measure(stack: Stack, kind: str, seconds: float, phone_base: int) -> dict:
    """One wrk run of `kind`'s deliveries against `stack`'s organization."""
    organization = json.loads(stack.seeded)["uuid"]
    return wrk_once(
        stack.base,
        method="POST",
        path=f"/webhooks/whatsapp/{organization}",
        signed=bodies(kind, int(seconds * 800), phone_base),
        connections=8,
        duration=seconds,
        scratch=stack.scratch,
    )


def run(template: str, quick: bool) -> dict:
    config = QUICK if quick else CONFIG
    seconds = config["round_s"]
    no_baseline = missing_reason(BEFORE_ACCOUNT_NEWS)
    if no_baseline:
        log(f"no baseline: {no_baseline}; its target is skipped")
    kinds = KINDS if no_baseline else (*KINDS, "baseline")
    runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
    with contextlib.ExitStack() as stacks:
        stack = stacks.enter_context(Stack(template, seed=SEED))
        serving = {kind: stack for kind in KINDS}
        if not no_baseline:
            serving["baseline"] = stacks.enter_context(
                baseline_stack(BEFORE_ACCOUNT_NEWS, seed=BASELINE_SEED)
            )
        for kind in kinds:  # warm-up, not counted: the first requests pay for imports
            sent = "messages" if kind == "baseline" else kind
            measure(serving[kind], sent, 1, 447_200_000_000 + kinds.index(kind))
        up = list({id(each): each for each in serving.values()}.values())
        for each in up:
            each.wait_drained("before the rounds")
        for round_number in range(config["rounds"]):
            # Each round starts one kind later, so no kind always follows the same one.
            shift = round_number % len(kinds)
            for kind in kinds[shift:] + kinds[:shift]:
                serving[kind].analyze()
                phone_base = 447_300_000_000 + int(time.time() * 10) % 90_000 * 1000
                sent = "messages" if kind == "baseline" else kind
                runs[kind].append(measure(serving[kind], sent, seconds, phone_base))
        for each in up:
            each.wait_drained("after the rounds")
    rows = {kind: summarize(runs[kind], connections=8) for kind in kinds}
    news = paired_ratio(rows["news"], rows["messages"])
    mixed = paired_ratio(rows["mixed"], rows["messages"])
    errors = sum(row["non_2xx"] + row["socket_errors"] for row in rows.values())
    log(
        f"webhook req/s: messages {rows['messages']['rps']}, news {rows['news']['rps']} "
        f"(x{news}), message and news {rows['mixed']['rps']} (x{mixed}); errors {errors}"
    )
    targets = {
        "account news webhooks: req/s relative to messages alone": target(
            news, news >= 0.95 and errors == 0, goal=">= 0.95"
        ),
    }
    result: dict = {"rounds": [config["rounds"], seconds]}
    if no_baseline:
        result["baseline"] = f"skipped: {no_baseline}"
    else:
        today = paired_ratio(rows["messages"], rows["baseline"])
        log(
            f"inbound message webhooks: this tree {rows['messages']['rps']} req/s, "
            f"{BEFORE_ACCOUNT_NEWS[:12]} {rows['baseline']['rps']} req/s (x{today})"
        )
        targets["inbound webhook: req/s relative to the tree before the account's news"] = target(
            today, today >= 0.95 and errors == 0, goal=">= 0.95"
        )
        result["baseline"] = BEFORE_ACCOUNT_NEWS
        result["ratio_messages_to_baseline"] = today
    return {
        "targets": targets,
        **result,
        "ratio_news_to_messages": news,
        "ratio_message_and_news_to_messages": mixed,
        **rows,
    }

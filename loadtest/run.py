"""`make loadtest`: a bounded load test on loopback, then a consistency check.

(Over 400 lines: one script, read top to bottom: start, load, then every check.)

It starts gunicorn (gthread workers, as `make run` does) against a scratch database
(PostgreSQL when one answers on 127.0.0.1:5432, else a SQLite file), creates a few
organizations (the sandbox channel, and one on a loopback Cloud API stand-in), and
sends a fixed number of mixed requests from several threads at once. Afterwards it
compares what the clients were told with what the database and the API hold:

- no response of 500 or above, and every status the one the request deserved;
- every 200 create exists exactly once, every duplicate created nothing, and each
  record's last edit and deletion are what the database holds;
- `meta.total` equals the real number of live records, per organization;
- another organization's uuid is always a 404 and never shows up in a list;
- every 200 send is one chat with the channel's id, every refusal one failed chat,
  and each chat's status is the highest one its webhooks reported (never lower).

Each thread owns the records it creates (edits and deletes are its own), so the
expected end state is exact; concurrency comes from threads sharing organizations,
phone numbers and the uniqueness rules. Exits non-zero on any inconsistency.
"""

import argparse
import hashlib
import hmac
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.cloud_api_server import FakeCloudApi, Reply, graph_error  # noqa: E402
from devtools.loopback import free_port, wait_until_listening  # noqa: E402

POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PHONE_NUMBER_ID = "106540352242922"
STATUS_RANK = {"accepted": 0, "sent": 1, "delivered": 2, "read": 3}
RANK_STATUS = {rank: status for status, rank in STATUS_RANK.items()}
REFUSE = "refuse_this"  # a send carrying this (text or template name) is refused: a 422

# How often each kind of request is made, relative to the others.
WEIGHTS = {
    "contact_create": 16,
    "contact_duplicate": 5,
    "contact_list": 8,
    "contact_get": 4,
    "contact_edit": 7,
    "contact_delete": 5,
    "group_create": 4,
    "group_list": 2,
    "group_delete": 2,
    "reply_create": 4,
    "reply_edit": 3,
    "reply_delete": 2,
    "reply_list": 2,
    "send_text": 6,
    "send_buttons": 3,
    "send_template": 3,
    "webhook_status": 8,
    "chat_list": 2,
    "cross_org_probe": 8,
}


class RefusingCloudApi(FakeCloudApi):
    """The stand-in, refusing (Graph 131047) any text that asks for it."""

    def default_reply(self, request):
        payload = request.json if isinstance(request.json, dict) else {}
        if REFUSE in json.dumps(payload):
            return Reply(400, graph_error(131047, "Re-engagement message"))
        return super().default_reply(request)


@dataclass
class Org:
    name: str
    uuid: str = ""
    token: str = ""
    app_secret: str = ""  # set for the organization on the Cloud API stand-in


@dataclass
class Record:
    kind: str  # contact, group, reply
    org: str
    value: str | None  # what the last write set: contact last_name, group name, reply trigger
    phone: str = ""
    pinned: bool = False
    deleted: bool = False


class OutOfRequests(Exception):
    """The fixed number of requests has been made."""


@dataclass
class Ledger:
    """What the clients were told, shared by the threads."""

    budget: int = 0  # requests left to make
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: list[tuple[str, int, float]] = field(default_factory=list)  # op, status, ms
    problems: list[str] = field(default_factory=list)
    records: dict[str, Record] = field(default_factory=dict)  # uuid -> record
    sent: dict[str, tuple[str, int]] = field(default_factory=dict)  # wam_id -> org, best rank
    events: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    refused: Counter = field(default_factory=Counter)  # org -> refused sends
    listed: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # org -> uuids
    duplicates: int = 0

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)


class Worker:
    """One client thread: a session, its own records, a seeded choice of requests."""

    def __init__(self, index: int, base: str, orgs: list[Org], ledger: Ledger, seed: int):
        self.base = base
        self.orgs = orgs
        self.ledger = ledger
        self.rng = random.Random(seed * 1000 + index)
        self.index = index
        self.session = requests.Session()
        self.session.trust_env = False
        self.own: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.wam_ids: list[str] = []
        self.counter = 0

    def call(self, op: str, org: Org, method: str, path: str, body=None, headers=None):
        with self.ledger.lock:
            if self.ledger.budget <= 0:
                raise OutOfRequests
            self.ledger.budget -= 1
        start = time.perf_counter()
        try:
            response = self.session.request(
                method,
                self.base + path,
                json=body if headers is None else None,
                data=body if headers is not None else None,
                headers=headers or {"Authorization": f"Bearer {org.token}"},
                timeout=60,
            )
        except requests.RequestException as error:
            self.ledger.problem(f"{op}: {method} {path} failed: {type(error).__name__}")
            with self.ledger.lock:
                self.ledger.calls.append((op, 0, 0.0))
            return None
        elapsed = (time.perf_counter() - start) * 1000
        with self.ledger.lock:
            self.ledger.calls.append((op, response.status_code, elapsed))
        if response.status_code >= 500:
            self.ledger.problem(f"{op}: {method} {path} -> {response.status_code}")
        return response

    def expect(self, op: str, response, *statuses: int) -> bool:
        if response is None:
            return False
        if response.status_code not in statuses:
            self.ledger.problem(
                f"{op}: expected {statuses}, got {response.status_code}: {response.text[:200]}"
            )
            return False
        return True

    def unique(self) -> str:
        self.counter += 1
        return f"t{self.index}n{self.counter}"

    def run(self) -> None:
        """Seeded requests until the shared budget is spent."""
        kinds, weights = list(WEIGHTS), list(WEIGHTS.values())
        try:
            while True:
                op = self.rng.choices(kinds, weights)[0]
                getattr(self, op)(self.rng.choice(self.orgs))
        except OutOfRequests:
            pass

    # Contacts.

    def phone(self, org: Org) -> str:
        # A small shared pool per organization: threads collide on numbers for real.
        return f"+1415{self.orgs.index(org):02d}{self.rng.randrange(60):05d}"

    def contact_create(self, org: Org) -> None:
        phone = self.phone(org)
        groups = self.own[org.uuid]["group"]
        group = self.rng.choice(groups) if groups and self.rng.random() < 0.3 else None
        body = {"first_name": "Load", "phone": phone, "contact_group": group}
        response = self.call("contact_create", org, "POST", "/api/contacts", body)
        if not self.expect("contact_create", response, 200, 400):
            return
        if response.status_code == 400:
            if set(response.json().get("errors", {})) != {"phone"}:
                self.ledger.problem(f"contact_create: 400 not about the phone: {response.text}")
            with self.ledger.lock:
                self.ledger.duplicates += 1
            return
        uid = response.json()["id"]
        with self.ledger.lock:
            self.ledger.records[uid] = Record("contact", org.uuid, None, phone[1:])
        self.own[org.uuid]["contact"].append(uid)

    def contact_duplicate(self, org: Org) -> None:
        # The pinned contacts are never deleted, so their numbers are always taken.
        with self.ledger.lock:
            pinned = [u for u, r in self.ledger.records.items() if r.org == org.uuid and r.pinned]
        phone = "+" + self.ledger.records[self.rng.choice(pinned)].phone
        body = {"first_name": "Twin", "phone": phone}
        response = self.call("contact_duplicate", org, "POST", "/api/contacts", body)
        if self.expect("contact_duplicate", response, 400):
            with self.ledger.lock:
                self.ledger.duplicates += 1

    def contact_list(self, org: Org) -> None:
        self.list_of("contact_list", org, "/api/contacts")

    def list_of(self, op: str, org: Org, path: str) -> None:
        page = self.rng.randint(1, 3)
        response = self.call(op, org, "GET", f"{path}?per_page=20&page={page}")
        if self.expect(op, response, 200):
            uuids = {item["uuid"] for item in response.json()["data"] if "uuid" in item}
            with self.ledger.lock:
                self.ledger.listed[org.uuid] |= uuids

    def contact_get(self, org: Org) -> None:
        uid = self.pick(org, "contact")
        if uid is None:
            return self.contact_list(org)
        response = self.call("contact_get", org, "GET", f"/api/contacts/{uid}")
        if self.expect("contact_get", response, 200) and response.json()["data"]["uuid"] != uid:
            self.ledger.problem(f"contact_get: asked for {uid}, got another")

    def contact_edit(self, org: Org) -> None:
        uid = self.pick(org, "contact")
        if uid is None:
            return self.contact_create(org)
        value = self.unique()
        response = self.call(
            "contact_edit", org, "PUT", f"/api/contacts/{uid}", {"last_name": value}
        )
        if self.expect("contact_edit", response, 200):
            self.ledger.records[uid].value = value

    def contact_delete(self, org: Org) -> None:
        self.delete(org, "contact", "/api/contacts")

    def pick(self, org: Org, kind: str) -> str | None:
        mine = self.own[org.uuid][kind]
        return self.rng.choice(mine) if mine else None

    def delete(self, org: Org, kind: str, path: str) -> None:
        uid = self.pick(org, kind)
        if uid is None:
            return
        response = self.call(f"{kind}_delete", org, "DELETE", f"{path}/{uid}")
        if self.expect(f"{kind}_delete", response, 200):
            self.ledger.records[uid].deleted = True
            self.own[org.uuid][kind].remove(uid)
            again = self.call(f"{kind}_delete", org, "DELETE", f"{path}/{uid}")
            self.expect(f"{kind}_delete twice", again, 404)

    # Groups and canned replies.

    def group_create(self, org: Org) -> None:
        name = f"Group {self.unique()}"
        response = self.call("group_create", org, "POST", "/api/contact-groups", {"name": name})
        if self.expect("group_create", response, 200):
            uid = response.json()["id"]
            with self.ledger.lock:
                self.ledger.records[uid] = Record("group", org.uuid, name)
            self.own[org.uuid]["group"].append(uid)
            same = self.call("group_create", org, "POST", "/api/contact-groups", {"name": name})
            self.expect("group_create duplicate", same, 400)

    def group_list(self, org: Org) -> None:
        self.list_of("group_list", org, "/api/contact-groups")

    def group_delete(self, org: Org) -> None:
        self.delete(org, "group", "/api/contact-groups")

    def reply_create(self, org: Org) -> None:
        trigger = f"hours {self.unique()}"
        body = {
            "name": f"Reply {trigger}",
            "trigger": trigger,
            "match_criteria": self.rng.choice(["contains", "exact match", "starts with"]),
            "response_type": "text",
            "response": "We open at nine.",
        }
        response = self.call("reply_create", org, "POST", "/api/canned-replies", body)
        if self.expect("reply_create", response, 200):
            uid = response.json()["id"]
            with self.ledger.lock:
                self.ledger.records[uid] = Record("reply", org.uuid, trigger)
            self.own[org.uuid]["reply"].append(uid)

    def reply_edit(self, org: Org) -> None:
        uid = self.pick(org, "reply")
        if uid is None:
            return self.reply_create(org)
        trigger = f"open {self.unique()}"
        path = f"/api/canned-replies/{uid}"
        response = self.call("reply_edit", org, "PATCH", path, {"trigger": trigger})
        if self.expect("reply_edit", response, 200):
            self.ledger.records[uid].value = trigger

    def reply_delete(self, org: Org) -> None:
        self.delete(org, "reply", "/api/canned-replies")

    def reply_list(self, org: Org) -> None:
        self.list_of("reply_list", org, "/api/canned-replies")

    # Sends, chats and webhooks.

    def send(self, op: str, org: Org, path: str, body: dict) -> None:
        refuse = bool(org.app_secret) and self.rng.random() < 0.15
        if refuse and "template" in body:
            body = {**body, "template": {**body["template"], "name": REFUSE}}
        elif refuse:
            body = {**body, "message": f"{REFUSE} {body['message']}"}
        response = self.call(op, org, "POST", path, body)
        if refuse:
            if self.expect(op, response, 422):
                with self.ledger.lock:
                    self.ledger.refused[org.uuid] += 1
            return
        if not self.expect(op, response, 200):
            return
        wam_id = response.json()["data"]["data"]["messages"][0]["id"]
        with self.ledger.lock:
            if wam_id in self.ledger.sent:
                self.ledger.problem(f"{op}: the channel's id {wam_id} was answered twice")
            self.ledger.sent[wam_id] = (org.uuid, 0)
        if org.app_secret:
            self.wam_ids.append(wam_id)

    def send_text(self, org: Org) -> None:
        body = {"phone": self.phone(org), "message": f"Hello {self.unique()}"}
        self.send("send_text", org, "/api/send", body)

    def send_buttons(self, org: Org) -> None:
        body = {
            "phone": self.phone(org),
            "message": "Did it arrive?",
            "header": "Delivery",
            "buttons": [{"id": "yes", "title": "Yes"}, {"id": "no", "title": "Not yet"}],
        }
        self.send("send_buttons", org, "/api/send", body)

    def send_template(self, org: Org) -> None:
        template = {"name": "hello_world", "language": {"code": "en_US"}}
        self.send(
            "send_template",
            org,
            "/api/send/template",
            {"phone": self.phone(org), "template": template},
        )

    def webhook_status(self, org: Org) -> None:
        cloud = next(o for o in self.orgs if o.app_secret)
        if not self.wam_ids:
            return self.send_text(cloud)
        wam_id = self.rng.choice(self.wam_ids)
        status = self.rng.choice(["sent", "delivered", "read"])
        payload = {
            "object": "whatsapp_business_account",
            "entry": [
                {
                    "id": "1",
                    "changes": [
                        {
                            "field": "messages",
                            "value": {
                                "messaging_product": "whatsapp",
                                "metadata": {"phone_number_id": PHONE_NUMBER_ID},
                                "statuses": [
                                    {
                                        "id": wam_id,
                                        "status": status,
                                        # One timestamp per status: a redelivery is a duplicate.
                                        "timestamp": str(1_700_000_000 + STATUS_RANK[status]),
                                        "recipient_id": "4915000000000",
                                    }
                                ],
                            },
                        }
                    ],
                }
            ],
        }
        body = json.dumps(payload).encode()
        signature = hmac.new(cloud.app_secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {"Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={signature}"}
        response = self.call(
            "webhook_status", cloud, "POST", f"/webhooks/whatsapp/{cloud.uuid}", body, headers
        )
        if self.expect("webhook_status", response, 200):
            with self.ledger.lock:
                owner, best = self.ledger.sent[wam_id]
                self.ledger.sent[wam_id] = (owner, max(best, STATUS_RANK[status]))
                self.ledger.events[wam_id].add(status)

    def chat_list(self, org: Org) -> None:
        self.list_of("chat_list", org, "/api/chats")

    def cross_org_probe(self, org: Org) -> None:
        with self.ledger.lock:
            others = [(u, r) for u, r in self.ledger.records.items() if r.org != org.uuid]
        if not others:
            return
        uid, record = self.rng.choice(others)
        path = {
            "contact": "/api/contacts",
            "group": "/api/contact-groups",
            "reply": "/api/canned-replies",
        }[record.kind]
        method = self.rng.choice(["GET", "PUT", "DELETE"])
        body = {"last_name": "intruder", "name": "intruder", "trigger": "intruder"}
        response = self.call(
            "cross_org_probe", org, method, f"{path}/{uid}", body if method == "PUT" else None
        )
        self.expect("cross_org_probe", response, 404)


# Setting up: database, organizations, server.


def postgres_answers() -> bool:
    try:
        import psycopg

        psycopg.connect(POSTGRES_ADMIN, connect_timeout=2).close()
        return True
    except Exception:
        return False


def command(name: str, *args: str) -> str:
    """Run a management command in this process; its last line of output."""
    from django.core.management import call_command

    out = StringIO()
    call_command(name, *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip().splitlines()[-1] if out.getvalue().strip() else ""


def create_organizations(count: int) -> list[Org]:
    orgs = []
    for index in range(count):
        org = Org(name=f"Load {index}")
        org.uuid = command("create_organization", org.name)
        org.token = command("issue_token", org.uuid, "--name", "loadtest")
        orgs.append(org)
    # The last one sends through the Cloud API stand-in and receives its webhooks.
    cloud = orgs[-1]
    cloud.app_secret = "loadtest-app-secret"
    command(
        "configure_channel",
        cloud.uuid,
        "--phone-number-id",
        PHONE_NUMBER_ID,
        "--access-token",
        "loadtest-access-token",
        "--app-secret",
        cloud.app_secret,
    )
    return orgs


def start_gunicorn(
    env: dict[str, str], port: int, workers: int, threads: int, log
) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "messaging_project.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--no-control-socket",
            "--graceful-timeout",
            "10",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=log,
    )
    if not wait_until_listening(port, timeout=60, process=server):
        server.kill()
        raise SystemExit("gunicorn did not start; see its log above")
    return server


def pin_contacts(base: str, orgs: list[Org], ledger: Ledger) -> None:
    """Three contacts per organization that nobody deletes: the duplicates' targets."""
    session = requests.Session()
    session.trust_env = False
    for org_index, org in enumerate(orgs):
        for number in range(3):
            phone = f"+1416{org_index:02d}{number:05d}"
            response = session.post(
                f"{base}/api/contacts",
                json={"first_name": "Pinned", "phone": phone},
                headers={"Authorization": f"Bearer {org.token}"},
                timeout=60,
            )
            if response.status_code != 200:
                raise SystemExit(f"could not create a pinned contact: {response.text}")
            uid = response.json()["id"]
            ledger.records[uid] = Record("contact", org.uuid, None, phone[1:], pinned=True)


# Checking.


def check(base: str, orgs: list[Org], ledger: Ledger) -> list[tuple[str, bool, str]]:
    """Compare the ledger with the database and the API; (check, passed, detail) rows."""
    from canned_replies.models import CannedReply
    from contacts.models import Contact, ContactGroup
    from sending.models import Chat, ChatStatusEvent

    results = []
    session = requests.Session()
    session.trust_env = False

    def row(name: str, failures: list[str]) -> None:
        results.append((name, not failures, "; ".join(failures[:5]) or "ok"))

    statuses = Counter(status for _, status, _ in ledger.calls)
    row(
        "no response >= 500, no broken connection",
        [
            f"{status}: {count}"
            for status, count in statuses.items()
            if status >= 500 or status == 0
        ],
    )
    row("every status was the expected one", list(ledger.problems))

    models = {"contact": Contact, "group": ContactGroup, "reply": CannedReply}
    value_field = {"contact": "last_name", "group": "name", "reply": "trigger"}
    failures: list[str] = []
    for kind, model in models.items():
        expected = {u: r for u, r in ledger.records.items() if r.kind == kind}
        rows = {
            str(u): (org, v, d)
            for u, org, v, d in model.objects.filter(uuid__in=list(expected)).values_list(
                "uuid", "organization__uuid", value_field[kind], "deleted_at"
            )
        }
        for uid, record in expected.items():
            if uid not in rows:
                failures.append(f"{kind} {uid} answered 200 but is not stored")
                continue
            org, value, deleted_at = rows[uid]
            if str(org) != record.org:
                failures.append(f"{kind} {uid} stored under another organization")
            if value != record.value:
                failures.append(
                    f"{kind} {uid}: {value_field[kind]} is {value!r}, last write {record.value!r}"
                )
            if (deleted_at is not None) != record.deleted:
                failures.append(
                    f"{kind} {uid}: deleted in the database is {deleted_at is not None}"
                )
    # Records made by the API carry a first name; sends make nameless contacts.
    made = Contact.objects.exclude(first_name=None).count()
    want = sum(1 for r in ledger.records.values() if r.kind == "contact")
    if made != want:
        failures.append(f"{made} named contacts stored, {want} creates answered 200")
    for kind in ("group", "reply"):
        stored = models[kind].objects.count()
        want = sum(1 for r in ledger.records.values() if r.kind == kind)
        if stored != want:
            failures.append(f"{stored} {kind}s stored, {want} creates answered 200")
    row("no lost or duplicated record; last edits and deletes kept", failures)

    failures = []
    live_phones = Counter(
        Contact.objects.filter(deleted_at=None).values_list("organization_id", "phone")
    )
    failures += [
        f"phone {phone} is live {n} times" for (_, phone), n in live_phones.items() if n > 1
    ]
    detached = Contact.objects.filter(deleted_at=None, contact_group__deleted_at__isnull=False)
    failures += [f"contact {c.uuid} still in a deleted group" for c in detached]
    row("a phone is live once per organization; deleted groups hold no contacts", failures)

    failures = []
    resources = {
        "/api/contacts": Contact,
        "/api/contact-groups": ContactGroup,
        "/api/canned-replies": CannedReply,
        "/api/chats": Chat,
    }
    for org in orgs:
        headers = {"Authorization": f"Bearer {org.token}"}
        for path, model in resources.items():
            total = session.get(f"{base}{path}?per_page=1", headers=headers, timeout=60).json()[
                "meta"
            ]["total"]
            live = model.objects.filter(organization__uuid=org.uuid)
            if hasattr(model, "deleted_at"):
                live = live.filter(deleted_at=None)
            if total != live.count():
                failures.append(f"{org.name} {path}: meta.total {total}, {live.count()} live rows")
    row("meta.total equals the live rows, per organization", failures)

    failures = []
    owners = {}
    for model in (Contact, ContactGroup, CannedReply, Chat):
        owners.update(
            {str(u): str(o) for u, o in model.objects.values_list("uuid", "organization__uuid")}
        )
    for org_uuid, seen in ledger.listed.items():
        failures += [
            f"{uid} of another organization listed" for uid in seen if owners.get(uid) != org_uuid
        ]
    probes = sum(1 for op, _, _ in ledger.calls if op == "cross_org_probe")
    row(f"no cross-organization leak ({probes} probes, all 404)", failures)

    failures = []
    chats = {c.wam_id: c for c in Chat.objects.exclude(wam_id=None).select_related("organization")}
    for wam_id, (org_uuid, best) in ledger.sent.items():
        chat = chats.get(wam_id)
        if chat is None:
            failures.append(f"send {wam_id} answered 200 but has no chat")
            continue
        if str(chat.organization.uuid) != org_uuid:
            failures.append(f"chat {wam_id} under another organization")
        if STATUS_RANK.get(chat.status, -1) != best:
            failures.append(
                f"chat {wam_id} is {chat.status}, its best webhook said {RANK_STATUS[best]}"
            )
    if len(chats) != len(ledger.sent):
        failures.append(
            f"{len(chats)} chats with a channel id, {len(ledger.sent)} sends answered 200"
        )
    for org in orgs:
        failed = Chat.objects.filter(organization__uuid=org.uuid, status="failed").count()
        if failed != ledger.refused[org.uuid]:
            failures.append(
                f"{org.name}: {failed} failed chats, {ledger.refused[org.uuid]} refusals"
            )
    events = Counter(ChatStatusEvent.objects.values_list("wam_id", flat=True))
    for wam_id, seen in ledger.events.items():
        if events[wam_id] != len(seen):
            failures.append(
                f"{wam_id}: {events[wam_id]} status events stored, {len(seen)} distinct sent"
            )
    row("sends: one chat each, refusals failed, statuses never moved back", failures)
    return results


def summary(ledger: Ledger, elapsed: float) -> str:
    by_op: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for op, status, ms in ledger.calls:
        by_op[op].append((status, ms))
    lines = [f"{'request':<26}{'count':>7}  {'p50 ms':>7}  {'p95 ms':>7}  statuses"]
    for op in sorted(by_op):
        calls = by_op[op]
        times = sorted(ms for _, ms in calls)
        counts = Counter(status for status, _ in calls)
        shown = " ".join(f"{status}x{n}" for status, n in sorted(counts.items()))
        p50, p95 = times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.95))]
        lines.append(f"{op:<26}{len(calls):>7}  {p50:>7.1f}  {p95:>7.1f}  {shown}")
    total = len(ledger.calls)
    lines.append(f"{'total':<26}{total:>7}  in {elapsed:.1f} s ({total / elapsed:.0f} requests/s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--requests", type=int, default=3000, help="operations to run (default 3000)"
    )
    parser.add_argument("--threads", type=int, default=8, help="client threads (default 8)")
    parser.add_argument("--organizations", type=int, default=4, help="at least 2 (default 4)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database", choices=["auto", "postgres", "sqlite"], default="auto")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--server-threads", type=int, default=8)
    args = parser.parse_args(argv)
    if args.organizations < 2:
        parser.error("--organizations must be at least 2")

    scratch = Path(tempfile.mkdtemp(prefix="loadtest-"))
    use_postgres = args.database == "postgres" or (args.database == "auto" and postgres_answers())
    database_name = f"loadtest_{uuid.uuid4().hex[:10]}"
    if use_postgres:
        import psycopg

        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{database_name}"')
        database_url = f"postgres://postgres@127.0.0.1:5432/{database_name}"
    else:
        database_url = f"sqlite:///{scratch / 'db.sqlite3'}"

    graph = RefusingCloudApi().start()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "VAR_DIR": str(scratch),
        "SECRET_KEY": "loadtest-secret-key",
        "DEBUG": "false",
        "API_RATE_LIMIT": "1000000",
        "WHATSAPP_GRAPH_URL": graph.url,
        "WHATSAPP_TIMEOUT": "10",
        "REDIS_URL": "",
        "LOG_LEVEL": "ERROR",
        # The ledger posts the statuses it checks itself; the sandbox's own would add more.
        "SANDBOX_STATUS_DELAYS": "off",
    }
    os.environ.update(
        {k: env[k] for k in ("DATABASE_URL", "VAR_DIR", "SECRET_KEY", "API_RATE_LIMIT")}
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "messaging_project.settings")
    import django

    django.setup()
    from django.db import connections

    server = None
    log = open(scratch / "gunicorn.log", "w+")  # noqa: SIM115  (read back on failure)
    try:
        print(f"loadtest: {'PostgreSQL' if use_postgres else 'SQLite'} scratch database, migrating")
        command("migrate", "--noinput")
        orgs = create_organizations(args.organizations)
        connections.close_all()
        port = free_port()
        server = start_gunicorn(env, port, args.workers, args.server_threads, log)
        base = f"http://127.0.0.1:{port}"
        ledger = Ledger()
        pin_contacts(base, orgs, ledger)

        ledger.budget = args.requests
        workers = [Worker(i, base, orgs, ledger, args.seed) for i in range(args.threads)]
        print(
            f"loadtest: {args.requests} requests from {args.threads} threads, "
            f"{args.organizations} organizations, gunicorn {args.workers}x{args.server_threads}"
        )
        start = time.perf_counter()
        with ThreadPoolExecutor(args.threads) as pool:
            for future in [pool.submit(worker.run) for worker in workers]:
                future.result()
        elapsed = time.perf_counter() - start

        results = check(base, orgs, ledger)
        print(summary(ledger, elapsed))
        print(
            f"duplicates refused: {ledger.duplicates}; sends answered 200: {len(ledger.sent)}; "
            f"refused: {sum(ledger.refused.values())}; channel requests: {len(graph.requests)}"
        )
        print()
        for name, passed, detail in results:
            print(f"{'PASS' if passed else 'FAIL'}  {name}" + ("" if passed else f": {detail}"))
        failed = [name for name, passed, _ in results if not passed]
        if failed:
            log.seek(0)
            print("\ngunicorn log (last lines):\n" + "".join(log.readlines()[-30:]))
        return 1 if failed else 0
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        log.close()
        graph.stop()
        connections.close_all()
        shutil.rmtree(scratch, ignore_errors=True)
        if use_postgres:
            import psycopg

            with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{database_name}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())

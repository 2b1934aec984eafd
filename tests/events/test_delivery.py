"""Events reach a real receiver on loopback: signed, retried with the same id, recorded."""

import json
from collections import Counter

import pytest
from django.db import IntegrityError, connection, transaction
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from events import services
from events.delivery import (
    DeliveryQueue,
    Outcome,
    claim,
    endpoints_of,
    fan_out,
    fan_out_all,
    record,
)
from events.models import Delivery, DeliveryStatus, new_message_id
from tests.background import make_due, run_tasks
from tests.events.conftest import deliveries, run_all, verified

pytestmark = pytest.mark.django_db

CONTACT = {"phone": "+14155552671", "first_name": "Ada", "last_name": "Lovelace"}


def test_a_created_contact_is_posted_signed_with_the_contact_as_listed(api, endpoint, receiver):
    uuid = api.post("/api/contacts", CONTACT, format="json").json()["id"]
    assert receiver.requests == []  # sent by the worker, not in the request
    run_all()
    [request] = receiver.requests
    body = verified(endpoint, request)
    assert body["type"] == "contact.created"
    assert body["data"] == api.get(f"/api/contacts/{uuid}").json()["data"]
    assert body["timestamp"].endswith("Z")
    assert request.headers["content-type"] == "application/json"
    assert request.headers["webhook-id"].startswith("msg_")
    assert int(request.headers["webhook-timestamp"]) > 0


def test_a_signature_with_another_secret_does_not_verify(api, endpoint, receiver):
    api.post("/api/contacts", CONTACT, format="json")
    run_all()
    with pytest.raises(WebhookVerificationError):
        Webhook(services.rotate_secret(endpoint=endpoint).secret).verify(
            receiver.requests[0].body, receiver.requests[0].headers
        )


def test_a_receiver_failing_twice_gets_the_event_a_third_time_with_the_same_id(
    api, endpoint, receiver
):
    receiver.fail_next(500, 503)
    api.post("/api/contacts", CONTACT, format="json")
    run_tasks()
    [delivery] = api.get(f"/api/webhooks/{endpoint.uuid}/deliveries").json()["data"]
    assert delivery["status"] == "pending"
    assert delivery["attempts"] == 1
    assert delivery["response_status"] == 500
    assert delivery["next_attempt_at"] is not None
    assert run_tasks() == 0  # the retry waits for its time
    run_all()
    assert len(receiver.requests) == 3
    assert {r.headers["webhook-id"] for r in receiver.requests} == {delivery["id"]}
    assert len({r.body for r in receiver.requests}) == 1  # the same body each time
    for request in receiver.requests:
        verified(endpoint, request)
    [delivery] = api.get(f"/api/webhooks/{endpoint.uuid}/deliveries").json()["data"]
    assert delivery["status"] == "succeeded"
    assert delivery["attempts"] == 3
    assert delivery["response_status"] == 200
    assert delivery["next_attempt_at"] is None


def test_a_delivery_fails_after_the_last_retry_of_the_schedule(api, endpoint, receiver, settings):
    receiver.status = 500
    api.post("/api/contacts", CONTACT, format="json")
    run_all()
    assert len(receiver.requests) == 1 + len(settings.WEBHOOK_RETRY_SCHEDULE)
    [delivery] = deliveries()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 3
    assert "receiver says no" in delivery.last_error


def test_a_refused_connection_is_retried(api, org_a, receiver):
    from devtools.loopback import free_port

    endpoint = services.create_endpoint(
        organization=org_a, url=f"http://127.0.0.1:{free_port()}/hook"
    )
    api.post("/api/contacts", CONTACT, format="json")
    run_tasks()
    [delivery] = deliveries(endpoint=endpoint)
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.response_status is None
    assert delivery.last_error.startswith("RequestFailed: Failed to connect to 127.0.0.1")
    assert "Connection refused" in delivery.last_error


def test_a_claim_takes_at_most_its_limit_in_order(api, endpoint, receiver):
    for n in range(3):
        api.post("/api/contacts", {**CONTACT, "phone": f"+1415555267{n}"}, format="json")
    fan_out_all()

    first = claim(2)
    assert [item.pk for item in first] == sorted(item.pk for item in first)
    assert len(first) == 2
    assert len(claim(2)) == 1
    assert claim(2) == []


def test_a_claimed_delivery_is_not_claimed_again_while_its_attempt_is_under_way(
    api, endpoint, receiver
):
    api.post("/api/contacts", CONTACT, format="json")
    fan_out_all()
    [taken] = claim(10)
    assert taken.attempt == 1
    assert claim(10) == []  # under way: no other worker takes it
    assert run_tasks() == 0
    [delivery] = deliveries()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("pending", 1, None)
    assert receiver.requests == []


def test_a_succeeded_delivery_is_not_attempted_again(api, endpoint, receiver):
    api.post("/api/contacts", CONTACT, format="json")
    assert run_tasks() == 1
    assert run_tasks() == 0
    assert claim(10) == []
    assert len(receiver.requests) == 1


def test_an_attempt_whose_worker_died_is_posted_again_once_its_lease_is_over(
    api, endpoint, receiver
):
    """Duplicates are possible after a crash (docs/events.md): the receiver dedupes on
    webhook-id. A run that finds the attempt claimed but its lease over takes it."""
    from datetime import timedelta

    from django.utils import timezone

    api.post("/api/contacts", CONTACT, format="json")
    [delivery] = deliveries()
    # As if a worker claimed attempt 1 and died while posting.
    [dead] = claim(10)
    assert run_tasks() == 0  # it may still be posting
    # The dead worker's lease is over: another takes the same attempt.
    Delivery.objects.filter(pk=delivery.pk).update(
        claimed_until=timezone.now() - timedelta(seconds=1)
    )
    [again] = claim(10)
    assert (again.pk, again.attempt, again.msg_id) == (dead.pk, 1, dead.msg_id)
    Delivery.objects.filter(pk=delivery.pk).update(claimed_until=timezone.now())
    assert run_tasks() == 1
    assert len(receiver.requests) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.SUCCEEDED, 1)


def test_the_outcome_of_a_claim_whose_lease_was_taken_over_is_not_recorded(api, endpoint, receiver):
    """The first worker's late answer does not overwrite the attempt its successor
    owns now (claimed_until is the claim's token)."""
    from datetime import timedelta

    from django.utils import timezone

    from events.delivery import Outcome, endpoints_of, record

    api.post("/api/contacts", CONTACT, format="json")
    fan_out_all()
    [first] = claim(10)
    Delivery.objects.filter(pk=first.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    [second] = claim(10)
    endpoint = endpoints_of([first])[first.endpoint_id]
    record([(first, endpoint, Outcome(True, 200))])
    [delivery] = deliveries()
    assert (delivery.status, delivery.claimed_until) == ("pending", second.lease)
    record([(second, endpoint, Outcome(True, 204))])
    [delivery] = deliveries()
    assert (delivery.status, delivery.response_status) == ("succeeded", 204)


def test_subscriptions_filter_the_events(api, org_a, receiver):
    contacts_only = services.create_endpoint(
        organization=org_a, url=receiver.url, events=["contact.created"]
    )
    groups_only = services.create_endpoint(
        organization=org_a, url=receiver.url + "?groups", events=["group.created"]
    )
    api.post("/api/contacts", CONTACT, format="json")
    api.post("/api/contact-groups", {"name": "VIP"}, format="json")
    run_all()
    got = sorted((r.path, json.loads(r.body)["type"]) for r in receiver.requests)
    assert got == [("/hook", "contact.created"), ("/hook?groups", "group.created")]
    assert [d.event for d in deliveries(endpoint=contacts_only)] == ["contact.created"]
    assert [d.event for d in deliveries(endpoint=groups_only)] == ["group.created"]


def test_a_disabled_endpoint_gets_nothing(api, endpoint, receiver):
    assert (
        api.patch(f"/api/webhooks/{endpoint.uuid}", {"is_active": False}, format="json").status_code
        == 200
    )
    api.post("/api/contacts", CONTACT, format="json")
    run_all()
    assert receiver.requests == []
    assert deliveries() == []


def test_pending_deliveries_of_an_endpoint_turned_off_are_not_sent(api, endpoint, receiver):
    api.post("/api/contacts", CONTACT, format="json")
    api.patch(f"/api/webhooks/{endpoint.uuid}", {"is_active": False}, format="json")
    run_all()
    assert receiver.requests == []
    [delivery] = deliveries()
    assert delivery.status == DeliveryStatus.FAILED
    assert "turned off" in delivery.last_error


def test_a_deleted_endpoint_gets_nothing(api, endpoint, receiver):
    api.post("/api/contacts", CONTACT, format="json")
    api.delete(f"/api/webhooks/{endpoint.uuid}")
    api.post("/api/contacts", {**CONTACT, "phone": "+14155552672"}, format="json")
    run_all()
    assert receiver.requests == []


def test_nothing_is_emitted_for_a_change_that_did_not_happen(api, endpoint, receiver):
    api.post("/api/contacts", CONTACT, format="json")
    duplicate = api.post("/api/contacts", CONTACT, format="json")
    assert duplicate.status_code == 400
    assert [d.event for d in deliveries()] == ["contact.created"]


def test_after_a_rotation_both_secrets_verify_for_a_day(api, endpoint, receiver):
    old = endpoint.secret
    assert api.post(f"/api/webhooks/{endpoint.uuid}/rotate-secret").status_code == 200
    new = api.get(f"/api/webhooks/{endpoint.uuid}").json()["data"]["secret"]
    assert new != old and new.startswith("whsec_")
    api.post("/api/contacts", CONTACT, format="json")
    run_all()
    [request] = receiver.requests
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    verified(endpoint, request, secret=old)
    verified(endpoint, request, secret=new)


def test_after_the_overlap_only_the_new_secret_signs(api, endpoint, receiver):
    from datetime import timedelta

    from django.utils import timezone

    from events.models import Endpoint

    old = endpoint.secret
    new = services.rotate_secret(endpoint=endpoint).secret
    Endpoint.objects.filter(pk=endpoint.pk).update(
        previous_secret_expires_at=timezone.now() - timedelta(seconds=1)
    )
    api.post("/api/contacts", CONTACT, format="json")
    run_all()
    [request] = receiver.requests
    verified(endpoint, request, secret=new)
    with pytest.raises(WebhookVerificationError):
        verified(endpoint, request, secret=old)


def test_an_endpoint_failing_for_five_days_is_turned_off_and_says_why(api, endpoint, receiver):
    from datetime import timedelta

    from django.utils import timezone

    from events.models import Endpoint

    receiver.status = 500
    api.post("/api/contacts", CONTACT, format="json")
    run_tasks()
    endpoint.refresh_from_db()
    assert endpoint.is_active and endpoint.failing_since is not None
    Endpoint.objects.filter(pk=endpoint.pk).update(
        failing_since=timezone.now() - timedelta(days=5, minutes=1)
    )
    make_due()
    run_tasks()
    detail = api.get(f"/api/webhooks/{endpoint.uuid}").json()["data"]
    assert detail["is_active"] is False
    assert "every delivery failed for 5 days" in detail["disabled_reason"]
    # Turned on again, it starts afresh.
    api.patch(f"/api/webhooks/{endpoint.uuid}", {"is_active": True}, format="json")
    detail = api.get(f"/api/webhooks/{endpoint.uuid}").json()["data"]
    assert detail["is_active"] is True and detail["disabled_reason"] is None


def test_a_success_ends_the_run_of_failures(api, endpoint, receiver):
    receiver.fail_next(500)
    api.post("/api/contacts", CONTACT, format="json")
    run_tasks()
    endpoint.refresh_from_db()
    assert endpoint.failing_since is not None
    run_all()
    endpoint.refresh_from_db()
    assert endpoint.failing_since is None


def test_the_answer_is_read_up_to_a_cap(api, endpoint, receiver, monkeypatch):
    import events.delivery

    monkeypatch.setattr(events.delivery, "RESPONSE_CAP", 8)
    receiver.fail_next(500)
    api.post("/api/contacts", CONTACT, format="json")
    run_tasks()
    [delivery] = deliveries()
    assert delivery.last_error == "HTTP 500: receiver"


def test_a_connection_is_kept_between_deliveries_unless_an_answer_was_left_unread(
    api, endpoint, receiver, monkeypatch
):
    import events.delivery

    queue = DeliveryQueue(slots=1)  # one POST thread: its connections are the ones kept

    def deliver_one(n: int) -> None:
        api.post("/api/contacts", {**CONTACT, "phone": f"+1415555266{n}"}, format="json")
        assert queue.run_due() == 1

    deliver_one(0)
    deliver_one(1)
    # Its answer read past ANSWER_READ_LIMIT: the rest is not waited for, the connection
    # closed (another delivery on it would read that rest as its own answer).
    monkeypatch.setattr(events.delivery, "ANSWER_READ_LIMIT", 4)
    monkeypatch.setattr(events.delivery, "RESPONSE_CAP", 2)
    deliver_one(2)
    monkeypatch.undo()
    deliver_one(3)
    first, second, cut, after = (request.client for request in receiver.requests)
    assert first == second == cut
    assert after != cut
    assert all(delivery.status == DeliveryStatus.SUCCEEDED for delivery in deliveries())


def test_finished_deliveries_are_pruned_after_thirty_days(api, endpoint, receiver):
    from datetime import timedelta

    from django.utils import timezone

    from events.tasks import prune_deliveries

    for n in range(3):
        api.post("/api/contact-groups", {"name": f"G{n}"}, format="json")
    old, recent, pending = deliveries()
    long_ago = timezone.now() - timedelta(days=31)
    Delivery.objects.filter(pk=old.pk).update(status=DeliveryStatus.SUCCEEDED, updated_at=long_ago)
    Delivery.objects.filter(pk=recent.pk).update(status=DeliveryStatus.FAILED)
    Delivery.objects.filter(pk=pending.pk).update(updated_at=long_ago)
    assert prune_deliveries.call() == 1
    assert {d.pk for d in deliveries()} == {recent.pk, pending.pk}


def test_an_emission_is_no_task_and_its_posts_go_out_together(org_a, receiver):
    import time

    from tests.background import tasks

    receiver.delay = 0.5
    for n in range(3):
        services.create_endpoint(organization=org_a, url=f"{receiver.url}?{n}")
    services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": 1})
    assert not tasks().exists()  # the deliveries are the queue
    started = time.monotonic()
    assert run_tasks() == 3
    assert time.monotonic() - started < 1.2  # three endpoints of 0.5 s each, at once
    assert len(receiver.requests) == 3
    assert {d.status for d in deliveries()} == {DeliveryStatus.SUCCEEDED}


def test_the_due_deliveries_are_claimed_posted_and_recorded_in_few_statements(
    org_a, receiver, django_assert_num_queries, settings
):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 5  # all ten in one claim
    for n in range(2):
        services.create_endpoint(organization=org_a, url=f"{receiver.url}?{n}")
    for n in range(5):
        services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": n})
    # The fan-out: on PostgreSQL one statement; elsewhere the five emissions taken
    # (DELETE ... RETURNING), their endpoints (SELECT), their ten deliveries (one
    # INSERT), in a savepoint (the test's transaction).
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 5):
        assert fan_out() == 5
    # The look for more emissions (none: its savepoint and DELETE; on PostgreSQL the
    # fan-out's statement), the claim of all ten (UPDATE ... RETURNING), their endpoints
    # (SELECT), and the successes (one UPDATE): four statements for ten POSTs. On
    # PostgreSQL the claim first asks whether any is due, then holds the claims' lock in
    # a transaction (here a savepoint and its release).
    with django_assert_num_queries(6 if connection.vendor == "sqlite" else 8):
        assert DeliveryQueue().run_due() == 10
    assert len(receiver.requests) == 10
    assert {d.status for d in deliveries()} == {DeliveryStatus.SUCCEEDED}


def test_a_fan_out_that_fails_midway_leaves_its_emissions_for_the_next(org_a, monkeypatch):
    """The emissions are taken and their deliveries written in one transaction: a
    failure between the two (a worker dying) loses nothing and doubles nothing."""
    from events import delivery as delivery_module
    from events.models import Emission

    services.create_endpoint(organization=org_a, url="https://example.com/h")
    for n in range(3):
        services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": n})

    def dying() -> str:
        raise RuntimeError("the worker dies after taking the emissions")

    if connection.vendor == "postgresql":
        # One statement: the deliveries' insert, after the emissions' delete, fails.
        refused = "ALTER TABLE events_delivery ADD CONSTRAINT refused CHECK (false) NOT VALID"
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(refused)
            fan_out()
    else:
        with monkeypatch.context() as patched:
            patched.setattr(delivery_module, "new_message_id", dying)
            with pytest.raises(RuntimeError):
                fan_out()
    assert Emission.objects.count() == 3 and not Delivery.objects.exists()
    assert fan_out() == 3
    assert [json.loads(d.body)["data"]["n"] for d in deliveries()] == [0, 1, 2]


def test_a_fan_out_keeps_the_emissions_time_and_skips_endpoints_gone(org_a):
    """A delivery is created at its event's time, however late the worker is; an
    endpoint gone with its row (its organization deleted) gets none, and its
    emissions do not stay behind. One turned off gets its delivery, failed at once."""
    from datetime import timedelta

    from django.utils import timezone

    from events.models import Emission, Endpoint

    kept = services.create_endpoint(organization=org_a, url="https://example.com/kept")
    gone = services.create_endpoint(organization=org_a, url="https://example.com/gone")
    services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": 1})
    an_hour_ago = timezone.now() - timedelta(hours=1)
    Emission.objects.update(created_at=an_hour_ago)
    Endpoint.objects.filter(pk=gone.pk).delete()  # as a cascade would: no row left
    assert fan_out() == 1
    [delivery] = deliveries()
    assert (delivery.endpoint_id, delivery.created_at) == (kept.pk, an_hour_ago)
    assert delivery.organization_id == org_a.pk
    assert not Emission.objects.exists()


def test_emissions_are_fanned_out_oldest_first_in_batches(org_a):
    from events.delivery import FAN_OUT_BATCH

    services.create_endpoint(organization=org_a, url="https://example.com/h")
    with services.event_batch():
        for n in range(FAN_OUT_BATCH + 1):
            services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": n})
    assert fan_out() == FAN_OUT_BATCH
    assert fan_out() == 1
    assert fan_out() == 0
    numbers = [json.loads(d.body)["data"]["n"] for d in deliveries()]
    assert numbers == list(range(FAN_OUT_BATCH + 1))


def test_an_emission_naming_no_endpoint_is_dropped_without_stopping_the_rest(org_a):
    from django.utils import timezone

    from events.models import Emission

    endpoint = services.create_endpoint(organization=org_a, url="https://example.com/h")
    Emission.objects.create(
        endpoints=",x,-1,\u00b2,99999999999999999999,",
        event="group.created",
        body="{}",
        created_at=timezone.now(),
    )
    services.emit_event(organization_id=org_a.pk, event="group.created", data={"n": 1})
    assert fan_out() == 2
    [delivery] = deliveries()
    assert delivery.endpoint_id == endpoint.pk and not Emission.objects.exists()


def test_fanned_out_deliveries_have_ids_of_one_shape_each_its_own(org_a):
    """Made by PostgreSQL in the fan-out's statement, or by new_message_id elsewhere: the
    same `webhook-id` shape, and one per delivery."""
    import re

    shape = re.compile(r"msg_[0-9a-f]{32}")
    for n in range(2):
        services.create_endpoint(organization=org_a, url=f"https://example.com/{n}")
    emit_numbered(org_a, 3)
    assert fan_out() == 3
    ids = [d.msg_id for d in deliveries()]
    assert len(ids) == len(set(ids)) == 6
    assert all(shape.fullmatch(msg_id) for msg_id in [*ids, new_message_id()])


def emit_numbered(organization, count: int) -> None:
    for n in range(count):
        services.emit_event(organization_id=organization.pk, event="group.created", data={"n": n})


def test_a_claim_keeps_to_the_caps_per_endpoint_and_per_organization(org_a, org_b, settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 4
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION = 6
    a_endpoints = [
        services.create_endpoint(organization=org_a, url=f"https://a.example.com/{n}")
        for n in range(3)
    ]
    b_endpoint = services.create_endpoint(organization=org_b, url="https://b.example.com/")
    emit_numbered(org_a, 10)  # 30 deliveries, 10 to each of A's endpoints
    emit_numbered(org_b, 10)
    fan_out_all()

    taken = claim(100)
    per_endpoint = Counter(item.endpoint_id for item in taken)
    assert per_endpoint[b_endpoint.pk] == 4
    assert sum(per_endpoint[e.pk] for e in a_endpoints) == 6
    assert max(per_endpoint[e.pk] for e in a_endpoints) <= 4
    assert min(per_endpoint[e.pk] for e in a_endpoints) == 2  # in turns among them too
    # Under way, they count against the caps until they end.
    assert claim(100) == []
    record(
        [(item, endpoints_of(taken)[item.endpoint_id], Outcome(True, 200)) for item in taken[:3]]
    )
    assert len(claim(100)) == 3


def test_a_claim_takes_the_organizations_in_turns(org_a, org_b, settings):
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 100
    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION = 100
    services.create_endpoint(organization=org_a, url="https://a.example.com/")
    services.create_endpoint(organization=org_b, url="https://b.example.com/")
    emit_numbered(org_a, 50)  # A's backlog first...
    emit_numbered(org_b, 2)  # ...and B's two events after it
    fan_out_all()
    organization_of = dict(Delivery.objects.values_list("pk", "organization_id"))

    first = [organization_of[item.pk] for item in claim(4)]
    assert sorted(first) == sorted([org_a.pk, org_a.pk, org_b.pk, org_b.pk])
    assert len(claim(100)) == 48


def test_a_retry_come_due_and_an_expired_lease_count_as_due_not_as_under_way(org_a, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = 1
    services.create_endpoint(organization=org_a, url="https://a.example.com/")
    emit_numbered(org_a, 2)
    fan_out_all()
    [first] = claim(10)
    Delivery.objects.filter(pk=first.pk).update(claimed_until=timezone.now() - timedelta(seconds=1))
    [again] = claim(10)  # its lease is over: taken again, and the other still waits
    assert again.pk == first.pk
    assert claim(10) == []

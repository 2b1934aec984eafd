"""The admin's analytics dashboard: server-drawn charts of the organization's figures,
their CSV, for managers and superusers only."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from accounts.models import Role
from accounts.services import create_staff_user
from tests.analytics.conftest import MARKETING, send
from tests.factories import OrganizationFactory
from tests.inbound.conftest import deliver, envelope, status, statuses

pytestmark = pytest.mark.django_db

URL = "/admin/analytics/"


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def figures(webhook_org):
    send(webhook_org, wam_id="wamid.A1")
    deliver(webhook_org, envelope(statuses(status("wamid.A1", "read", 300, pricing=MARKETING))))
    return webhook_org


def test_a_manager_sees_the_charts_of_their_organization(figures, fast_passwords):
    manager = create_staff_user(username="mia", organization=figures, password="x-Pass-12345")
    page = logged_in(manager).get(URL)
    assert page.status_code == 200
    html = page.content.decode()
    # messages and billable drawn; no campaign, nobody answered yet: said in words
    assert html.count('role="img"') == 2
    assert html.count("Nothing in these days.") == 1
    assert "<script" not in html.split('id="content-main"')[1]
    assert "marketing: 1" in html  # the billable bar's title


def test_each_chart_downloads_as_csv(figures, fast_passwords):
    manager = create_staff_user(username="mia", organization=figures, password="x-Pass-12345")
    today = timezone.now().date().isoformat()
    client = logged_in(manager)
    messages = client.get(f"{URL}?from={today}&to={today}&csv=messages")
    assert messages["Content-Type"].startswith("text/csv")
    assert messages.content.decode().splitlines()[1] == f"{today},1,1,1,1,0,0,1"
    billable = client.get(f"{URL}?from={today}&to={today}&csv=billable")
    assert billable.content.decode().splitlines() == ["category,messages", "marketing,1"]
    agents = client.get(f"{URL}?csv=agents").content.decode().splitlines()
    assert agents[1] == "mia,0,0,0,"


def test_another_organizations_staff_see_only_theirs(figures, fast_passwords):
    other = create_staff_user(
        username="bob", organization=OrganizationFactory(), password="x-Pass-12345"
    )
    today = timezone.now().date().isoformat()
    rows = logged_in(other).get(f"{URL}?from={today}&to={today}&csv=messages")
    assert rows.content.decode().splitlines()[1] == f"{today},0,0,0,0,0,0"


def test_an_agent_is_refused(figures, fast_passwords):
    agent = create_staff_user(
        username="ada", organization=figures, password="x-Pass-12345", role=Role.AGENT
    )
    assert logged_in(agent).get(URL).status_code == 403


def test_a_superuser_picks_the_organization(figures, fast_passwords):
    root = get_user_model().objects.create_superuser("root", "root@example.com", "x-Pass-12345")
    page = logged_in(root).get(f"{URL}?organization={figures.uuid}")
    assert page.status_code == 200 and page.context["organization"] == figures


def test_anonymous_visitors_are_sent_to_the_login(figures):
    assert Client().get(URL).status_code == 302


def test_in_spanish(figures, fast_passwords):
    manager = create_staff_user(username="mia", organization=figures, password="x-Pass-12345")
    page = logged_in(manager).get(URL, headers={"accept-language": "es"})
    assert "Mensajes por día según su estado" in page.content.decode()

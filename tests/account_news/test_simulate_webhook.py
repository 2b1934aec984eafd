"""`manage.py simulate_webhook ORG FILE`: any stored payload, signed and delivered to the
organization's webhook, so each field can be tried locally."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from business_numbers.models import MessageTemplate
from tests.account_news.conftest import APP_SECRET, PAYLOADS
from tests.channel import set_channel, stored_channel
from tests.factories import create_template

pytestmark = pytest.mark.django_db


def simulate(*args) -> str:
    out = StringIO()
    call_command("simulate_webhook", *args, stdout=out)
    return out.getvalue()


def test_a_payload_of_a_file_of_many_is_signed_and_delivered(org_a):
    set_channel(
        org_a, app_secret=APP_SECRET, kind="cloud_api", phone_number_id="1", business_account_id="7"
    )
    output = simulate(
        str(org_a.uuid), str(PAYLOADS / "meta_number_health.json"), "--payload", "quality_flagged"
    )
    assert output.startswith("quality_flagged: 200 ")
    assert json.loads(output.split(" ", 2)[2])["updates"] == 1
    assert stored_channel(org_a).quality_rating == "RED"


def test_a_template_news_by_name(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    create_template(
        organization=org_a, name="order_confirmation", language="en_US", status="APPROVED"
    )
    output = simulate(
        org_a.name, str(PAYLOADS / "meta_template_status.json"), "--payload", "paused"
    )
    assert " 200 " in output
    assert MessageTemplate.objects.get().status == "PAUSED"


def test_every_payload_of_a_file(org_a):
    set_channel(org_a, app_secret=APP_SECRET)
    output = simulate(org_a.name, str(PAYLOADS / "pywa_account_update.json"))
    assert output.count(": 200 ") == 7


def test_a_sandbox_organization_without_a_secret_gets_it_unsigned(org_a, tmp_path):
    single = tmp_path / "one.json"
    document = json.loads((PAYLOADS / "meta_number_health.json").read_text())
    single.write_text(json.dumps(document["payloads"]["name_approved"]))
    output = simulate(org_a.name, str(single))
    assert "unsigned" in output and "\n200 " in output
    assert stored_channel(org_a).verified_name == "Lucky Shrub"


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        ("not json", [], "Cannot read"),
        ("[1]", [], "holds no webhook"),
        ('{"payloads": {"a": {}}}', ["--payload", "b"], "No payload 'b'"),
        ('{"entry": []}', ["--payload", "b"], "holds one webhook"),
    ],
)
def test_bad_files_are_a_clear_error(org_a, tmp_path, content, extra, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        simulate(org_a.name, str(path), *extra)

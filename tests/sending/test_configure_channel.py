"""The configure_channel command and the gateway it selects."""

import pytest
from django.core.management import CommandError, call_command

from accounts.models import Organization
from business_numbers import services as number_services
from business_numbers.gateway import (
    ChannelNotConfigured,
    CloudApiGateway,
    SandboxGateway,
    gateway_for,
)
from business_numbers.models import Number
from tests.channel import set_channel, stored_channel
from tests.contacts.test_contact_counter import on_postgresql, run_concurrently
from tests.factories import OrganizationFactory
from tests.sending.conftest import ACCESS_TOKEN


def configure(*args):
    call_command("configure_channel", *args)


def test_new_organizations_use_the_sandbox(org_a):
    assert stored_channel(org_a).kind == "sandbox"
    assert isinstance(gateway_for(Number.objects.default_for(org_a)), SandboxGateway)


def test_cloud_api_credentials_switch_to_the_cloud_api(org_a, capsys):
    configure(
        org_a.name,
        "--phone-number-id=106540352242922",
        f"--access-token={ACCESS_TOKEN}",
        "--business-account-id=102290129340398",
        "--app-secret=0123456789abcdef0123456789abcdef",
        "--verify-token=let-me-in",
    )

    channel = stored_channel(org_a)
    assert channel.kind == "cloud_api"
    assert channel.phone_number_id == "106540352242922"
    assert channel.access_token == ACCESS_TOKEN
    assert channel.business_account_id == "102290129340398"
    assert channel.app_secret == "0123456789abcdef0123456789abcdef"
    assert channel.verify_token == "let-me-in"
    gateway = gateway_for(Number.objects.default_for(org_a))
    assert isinstance(gateway, CloudApiGateway)
    output = capsys.readouterr()
    for secret in (ACCESS_TOKEN, "0123456789abcdef0123456789abcdef", "let-me-in"):
        assert secret not in output.out + output.err
        assert secret not in repr(gateway)


def test_settings_not_given_keep_their_value(org_a):
    configure(org_a.name, "--phone-number-id=1", "--access-token=a", "--verify-token=v")
    configure(str(org_a.uuid), "--phone-number-id=2", "--access-token=b")

    channel = stored_channel(org_a)
    assert (channel.phone_number_id, channel.access_token, channel.verify_token) == ("2", "b", "v")


def test_sandbox_clears_the_credentials(org_a):
    configure(org_a.name, "--phone-number-id=1", "--access-token=a", "--app-secret=s")
    configure(org_a.name, "--sandbox")

    channel = stored_channel(org_a)
    assert channel.kind == "sandbox"
    assert (channel.phone_number_id, channel.access_token, channel.app_secret) == ("", "", "")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([], "Give either --sandbox"),
        (["--phone-number-id=1"], "access token is required"),
        (["--access-token=abc"], "phone number id is required"),
        (["--phone-number-id=12ab", "--access-token=abc"], "phone number id must be digits"),
        (["--phone-number-id=1", "--access-token=has space"], "access token must be one word"),
        (
            ["--phone-number-id=1", "--access-token=a", "--business-account-id=x"],
            "business account id must be digits",
        ),
        (["--phone-number-id=1", "--access-token=a", "--app-secret="], "app secret"),
        (["--sandbox", "--access-token=abc"], "sandbox takes no credentials"),
    ],
)
def test_bad_input_is_a_clear_error_and_changes_nothing(org_a, arguments, message):
    with pytest.raises(CommandError, match=message):
        configure(org_a.name, *arguments)

    channel = stored_channel(org_a)
    assert channel.kind == "sandbox"
    assert channel.access_token == ""


def test_sandbox_and_phone_number_id_together_are_refused(org_a):
    with pytest.raises(CommandError):
        configure(org_a.name, "--sandbox", "--phone-number-id=1")


def test_unknown_organization_is_a_clear_error(db):
    with pytest.raises(CommandError, match="No organization"):
        configure("nobody", "--sandbox")


def test_command_exits_non_zero_on_bad_input(org_a):
    from django.core.management import ManagementUtility

    utility = ManagementUtility(["manage.py", "configure_channel", org_a.name])
    with pytest.raises(SystemExit) as exit_info:
        utility.execute()
    assert exit_info.value.code != 0


def test_cloud_api_without_its_token_is_not_configured(org_a):
    set_channel(org_a, kind="cloud_api", phone_number_id="1")

    with pytest.raises(ChannelNotConfigured):
        gateway_for(Number.objects.default_for(org_a))


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_first_configurations_leave_one_whole_setting():
    """Two saves racing to create the organization's row: neither fails, one row is left,
    holding one of the two configurations whole."""
    organization = OrganizationFactory()
    configurations = [
        {"phone_number_id": str(n), "access_token": f"token-{n}", "app_secret": f"secret-{n}"}
        for n in range(1, 5)
    ]

    results = run_concurrently(
        [
            lambda values=values: number_services.configure_channel(
                organization=Organization.objects.get(pk=organization.pk), **values
            )
            for values in configurations
        ]
    )

    assert all(isinstance(result, Number) for result in results)
    [channel] = Number.objects.filter(organization=organization)
    stored = {f: getattr(channel, f) for f in ("phone_number_id", "access_token", "app_secret")}
    assert stored in configurations

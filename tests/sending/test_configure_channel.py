"""The configure_channel command and the gateway it selects."""

import pytest
from django.core.management import CommandError, call_command

from sending.gateway import (
    ChannelNotConfigured,
    CloudApiGateway,
    SandboxGateway,
    gateway_for,
)
from tests.sending.conftest import ACCESS_TOKEN


def configure(*args):
    call_command("configure_channel", *args)


def test_new_organizations_use_the_sandbox(org_a):
    assert org_a.channel == "sandbox"
    assert isinstance(gateway_for(org_a), SandboxGateway)


def test_cloud_api_credentials_switch_to_the_cloud_api(org_a, capsys):
    configure(
        org_a.name,
        "--phone-number-id=106540352242922",
        f"--access-token={ACCESS_TOKEN}",
        "--business-account-id=102290129340398",
        "--app-secret=0123456789abcdef0123456789abcdef",
        "--verify-token=let-me-in",
    )

    org_a.refresh_from_db()
    assert org_a.channel == "cloud_api"
    assert org_a.phone_number_id == "106540352242922"
    assert org_a.access_token == ACCESS_TOKEN
    assert org_a.business_account_id == "102290129340398"
    assert org_a.app_secret == "0123456789abcdef0123456789abcdef"
    assert org_a.verify_token == "let-me-in"
    gateway = gateway_for(org_a)
    assert isinstance(gateway, CloudApiGateway)
    output = capsys.readouterr()
    for secret in (ACCESS_TOKEN, "0123456789abcdef0123456789abcdef", "let-me-in"):
        assert secret not in output.out + output.err
        assert secret not in repr(gateway)


def test_settings_not_given_keep_their_value(org_a):
    configure(org_a.name, "--phone-number-id=1", "--access-token=a", "--verify-token=v")
    configure(str(org_a.uuid), "--phone-number-id=2", "--access-token=b")

    org_a.refresh_from_db()
    assert (org_a.phone_number_id, org_a.access_token, org_a.verify_token) == ("2", "b", "v")


def test_sandbox_clears_the_credentials(org_a):
    configure(org_a.name, "--phone-number-id=1", "--access-token=a", "--app-secret=s")
    configure(org_a.name, "--sandbox")

    org_a.refresh_from_db()
    assert org_a.channel == "sandbox"
    assert (org_a.phone_number_id, org_a.access_token, org_a.app_secret) == ("", "", "")


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

    org_a.refresh_from_db()
    assert org_a.channel == "sandbox"
    assert org_a.access_token == ""


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
    org_a.channel = "cloud_api"
    org_a.phone_number_id = "1"

    with pytest.raises(ChannelNotConfigured):
        gateway_for(org_a)

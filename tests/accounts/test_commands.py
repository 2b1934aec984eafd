"""The management commands of through call_command."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from accounts import roles
from accounts.models import ApiToken, Organization

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_create_organization_prints_its_uuid():
    uuid = last_line(run("create_organization", "Acme", "--rate-limit", "120"))
    organization = Organization.objects.get()
    assert uuid == str(organization.uuid)
    assert organization.rate_limit == 120


@pytest.mark.parametrize("args", [("",), ("Acme", "--rate-limit", "0"), ("x" * 256,)])
def test_create_organization_rejects_bad_input(args):
    with pytest.raises(CommandError):
        run("create_organization", *args)
    assert not Organization.objects.exists()


def test_create_organization_rejects_a_duplicate_name():
    run("create_organization", "Acme")
    with pytest.raises(CommandError, match="already exists"):
        run("create_organization", "Acme")


def test_issue_token_by_name_or_uuid_prints_a_working_token():
    uuid = last_line(run("create_organization", "Acme"))
    for reference in ("Acme", uuid):
        token = last_line(run("issue_token", reference, "--name", "ci"))
        response = APIClient().get("/api/contacts", HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code == 200
    assert ApiToken.objects.filter(name="ci").count() == 2


def test_issue_token_for_unknown_organization_fails():
    with pytest.raises(CommandError, match="No organization"):
        run("issue_token", "Nobody")


def test_list_tokens_never_shows_secrets():
    run("create_organization", "Acme")
    run("create_organization", "Other")
    token = last_line(run("issue_token", "Acme", "--name", "laptop"))
    run("issue_token", "Other")
    listing = run("list_tokens", "Acme")
    prefix = token.split("_")[1]
    assert prefix in listing and "laptop" in listing and "never" in listing
    assert token not in listing and token.split("_", 2)[2] not in listing
    assert "Other" not in listing
    assert len(run("list_tokens").strip().splitlines()) == 3  # header and two tokens


@pytest.mark.parametrize("by", ["token", "prefix"])
def test_revoke_token_by_token_or_prefix(by):
    run("create_organization", "Acme")
    token = last_line(run("issue_token", "Acme"))
    run("revoke_token", token if by == "token" else token.split("_")[1])
    response = APIClient().get("/api/contacts", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 401
    assert "revoked" in run("list_tokens")
    with pytest.raises(CommandError, match="already revoked"):
        run("revoke_token", token)


@pytest.mark.parametrize("value", ["nonsense", "wam_000000000000_" + "A" * 43])
def test_revoke_unknown_token_fails(value):
    with pytest.raises(CommandError, match="No token"):
        run("revoke_token", value)


def test_revoke_with_a_wrong_secret_for_a_real_prefix_fails():
    run("create_organization", "Acme")
    token = last_line(run("issue_token", "Acme"))
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    with pytest.raises(CommandError):
        run("revoke_token", forged)
    assert ApiToken.objects.get().is_active


def test_create_staff_user():
    run("create_organization", "Acme")
    run("create_staff_user", "alice", "--organization", "Acme", "--password", "s3cret-Passw0rd")
    user = get_user_model().objects.get(username="alice")
    assert user.is_staff and not user.is_superuser
    assert user.check_password("s3cret-Passw0rd")
    assert user.membership.organization.name == "Acme"
    assert user.membership.role == "manager"
    assert user.has_perm("contacts.change_contact")


def test_create_staff_user_as_agent():
    run("create_organization", "Acme")
    run(
        "create_staff_user",
        "ana",
        "--organization",
        "Acme",
        "--password",
        "s3cret-Passw0rd",
        "--role",
        "agent",
    )
    user = get_user_model().objects.get(username="ana")
    assert user.membership.role == "agent"
    assert roles.is_agent(user) and not roles.is_manager(user)
    with pytest.raises(CommandError):
        run(
            "create_staff_user",
            "bo",
            "--organization",
            "Acme",
            "--password",
            "s3cret-Passw0rd",
            "--role",
            "owner",
        )
    assert not get_user_model().objects.filter(username="bo").exists()


@pytest.mark.parametrize(
    "password, refusal",
    [
        ("x", "too short"),
        ("password123", "too common"),
        ("84620175391", "entirely numeric"),
        ("bob-the-builder!", "too similar to the username"),
    ],
)
def test_create_staff_user_applies_the_password_validators(password, refusal):
    run("create_organization", "Acme")
    with pytest.raises(CommandError, match=refusal):
        run(
            "create_staff_user", "bob-the-builder", "--organization", "Acme", "--password", password
        )
    assert not get_user_model().objects.exists()


def test_create_staff_user_bad_input():
    run("create_organization", "Acme")
    with pytest.raises(CommandError):
        run("create_staff_user", "bob", "--organization", "Nobody", "--password", "x")
    run("create_staff_user", "bob", "--organization", "Acme", "--password", "pw-123456")
    with pytest.raises(CommandError, match="already exists"):
        run("create_staff_user", "bob", "--organization", "Acme", "--password", "pw-123456")
    with pytest.raises(CommandError):
        run("create_staff_user", "bad name!", "--organization", "Acme", "--password", "pw-123456")

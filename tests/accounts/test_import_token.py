"""`manage.py import_token`: a token the original product issued keeps working here, so
its clients change only the base URL (docs/migrating.md). The original issues 40 random
letters and digits (Str::random(40), app/Services/OrganizationApiService.php)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from accounts import tokens
from accounts.models import ApiToken

pytestmark = pytest.mark.django_db

# Shaped like the original's: 40 characters of [A-Za-z0-9].
ORIGINAL_TOKEN = "Xq3Lr9Tz0bV7mWc2Nk5Hs8Pd1Fg4Jy6AeUoRiQtS"


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def client(token: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api


def test_an_imported_token_authenticates_its_organization(org_a, org_b):
    output = run("import_token", str(org_a.uuid), ORIGINAL_TOKEN, "--name", "crm")
    record = ApiToken.objects.get()
    assert (record.organization, record.name) == (org_a, "crm")
    assert record.prefix in output
    # Only the digest is kept, as for our own tokens.
    assert ORIGINAL_TOKEN not in record.digest + record.prefix
    assert record.digest == tokens.digest_of(ORIGINAL_TOKEN)
    response = client(ORIGINAL_TOKEN).get("/api/contacts")
    assert response.status_code == 200
    assert client(ORIGINAL_TOKEN[:-1] + "x").get("/api/contacts").status_code == 401


def test_an_imported_token_is_listed_and_revoked_like_ours(org_a):
    run("import_token", org_a.name, ORIGINAL_TOKEN)
    prefix = ApiToken.objects.get().prefix
    assert prefix in run("list_tokens", org_a.name)
    run("revoke_token", ORIGINAL_TOKEN)
    assert client(ORIGINAL_TOKEN).get("/api/contacts").status_code == 401
    assert ApiToken.objects.get().prefix == prefix


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("tooShort123", "too short"),
        ("x" * 31, "too short"),
        ("has spaces " + "x" * 40, "printable"),
        ("x" * 256, "printable"),
        ("wam_0123456789ab_" + "y" * 43, "own tokens"),
    ],
)
def test_an_unusable_token_is_refused_clearly(org_a, token, message):
    with pytest.raises(CommandError, match=message):
        run("import_token", str(org_a.uuid), token)
    assert not ApiToken.objects.exists()


def test_a_token_known_already_is_refused(org_a, org_b):
    run("import_token", str(org_a.uuid), ORIGINAL_TOKEN)
    with pytest.raises(CommandError, match="known already"):
        run("import_token", str(org_b.uuid), ORIGINAL_TOKEN)
    assert ApiToken.objects.get().organization == org_a


def test_an_unknown_organization_is_refused(org_a):
    with pytest.raises(CommandError, match="No organization"):
        run("import_token", "no such org", ORIGINAL_TOKEN)

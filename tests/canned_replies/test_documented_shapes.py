"""Canned replies have exactly the fields their OpenAPI description documents
(canned_replies/api/schema.py), so a field added to `canned_reply_data` or to the
description alone fails here."""

import pytest

from canned_replies.api.schema import (
    CannedReplyDetail,
    CannedReplyPage,
    CannedReplyRecordSerializer,
)
from canned_replies.representations import canned_reply_data
from tests.factories import CannedReplyFactory
from tests.shapes import assert_documented

pytestmark = pytest.mark.django_db


def test_a_canned_replys_data_has_exactly_the_documented_fields(org_a):
    reply = CannedReplyFactory(organization=org_a)

    assert set(canned_reply_data(reply)) == set(CannedReplyRecordSerializer().fields)


def test_the_list_and_one_reply_are_exactly_as_documented(api, org_a):
    reply = CannedReplyFactory(organization=org_a)

    assert_documented(api.get("/api/canned-replies").json(), CannedReplyPage())
    assert_documented(api.get(f"/api/canned-replies/{reply.uuid}").json(), CannedReplyDetail())

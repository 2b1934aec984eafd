"""A fuzzer over POST /api/contacts/import's three kinds of body (hypothesis): JSON
lists, CSV files and multipart bodies, whole or broken, with text a database cannot
store. Whatever comes, the answer is a 202 or a JSON error (400, 413, 415), never a
500, and a started import ends `completed`, its bad rows reported as row errors
(docs/contacts.md). Derandomized and small, like the other fuzz tests."""

import json

import pytest
from django.test.client import BOUNDARY, encode_multipart
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contacts.models import ContactImport
from tests.background import run_tasks

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

URL = "/api/contacts/import"
FUZZ = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ANSWERS = {202, 400, 413, 415}

unstorable = st.sampled_from(["\x00", "\ud800", "\udfff", "a\x00b", "+1415\ud8005552671"])
text = st.one_of(st.text(max_size=12), unstorable, st.just("x" * 300), st.just("=1+1"))
names = st.one_of(
    st.sampled_from(["phone", "First Name", "last_name", "E-mail", "group", "metadata", "City"]),
    text,
)
phones = st.one_of(
    st.sampled_from(["+14155552671", "0034612345678", "+12345678", "", "+4915123456789"]),
    text,
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), text)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3)
)
contact = st.one_of(
    st.fixed_dictionaries(
        {"phone": phones}, optional={"first_name": values, "metadata": values}
    ).flatmap(lambda fixed: st.dictionaries(names, values, max_size=3).map(fixed.__or__)),
    values,
)
json_body = st.one_of(
    st.fixed_dictionaries(
        {"contacts": st.lists(contact, max_size=6)},
        optional={"on_duplicate": scalars, "contact_group": scalars},
    ),
    values,
).map(json.dumps)  # NUL and lone surrogates travel as \u escapes

cell = st.one_of(text, phones, st.sampled_from(['"', '""', "a,b", "a;b", "\r\n", "'-2"]))
csv_text = st.tuples(
    st.lists(names, min_size=1, max_size=4),
    st.lists(st.lists(cell, max_size=5), max_size=5),
    st.sampled_from([",", ";", "\t"]),
).map(lambda t: "\n".join(t[2].join(row) for row in [t[0], *t[1]]) + "\n")
csv_file = st.one_of(
    csv_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
    csv_text.map(lambda t: t.encode("latin-1", "replace")),
    st.binary(max_size=200),
    st.just(b"phone," + b"a" * 140_000 + b"\n+14155552671,x\n"),
)


@pytest.fixture
def api(api):
    return api


@FUZZ
@given(body=json_body)
def test_no_json_body_answers_500(api, body):
    answered(api, api.generic("POST", URL, body.encode(), content_type="application/json"))


@FUZZ
@given(content=csv_file, options=st.dictionaries(st.sampled_from(["on_duplicate"]), text))
def test_no_csv_file_answers_500(api, content, options):
    fields = {"file": ("contacts.csv", content), **options}
    body = multipart(fields)
    answered(
        api,
        api.generic("POST", URL, body, content_type=f"multipart/form-data; boundary={BOUNDARY}"),
    )


@FUZZ
@given(
    content=csv_file,
    cut=st.integers(min_value=0, max_value=400),
    content_type=st.sampled_from(
        [
            f"multipart/form-data; boundary={BOUNDARY}",
            "multipart/form-data",
            "multipart/form-data; boundary=",
            "multipart/form-data; boundary=other",
            'multipart/form-data; boundary="\x00"',
        ]
    ),
    extra=st.dictionaries(text, text, max_size=3),
)
def test_no_broken_multipart_body_answers_500(api, content, cut, content_type, extra):
    body = multipart({"file": ("contacts.csv", content), **extra})
    answered(api, api.generic("POST", URL, body[:-cut] if cut else body, content_type=content_type))


def multipart(fields: dict) -> bytes:
    """A multipart body; a field's name or value may hold what a form cannot say."""
    safe = {}
    for name, value in fields.items():
        if isinstance(value, tuple):
            value = FakeFile(*value)
        safe[name.encode("utf-8", "surrogatepass").decode("latin-1")] = (
            value.encode("utf-8", "surrogatepass").decode("latin-1")
            if isinstance(value, str)
            else value
        )
    return encode_multipart(BOUNDARY, safe)


class FakeFile:
    """What encode_multipart takes as a file: a name and its bytes."""

    def __init__(self, name: str, content: bytes):
        self.name, self.content = name, content

    def read(self) -> bytes:
        return self.content


def answered(api, response) -> None:
    assert response.status_code in ANSWERS, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    if response.status_code != 202:
        assert body["statusCode"] == response.status_code and body["message"]
        return
    run_tasks()
    done = ContactImport.objects.get(uuid=body["data"]["uuid"])
    assert done.status == "completed"
    assert done.created + done.updated + done.skipped + done.failed == done.total

"""The Laravel page shape and its window, through the contacts list."""

import pytest

from messaging_project.api.pagination import GAP, laravel_window
from tests.factories import ContactFactory


def labels(page):
    return [link["label"] for link in page["meta"]["links"]]


class TestWindow:
    def test_few_pages_show_all(self):
        assert laravel_window(1, 1) == [1]
        assert laravel_window(5, 13) == list(range(1, 14))

    def test_near_the_start(self):
        assert laravel_window(1, 50) == [*range(1, 11), GAP, 49, 50]
        assert laravel_window(7, 50) == [*range(1, 11), GAP, 49, 50]

    def test_in_the_middle(self):
        assert laravel_window(25, 50) == [1, 2, GAP, *range(22, 29), GAP, 49, 50]

    def test_near_the_end(self):
        assert laravel_window(50, 50) == [1, 2, GAP, *range(41, 51)]
        assert laravel_window(44, 50) == [1, 2, GAP, *range(41, 51)]

    def test_every_window_has_the_current_page_and_both_ends(self):
        for last in range(1, 40):
            for current in range(1, last + 1):
                window = laravel_window(current, last)
                assert current in window and 1 in window and last in window
                pages = [n for n in window if n is not GAP]
                assert pages == sorted(set(pages))


@pytest.fixture
def contacts(org_a):
    return ContactFactory.create_batch(25, organization=org_a)


@pytest.mark.django_db
class TestPages:
    def test_first_page(self, api, contacts):
        page = api.get("/api/contacts").json()
        assert [c["id"] for c in page["data"]] == [c.id for c in contacts[:10]]
        assert page["links"] == {
            "first": "http://testserver/api/contacts?page=1",
            "last": "http://testserver/api/contacts?page=3",
            "prev": None,
            "next": "http://testserver/api/contacts?page=2",
        }
        meta = page["meta"]
        assert {
            k: meta[k] for k in ("current_page", "from", "to", "last_page", "per_page", "total")
        } == {
            "current_page": 1,
            "from": 1,
            "to": 10,
            "last_page": 3,
            "per_page": 10,
            "total": 25,
        }
        assert meta["path"] == "http://testserver/api/contacts"
        assert meta["links"] == [
            {"url": None, "label": "&laquo; Previous", "active": False},
            {"url": "http://testserver/api/contacts?page=1", "label": "1", "active": True},
            {"url": "http://testserver/api/contacts?page=2", "label": "2", "active": False},
            {"url": "http://testserver/api/contacts?page=3", "label": "3", "active": False},
            {
                "url": "http://testserver/api/contacts?page=2",
                "label": "Next &raquo;",
                "active": False,
            },
        ]

    def test_middle_page(self, api, contacts):
        page = api.get("/api/contacts?page=2").json()
        assert page["meta"]["from"] == 11 and page["meta"]["to"] == 20
        assert page["links"]["prev"].endswith("page=1")
        assert page["links"]["next"].endswith("page=3")
        assert [link["active"] for link in page["meta"]["links"]] == [
            False,
            False,
            True,
            False,
            False,
        ]

    def test_last_page(self, api, contacts):
        page = api.get("/api/contacts?page=3").json()
        assert len(page["data"]) == 5
        assert page["meta"]["from"] == 21 and page["meta"]["to"] == 25
        assert page["meta"]["total"] == 25
        assert page["links"]["next"] is None
        assert page["meta"]["links"][-1] == {"url": None, "label": "Next &raquo;", "active": False}

    def test_past_the_end(self, api, contacts):
        page = api.get("/api/contacts?page=9").json()
        assert page["data"] == []
        assert page["meta"]["current_page"] == 9
        assert page["meta"]["from"] is None and page["meta"]["to"] is None
        assert page["meta"]["total"] == 25 and page["meta"]["last_page"] == 3
        assert page["links"]["next"] is None

    def test_empty_list(self, api):
        page = api.get("/api/contacts").json()
        assert page["data"] == []
        assert page["meta"]["last_page"] == 1 and page["meta"]["total"] == 0
        assert page["meta"]["from"] is None

    def test_per_page_and_filters_are_kept_in_links(self, api, contacts):
        page = api.get("/api/contacts?per_page=5&ordering=-id&page=2").json()
        assert len(page["data"]) == 5
        assert page["data"][0]["id"] == contacts[-6].id
        assert (
            page["links"]["next"] == "http://testserver/api/contacts?per_page=5&ordering=-id&page=3"
        )
        assert page["meta"]["path"] == "http://testserver/api/contacts"
        assert page["meta"]["per_page"] == 5 and page["meta"]["last_page"] == 5

    def test_links_keep_every_parameter_in_place_encoded_once(self, api, contacts):
        # The page number sits where the client put it; encoded values (an & inside a
        # value, a "page" inside another value) come back unchanged, and a repeated
        # parameter's values stay together, at its first place (as Django encodes them).
        query = "tag=a&page=2&search=&tag=b%26c&per_page=5&note=page%3D9"
        page = api.get(f"/api/contacts?{query}").json()
        base = (
            "http://testserver/api/contacts?tag=a&tag=b%26c&page={}&search=&per_page=5"
            "&note=page%3D9"
        )
        assert page["links"]["prev"] == base.format(1)
        assert page["links"]["next"] == base.format(3)
        assert page["links"]["last"] == base.format(5)
        assert [link["url"] for link in page["meta"]["links"][1:-1]] == [
            base.format(n) for n in range(1, 6)
        ]

    def test_many_pages_show_a_window_with_gaps(self, api, contacts):
        page = api.get("/api/contacts?per_page=1&page=12").json()
        assert labels(page) == [
            "&laquo; Previous",
            "1",
            "2",
            "...",
            *map(str, range(9, 16)),
            "...",
            "24",
            "25",
            "Next &raquo;",
        ]
        gap = page["meta"]["links"][3]
        assert gap == {"url": None, "label": "...", "active": False}
        assert [link["label"] for link in page["meta"]["links"] if link["active"]] == ["12"]

    @pytest.mark.parametrize(
        "query, field",
        [
            ("page=0", "page"),
            ("page=-1", "page"),
            ("page=abc", "page"),
            ("page=1.5", "page"),
            ("page=", "page"),
            ("page=99999999999999999999", "page"),
            ("per_page=0", "per_page"),
            ("per_page=101", "per_page"),
            ("per_page=x", "per_page"),
        ],
    )
    def test_bad_parameters_are_400(self, api, query, field):
        response = api.get(f"/api/contacts?{query}")
        assert response.status_code == 400
        assert response.json()["message"] == "The given data was invalid."
        assert list(response.json()["errors"]) == [field]
        # Clients of the original product read the errors from `error`.
        assert response.json()["error"] == response.json()["errors"]

    def test_other_validation_errors_carry_no_error_key(self, api):
        response = api.post("/api/contacts", {"phone": "nope"}, format="json")
        assert response.status_code == 400
        assert "error" not in response.json()

    def test_per_page_100_is_allowed(self, api, contacts):
        assert len(api.get("/api/contacts?per_page=100").json()["data"]) == 25

    def test_pages_never_overlap_with_ordering_ties(self, api, org_a):
        for _ in range(12):
            ContactFactory(organization=org_a, first_name="Same")
        seen = []
        for number in (1, 2):
            page = api.get(f"/api/contacts?ordering=first_name&page={number}").json()
            seen += [c["id"] for c in page["data"]]
        assert len(seen) == len(set(seen)) == 12

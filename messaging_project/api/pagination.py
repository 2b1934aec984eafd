"""Laravel's length-aware page shape: `data`, `links` and `meta`, as in api.md."""

from collections.abc import Sequence
from typing import Any

from django.db.models import Subquery
from rest_framework.pagination import BasePagination
from rest_framework.response import Response

from messaging_project.api.exceptions import PageParameterError

PREVIOUS_LABEL = "&laquo; Previous"
NEXT_LABEL = "Next &raquo;"
GAP = None  # a "..." entry in the window
MAX_PAGE = 1_000_000_000  # keeps the offset far inside a 64-bit integer


def laravel_window(current: int, last: int, on_each_side: int = 3) -> list[int | None]:
    """The page numbers Laravel's UrlWindow shows, GAP standing for "...".

    Few pages: all of them. Otherwise the start, a slider around the current
    page and the end, with the slider merged into whichever end it is close to.
    """
    if last < on_each_side * 2 + 8:
        return list(range(1, last + 1))
    window = on_each_side + 4
    start, finish = [1, 2], [last - 1, last]
    if current <= window:
        return [*range(1, window + on_each_side + 1), GAP, *finish]
    if current > last - window:
        return [*start, GAP, *range(last - (window + on_each_side - 1), last + 1)]
    slider = range(current - on_each_side, current + on_each_side + 1)
    return [*start, GAP, *slider, GAP, *finish]


def read_positive_int(params, name: str, default: int, maximum: int) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit()):
        raise PageParameterError({name: [f"The {name} field must be an integer."]})
    value = int(raw)
    if value < 1:
        raise PageParameterError({name: [f"The {name} field must be at least 1."]})
    if value > maximum:
        raise PageParameterError({name: [f"The {name} field must not be greater than {maximum}."]})
    return value


def id_direction(queryset) -> str | None:
    """ "asc" or "desc" when the queryset is ordered by its primary key first, else None."""
    ordering = queryset.query.order_by or queryset.model._meta.ordering
    first = ordering[0] if ordering else None
    return {"id": "asc", "pk": "asc", "-id": "desc", "-pk": "desc"}.get(first) if first else None


def page_rows(queryset, offset: int, limit: int) -> list[Any]:
    """The rows of one page.

    Ordered by id, a page is found by its first id: the subquery walks only the narrow
    (organization, id) index to skip `offset` entries (an index-only scan on
    PostgreSQL), and the page is then read from that id on. A plain OFFSET would fetch
    and throw away every skipped row. Page 1 goes the same way: with a plain
    `ORDER BY id LIMIT 10`, PostgreSQL walks the primary key through every other
    organization's older rows when one organization holds most of the table (40 ms
    instead of 1 ms at a million contacts). Still one query, on one snapshot.
    """
    direction = id_direction(queryset)
    if direction is None:
        return list(queryset[offset : offset + limit])
    first_id = Subquery(queryset.values("pk")[offset : offset + 1])
    bound = {"pk__gte": first_id} if direction == "asc" else {"pk__lte": first_id}
    return list(queryset.filter(**bound)[:limit])


class LaravelPagination(BasePagination):
    page_param = "page"
    per_page_param = "per_page"
    default_per_page = 10
    max_per_page = 100

    def read_page(self, request) -> int:
        """Reads `page` and `per_page` from the request; returns the page's offset."""
        self.request = request
        self.page = read_positive_int(request.query_params, self.page_param, 1, MAX_PAGE)
        self.per_page = read_positive_int(
            request.query_params, self.per_page_param, self.default_per_page, self.max_per_page
        )
        return (self.page - 1) * self.per_page

    def paginate_queryset(self, queryset, request, view=None) -> list[Any]:
        offset = self.read_page(request)
        items = self.rows(queryset, offset, self.per_page)
        # A partly filled page tells the total by itself; only a full or empty one needs a count.
        if items and len(items) < self.per_page:
            self.total = offset + len(items)
        elif not items and self.page == 1:
            self.total = 0
        else:
            self.total = self.count(queryset)
        return items

    def rows(self, queryset, offset: int, limit: int) -> list[Any]:
        """The page's rows; a subclass may know a faster way to them."""
        return page_rows(queryset, offset, limit)

    def count(self, queryset) -> int:
        """The list's exact total; a subclass may know it without counting."""
        return queryset.count()

    def page_url(self, page: int | None) -> str | None:
        if page is None:
            return None
        before, after = self.url_around_page
        return f"{before}{page}{after}"

    def around_page(self) -> tuple[str, str]:
        """The page URL before and after its page number. The query string is encoded
        once for all of a response's links; other parameters keep their order."""
        if not self.request.query_params:  # most pages: nothing to keep but the page
            return f"{self.path}?{self.page_param}=", ""
        params = self.request.query_params.copy()
        params[self.page_param] = "0"
        pieces = params.urlencode().split("&")  # an encoded value never holds a bare &
        position = 0
        for key, values in params.lists():
            if key == self.page_param:
                break
            position += len(values)
        before = "&".join(pieces[: position + 1])[:-1]  # up to "page=", without the 0
        after = "".join(f"&{piece}" for piece in pieces[position + 1 :])
        return f"{self.path}?{before}", after

    def get_paginated_response(self, data: Sequence[Any]) -> Response:
        return Response(self.page_body(data))

    def page_body(self, data: Sequence[Any]) -> dict[str, Any]:
        self.path = self.request.build_absolute_uri(self.request.path)
        self.url_around_page = self.around_page()
        page, last_page = self.page, max(1, -(-self.total // self.per_page))
        first_item = (page - 1) * self.per_page + 1 if data else None
        previous_url = self.page_url(page - 1 if page > 1 else None)
        next_url = self.page_url(page + 1 if page < last_page else None)
        return {
            "data": list(data),
            "links": {
                "first": self.page_url(1),
                "last": self.page_url(last_page),
                "prev": previous_url,
                "next": next_url,
            },
            "meta": {
                "current_page": page,
                "from": first_item,
                "last_page": last_page,
                "links": [
                    {"url": previous_url, "label": PREVIOUS_LABEL, "active": False},
                    *(self.window_link(number) for number in laravel_window(page, last_page)),
                    {"url": next_url, "label": NEXT_LABEL, "active": False},
                ],
                "path": self.path,
                "per_page": self.per_page,
                "to": first_item + len(data) - 1 if first_item is not None else None,
                "total": self.total,
            },
        }

    def window_link(self, number: int | None) -> dict[str, Any]:
        if number is GAP:
            return {"url": None, "label": "...", "active": False}
        return {"url": self.page_url(number), "label": str(number), "active": number == self.page}

"""The contact list's pages: Laravel's shape, with the total and the plain list's rows
read from the organization's id blocks (contacts.selectors) instead of counted or
walked."""

from typing import Any

from contacts import selectors
from contacts.api.filters import ContactFilter
from messaging_project.api.pagination import LaravelPagination, id_direction

FILTERS = [name for name in ContactFilter.base_filters if name != "ordering"]


class ContactPagination(LaravelPagination):
    """Without a filter, `meta.total` is the organization's live-contact count, not a
    COUNT(*), and a list by id is the plain list, read by contacts.selectors: its page
    and total in one query, a deep page started from the blocks. A filtered list is
    paged and counted as any other.

    The plain list is read for the token's organization, not through the view's
    queryset, which without a filter is that organization's live contacts by id.
    """

    def paginate_queryset(self, queryset, request, view=None) -> list[Any]:
        self.organization_id = view.organization.pk
        self.filtered = any(request.query_params.get(name, "").strip() for name in FILTERS)
        self.total_with_page: int | None = None
        return super().paginate_queryset(queryset, request, view)

    def rows(self, queryset, offset: int, limit: int) -> list[Any]:
        if self.filtered or id_direction(queryset) != "asc":
            return super().rows(queryset, offset, limit)
        page = selectors.contact_page(
            organization_id=self.organization_id, offset=offset, limit=limit
        )
        self.total_with_page = page.total
        return page.contacts

    def count(self, queryset) -> int:
        if self.filtered:
            return queryset.count()
        if self.total_with_page is not None:  # read on the page's own snapshot
            return self.total_with_page
        return selectors.live_contact_count(organization_id=self.organization_id)

"""The conversation list's pages: Laravel's shape; the unfiltered list's page and total
are read by inbox.queries (written out, its total the organization's kept count of
conversations) instead of the ORM's page and COUNT(*)."""

from collections.abc import Callable
from typing import Any

from inbox import selectors
from messaging_project.api.pagination import LaravelPagination


class ConversationPagination(LaravelPagination):
    """`meta.total` of the whole list (a view's `whole_list`) is the organization's count
    of conversations; a conversation's messages are read with their count
    (`read_with_total`); a filtered list and the notes are counted as any other."""

    def paginate_queryset(self, queryset, request, view=None) -> list[Any]:
        self.whole_list = getattr(view, "whole_list", False)
        self.organization_id = view.organization.pk if view is not None else None
        self.total_with_page: int | None = None
        return super().paginate_queryset(queryset, request, view)

    def rows(self, queryset, offset: int, limit: int) -> list[Any]:
        if not self.whole_list or self.organization_id is None:
            return super().rows(queryset, offset, limit)
        page, self.total_with_page = selectors.conversation_page(
            organization_id=self.organization_id, offset=offset, limit=limit
        )
        return page

    def count(self, queryset) -> int:
        if self.total_with_page is not None:  # read with the page
            return self.total_with_page
        if self.whole_list and self.organization_id is not None:
            return selectors.conversation_total(organization_id=self.organization_id)
        return queryset.count()

    def read_with_total(
        self, request, read: Callable[[int, int], tuple[list[Any], int] | None]
    ) -> list[Any] | None:
        """A page read with its total in one go, `read(offset, limit)` (a conversation's
        messages); None when `read` finds nothing to page."""
        found = read(self.read_page(request), self.per_page)
        if found is None:
            return None
        page, self.total = found
        return page

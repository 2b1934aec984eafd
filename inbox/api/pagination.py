"""The conversation list's pages: Laravel's shape, with the unfiltered list's total read
from the organization's count of conversations (inbox.queries) instead of counted."""

from typing import Any

from inbox import selectors
from messaging_project.api.pagination import LaravelPagination


class ConversationPagination(LaravelPagination):
    """`meta.total` of the whole list (a view's `whole_list`) is the organization's count
    of conversations; a filtered list, a conversation's messages and its notes are
    counted as any other."""

    def paginate_queryset(self, queryset, request, view=None) -> list[Any]:
        self.whole_list = getattr(view, "whole_list", False)
        self.organization_id = view.organization.pk if view is not None else None
        return super().paginate_queryset(queryset, request, view)

    def count(self, queryset) -> int:
        if self.whole_list and self.organization_id is not None:
            return selectors.conversation_total(organization_id=self.organization_id)
        return queryset.count()

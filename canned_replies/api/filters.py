import django_filters

from canned_replies.models import CannedReply, MatchCriteria
from messaging_project.api.filters import StableOrderingFilter, search_terms


class CannedReplyFilter(django_filters.FilterSet):
    search = django_filters.CharFilter(method="filter_search", max_length=255)
    match_criteria = django_filters.ChoiceFilter(choices=MatchCriteria.choices)
    ordering = StableOrderingFilter(fields=["id", "name", "trigger", "created_at", "updated_at"])

    class Meta:
        model = CannedReply
        fields: list[str] = []

    def filter_search(self, qs, name, value):
        return search_terms(qs, ["name", "trigger", "metadata__data__text"], value)

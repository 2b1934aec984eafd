"""Filter pieces shared by the resources' filter sets."""

import django_filters
from django.db.models import Q


class StableOrderingFilter(django_filters.OrderingFilter):
    """`ordering=-name,phone`; `id` breaks ties so pages never overlap."""

    def filter(self, qs, value):
        # `ordering=,` parses to blank entries; skip them as django-filter's own filter does.
        fields = [self.get_ordering_value(param) for param in value or () if param]
        if not fields:
            return qs
        return qs.order_by(*fields, "id")


def search_terms(qs, fields: list[str], value: str):
    """Every whitespace-separated term must appear in at least one of the fields."""
    for term in value.split():
        match = Q()
        for field in fields:
            match |= Q(**{f"{field}__icontains": term})
        qs = qs.filter(match)
    return qs

"""Filter pieces shared by the resources' filter sets."""

import django_filters
from django.db.models import Q
from django_filters.rest_framework import DjangoFilterBackend


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


class FilterBackend(DjangoFilterBackend):
    """django-filter's backend, which leaves a list alone when the request names none of
    its filters: no filter set, form or validation to build for the plain list, the one
    every client pages through (they cost about as much as reading the page).

    A parameter counts when it starts with a filter's name, so that the suffixed
    parameters of range filters (`created_after`) still build the set.
    """

    def filter_queryset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is None:
            return queryset
        names = tuple(filterset_class.base_filters)
        if not any(param.startswith(names) for param in request.query_params):
            return queryset
        return super().filter_queryset(request, queryset, view)

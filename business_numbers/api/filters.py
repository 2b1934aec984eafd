import django_filters

from business_numbers.models import MessageTemplate
from messaging_project.api.filters import StableOrderingFilter


class MessageTemplateFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains", max_length=512)
    language = django_filters.CharFilter(max_length=16)
    status = django_filters.CharFilter(lookup_expr="iexact", max_length=32)
    ordering = StableOrderingFilter(fields=["id", "name", "language", "updated_at"])

    class Meta:
        model = MessageTemplate
        fields: list[str] = []

import django_filters

from contacts.models import Contact, ContactGroup
from messaging_project.api.filters import StableOrderingFilter, search_terms


class ContactFilter(django_filters.FilterSet):
    search = django_filters.CharFilter(method="filter_search", max_length=255)
    contact_group = django_filters.UUIDFilter(field_name="contact_group__uuid")
    is_favorite = django_filters.TypedChoiceFilter(
        choices=[("0", "0"), ("1", "1")], coerce=lambda value: value == "1"
    )
    ordering = StableOrderingFilter(
        fields=["id", "first_name", "last_name", "phone", "email", "created_at", "updated_at"]
    )

    class Meta:
        model = Contact
        fields: list[str] = []

    def filter_search(self, qs, name, value):
        # "+1 415" finds 1415...: the plus is not stored.
        return search_terms(
            qs, ["first_name", "last_name", "phone", "email"], value.replace("+", "")
        )


class ContactGroupFilter(django_filters.FilterSet):
    search = django_filters.CharFilter(field_name="name", lookup_expr="icontains", max_length=255)
    ordering = StableOrderingFilter(fields=["id", "name", "created_at", "updated_at"])

    class Meta:
        model = ContactGroup
        fields: list[str] = []

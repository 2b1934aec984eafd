"""Checks that a body the service builds has exactly the fields its OpenAPI description
documents, at every level the description spells out (nested records, list items)."""

from typing import Any

from rest_framework import serializers


def assert_documented(data: Any, documented: serializers.BaseSerializer, where: str = "") -> None:
    """`data` has every documented field and no other; so do its nested records.

    A null nested record or an empty list has nothing more to compare."""
    if isinstance(documented, serializers.ListSerializer):
        assert isinstance(data, list), f"{where or 'the body'} is not a list"
        for index, item in enumerate(data):
            assert_documented(item, documented.child, f"{where}.{index}")
        return
    assert isinstance(data, dict), f"{where or 'the body'} is not an object"
    fields = documented.fields
    assert set(data) == set(fields), where or "the body"
    for name, field in fields.items():
        if isinstance(field, serializers.BaseSerializer) and data[name] is not None:
            assert_documented(data[name], field, f"{where}.{name}".lstrip("."))

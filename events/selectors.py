"""Reads of the events app: an endpoint's deliveries, newest first."""

from django.db.models import QuerySet

from events.models import Delivery, Endpoint


def endpoint_deliveries(endpoint: Endpoint) -> QuerySet[Delivery]:
    return Delivery.objects.filter(endpoint=endpoint).order_by("-id").defer("body")

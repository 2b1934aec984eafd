"""Reads of the events app: an endpoint, and its deliveries newest first."""

from django.db.models import QuerySet

from events.models import Delivery, Endpoint


def endpoint_deliveries(endpoint: Endpoint) -> QuerySet[Delivery]:
    return Delivery.objects.filter(endpoint=endpoint).order_by("-id").defer("body")


def live_endpoint(organization, uuid: str) -> Endpoint | None:
    """The organization's endpoint of that uuid, unless it was deleted."""
    return Endpoint.objects.live().filter(organization=organization, uuid=uuid).first()

from django.urls import re_path

from contacts.api.transfer import ContactTransferViewSet
from contacts.api.views import ContactGroupViewSet, ContactViewSet
from messaging_project.api.routers import ApiRouter

router = ApiRouter()
router.register("contacts", ContactViewSet, basename="contact")
router.register("contact-groups", ContactGroupViewSet, basename="contact-group")

# Before the router's: `contacts/import` would otherwise be read as a contact's uuid.
urlpatterns = [
    re_path(
        r"^contacts/import/?$",
        ContactTransferViewSet.as_view({"post": "start_import"}),
        name="contact-import",
    ),
    re_path(
        r"^contacts/imports/(?P<import_uuid>[^/]+)/?$",
        ContactTransferViewSet.as_view({"get": "show_import"}),
        name="contact-import-detail",
    ),
    re_path(
        r"^contacts/export/?$",
        ContactTransferViewSet.as_view({"get": "export"}),
        name="contact-export",
    ),
    *router.urls,
]

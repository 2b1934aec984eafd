from contacts.api.views import ContactGroupViewSet, ContactViewSet
from messaging_project.api.routers import ApiRouter

router = ApiRouter()
router.register("contacts", ContactViewSet, basename="contact")
router.register("contact-groups", ContactGroupViewSet, basename="contact-group")

urlpatterns = router.urls

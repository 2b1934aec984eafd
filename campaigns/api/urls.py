from campaigns.api.views import CampaignViewSet
from messaging_project.api.routers import ApiRouter

router = ApiRouter()
router.register("campaigns", CampaignViewSet, basename="campaign")

urlpatterns = router.urls

"""Settings for a stack of this tree whose analytics keeps no figures: the analytics app
installed as always (its tables, its API) but without its listeners, so that sending
announces nothing to it. bench/analytics_webhooks.py serves it beside an ordinary stack
to measure what keeping the figures costs the webhooks.

    DJANGO_SETTINGS_MODULE=bench.analytics_off
"""

from analytics.apps import AnalyticsConfig
from messaging_project.settings import *  # noqa: F403
from messaging_project.settings import INSTALLED_APPS


class AnalyticsWithoutListeners(AnalyticsConfig):
    """The analytics app, its listeners not registered."""

    def ready(self):
        # The API's schema only (as AnalyticsConfig.ready does): no `listen(...)`.
        from analytics.api import schema  # noqa: F401


INSTALLED_APPS = [
    "bench.analytics_off.AnalyticsWithoutListeners" if app == "analytics" else app
    for app in INSTALLED_APPS
]

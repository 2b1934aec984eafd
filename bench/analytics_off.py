"""Settings for a stack of this tree whose analytics keeps no figures: the analytics app
installed as always (its tables, its API) but without its listeners, so that sending
announces nothing to it, and without its fold, so that nothing counts the chats the
statuses move (bench/analytics_webhooks.py also drops the trigger that marks them, OFF_SEED).
bench/analytics_webhooks.py serves it beside an ordinary stack to measure what keeping
the figures costs the webhooks.

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
        from analytics.tasks import fold_increments
        from messaging_project.worker.schedule import jobs

        # Imported once: the worker's discovery finds the module loaded, the job gone.
        jobs.pop(fold_increments.module_path, None)


INSTALLED_APPS = [
    "bench.analytics_off.AnalyticsWithoutListeners" if app == "analytics" else app
    for app in INSTALLED_APPS
]

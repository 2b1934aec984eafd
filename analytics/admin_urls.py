"""The analytics dashboard: a page of the admin site, behind its login (docs/analytics.md)."""

from django.contrib import admin
from django.urls import path

from analytics.dashboard import dashboard_view

urlpatterns = [
    path("", admin.site.admin_view(dashboard_view), name="admin-analytics"),
]

"""The admin header's language switch (Django's set_language, remembered per user)."""

from django.urls import path

from accounts.languages import switch_language

urlpatterns = [
    path("", switch_language, name="admin_language"),
]

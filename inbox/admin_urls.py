"""The admin inbox's URLs, /admin/inbox/ (messaging_project/urls.py puts them before the
admin site's own). Every page goes through the admin site's login, CSRF and cache
headers; the live check does not, and reads no session (inbox/live.py)."""

from django.contrib import admin
from django.urls import path

from inbox import admin_views as views

app_name = "inbox_admin"


def staff_only(view):
    return admin.site.admin_view(view)


urlpatterns = [
    path("", staff_only(views.conversation_list), name="list"),
    path("live/<str:token>", views.live_changes, name="live"),
    path("<uuid:uuid>/", staff_only(views.conversation_page), name="conversation"),
    path("<uuid:uuid>/media/<uuid:chat>", staff_only(views.media), name="media"),
    path("<uuid:uuid>/send/", staff_only(views.send_message), name="send"),
    path("<uuid:uuid>/send-template/", staff_only(views.send_template), name="send_template"),
    path("<uuid:uuid>/note/", staff_only(views.add_note), name="note"),
    path("<uuid:uuid>/assign/", staff_only(views.assign), name="assign"),
    path("<uuid:uuid>/labels/", staff_only(views.set_labels), name="labels"),
    path("<uuid:uuid>/status/", staff_only(views.set_status), name="status"),
]

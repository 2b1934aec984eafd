"""Each app's routes under /api/ are tried only for the first path segments they serve
(messaging_project/api/routers.py): a route resolves without trying the patterns of the
apps listed before its own that serve other segments, and every named route is still
reached."""

from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

SOME_UUID = "3f2b8c1e-1111-4222-8333-944455556666"


def api_routes() -> list[URLPattern]:
    """The routes of the apps' includes under /api/."""
    (api,) = [p for p in get_resolver().url_patterns if str(p.pattern) == "api/"]
    return [
        route
        for app in api.url_patterns
        if isinstance(app, URLResolver)
        for route in app.url_patterns
    ]


def url_of(route: URLPattern) -> str:
    return reverse(route.name, kwargs=dict.fromkeys(route.pattern.regex.groupindex, SOME_UUID))


def test_every_route_resolves_to_itself():
    routes = api_routes()
    assert len(routes) > 30
    for route in routes:
        url = url_of(route)
        assert resolve(url).url_name == route.name, url
        assert resolve(url + "/").url_name == route.name, url


def serves(app: URLResolver, segment: str) -> bool:
    return any(r.pattern.regex.pattern.startswith(f"^{segment}/") for r in app.url_patterns)


def test_a_route_tries_only_the_apps_that_serve_its_first_segment():
    for route in api_routes():
        url = url_of(route)
        segment = url.removeprefix("/api/").partition("/")[0]
        # Chains of root -> api/ -> an app's include -> one of its routes.
        tried_apps = [chain[1] for chain in resolve(url).tried if len(chain) == 3]
        assert tried_apps, url
        for app in tried_apps:
            assert serves(app, segment), (url, app.urlconf_name)


def test_the_inbox_messages_page_tries_only_the_inbox_routes_before_it():
    url = reverse("conversation-messages", kwargs={"uuid": SOME_UUID})
    tried = [chain[2].name for chain in resolve(url).tried if len(chain) == 3]
    assert tried == ["conversation-list", "conversation-detail", "conversation-messages"]


def test_unknown_paths_still_reach_the_json_not_found():
    for path in ["/api/nope", "/api/", "/api/contacts/a/b", "/api/conversationsx"]:
        assert resolve(path).func.__name__ == "not_found", path

from rest_framework.routers import SimpleRouter


class ApiRouter(SimpleRouter):
    """`/api/contacts` as api.md writes it; a trailing slash is accepted too."""

    def __init__(self) -> None:
        super().__init__()
        self.trailing_slash = "/?"

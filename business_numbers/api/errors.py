"""The API's answers for a channel that failed or refused (docs/api.md, "Errors"): one
table from a GatewayError's kind to the contract's status, for the sends and for the
template writes alike."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from business_numbers.gateway import ChannelNotConfigured, FailureKind, GatewayError
from business_numbers.gateway.base import NOT_CONFIGURED
from messaging_project.api.exceptions import ApiError

# The status for each way the channel can fail.
CHANNEL_STATUS = {
    FailureKind.REFUSED: 422,
    FailureKind.CREDENTIALS: 502,
    FailureKind.UNAVAILABLE: 502,
    FailureKind.TIMEOUT: 504,
}
CREDENTIALS_MESSAGE = (
    "The WhatsApp channel rejected this organization's credentials; "
    "the channel credentials need attention."
)


def channel_error(error: GatewayError) -> dict[str, Any]:
    """The contract's `channel_error` object: Graph's error, as the gateway kept it."""
    return {
        "code": error.code,
        "type": error.type,
        "message": error.message,
        "details": error.details,
        "fbtrace_id": error.fbtrace_id,
    }


def channel_message(error: GatewayError) -> str:
    """The sentence the API answers with: Graph's own text, unless it rejected our credentials
    (then the organization must act, whatever Graph's wording)."""
    if error.kind == FailureKind.CREDENTIALS:
        return CREDENTIALS_MESSAGE
    return error.message


def channel_failure(error: GatewayError) -> ApiError:
    return ApiError(
        CHANNEL_STATUS[error.kind], channel_message(error), channel_error=channel_error(error)
    )


@contextmanager
def gateway_errors() -> Iterator[None]:
    """A call to the channel outside a send (a template written at WhatsApp): its failure
    in the shape of a send's."""
    try:
        yield
    except ChannelNotConfigured as error:
        raise ApiError(403, error.detail or NOT_CONFIGURED) from None
    except GatewayError as error:
        raise channel_failure(error) from None

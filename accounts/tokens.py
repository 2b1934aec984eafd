"""The token format: `wam_<prefix>_<secret>`.

The prefix is public (it is how `list_tokens` and `revoke_token` name a token and how
a request finds its row); the secret is 32 random bytes. Only SHA-256 of the whole
token is stored: the token has enough entropy that a slow hash adds nothing.

A token the original product issued (40 random letters and digits) is kept the same way
(`manage.py import_token`): its public prefix is `imp` and the start of its digest, the
one thing about it a request can compute, so it is found as ours are, by its prefix.
"""

import hashlib
import hmac
import re
import secrets

TOKEN_PATTERN = re.compile(r"^wam_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
# What an imported token may be: long enough to be unguessable, and only the printable,
# spaceless characters a bearer header carries.
IMPORTED_MIN_LENGTH = 32
IMPORTED_MAX_LENGTH = 255
IMPORTED_PATTERN = re.compile(r"^[\x21-\x7e]+$")
IMPORTED_PREFIX = "imp"


def new_token() -> tuple[str, str, str]:
    """A fresh (token, prefix, digest)."""
    prefix = secrets.token_hex(6)
    token = f"wam_{prefix}_{secrets.token_urlsafe(32)}"
    return token, prefix, digest_of(token)


def digest_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def prefix_of(token: str) -> str | None:
    """The token's public prefix: ours by its format, an imported one's by its digest."""
    match = TOKEN_PATTERN.match(token)
    if match:
        return match.group(1)
    return imported_prefix(token) if is_importable(token) else None


def is_importable(token: str) -> bool:
    """Whether `token` has the shape of a token another product issued (not ours)."""
    return (
        IMPORTED_MIN_LENGTH <= len(token) <= IMPORTED_MAX_LENGTH
        and IMPORTED_PATTERN.match(token) is not None
        and not token.startswith("wam_")
    )


def imported_prefix(token: str) -> str:
    return IMPORTED_PREFIX + digest_of(token)[:12]


def digest_matches(token: str, digest: str) -> bool:
    return hmac.compare_digest(digest_of(token), digest)

"""Settings, read once from the environment.

(Over 400 lines: one file on purpose, so every setting and its default is found here.)

With no environment at all the service runs locally: SQLite under ``var/``, the
database cache, DEBUG off, and every organization on the sandbox channel.
Production sets DATABASE_URL, REDIS_URL, SECRET_KEY and ALLOWED_HOSTS.
"""

import ipaddress
import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("VAR_DIR", BASE_DIR / "var"))


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    value = env_str(name)
    if not value:
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}.")


def env_number(name: str, default: float, *, minimum: float = 1) -> float:
    value = env_str(name)
    if not value:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}.") from None
    if number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}.")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = env_str(name)
    return [item.strip() for item in value.split(",") if item.strip()] if value else default


def env_delays(name: str, default: list[float]) -> list[float]:
    """Comma-separated seconds, each at least 0 (an empty list: no retry)."""
    value = env_str(name)
    if not value:
        return default
    try:
        delays = [float(item) for item in value.split(",") if item.strip()]
    except ValueError:
        raise ImproperlyConfigured(
            f"{name} must be comma-separated seconds, not {value!r}."
        ) from None
    if any(delay < 0 or delay != delay for delay in delays):
        raise ImproperlyConfigured(f"{name} must not hold negative delays.")
    return delays


def local_secret_key() -> str:
    """A random key kept in var/, so that every worker and restart shares it; readable by
    its owner alone, as a key is."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        candidate = path.with_name(f"secret_key.{os.getpid()}")
        with os.fdopen(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as key:
            key.write(secrets.token_urlsafe(50))
        try:
            os.link(candidate, path)  # atomic: the first process to get here wins
        except FileExistsError:
            pass
        finally:
            candidate.unlink()
    return path.read_text().strip()


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY") or local_secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# HTTPS in production. Off by default so that `make run` works on http://127.0.0.1;
# HTTPS=true turns every setting below on, and each may still be set on its own.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", HTTPS)
SECURE_HSTS_SECONDS = int(env_number("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS else 0, minimum=0))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
# Preloading is hard to undo, so it is never implied. Set to false, it is a decision the
# deploy check's reminder (security.W021) has had its answer to; left unset, it warns.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = (
    ["security.W021"] if env_str("SECURE_HSTS_PRELOAD") and not SECURE_HSTS_PRELOAD else []
)
# Load balancers probe the backends over plain http: the health checks answer there too.
SECURE_REDIRECT_EXEMPT = [r"^health/"]
# Behind a proxy that terminates TLS: the header it sets, e.g. X-Forwarded-Proto. Only
# set it when the proxy always overwrites that header, or clients could claim https.
_proxy_ssl_header = env_str("SECURE_PROXY_SSL_HEADER")
if _proxy_ssl_header:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https")
# Django's defaults, written down because the admin relies on them.
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True

# The largest valid request, a template send with many parameters, is a few tens of
# KiB; anything over this is refused with a 413 before it is read.
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024
# The API paths that take a larger body (a contacts import's file: at most 20 MB, and the
# form's own bytes); their view refuses a file over its own limit with a clear 400.
LARGE_BODY_PATHS = {"/api/contacts/import"}
LARGE_BODY_MAX_SIZE = 21 * 1024 * 1024

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # The base layers before the apps built on them: the plumbing (core), the task
    # runtime (worker) and the HTTP conventions (api).
    "messaging_project.core",
    "messaging_project.worker",
    "messaging_project.api",
    "accounts",
    "contacts",
    "canned_replies",
    "business_numbers",
    "sending",
    "inbound",
    "campaigns",
    "inbox",
    "analytics",
    "events",
    # Background work. After the worker app, whose `db_worker` command (with heartbeats,
    # recovery, threads and the clean-up schedule) replaces django_tasks_db's.
    "django_tasks",
    "django_tasks_db",
    # /metrics (messaging_project/api/metrics.py): request and database metrics.
    "django_prometheus",
]

MIDDLEWARE = [
    # Prometheus's first and last: the request metrics span every other middleware.
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    # One line per request (JSON with LOG_FORMAT=json), with its request id.
    "messaging_project.core.request_log.RequestLogMiddleware",
    "messaging_project.api.middleware.ApiResponseMiddleware",
    # Laravel's `_method` and X-HTTP-Method-Override, after the body limits are checked.
    "messaging_project.api.middleware.MethodOverrideMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Open inbox pages' live checks, answered here (after HTTPS and its headers are
    # enforced): none of what follows concerns them.
    "inbox.middleware.LiveCheckMiddleware",
    # Likewise WhatsApp's deliveries of statuses alone, when they are queued.
    "inbound.middleware.StatusWebhookMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The admin in the staff member's language (Accept-Language, else LANGUAGE_CODE);
    # everything else in English, the API's language (docs/admin.md).
    "messaging_project.core.locale.AdminLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "messaging_project.api.middleware.AdminContentSecurityPolicyMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "messaging_project.urls"
WSGI_APPLICATION = "messaging_project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Persistent connections: opening one per request cost three times the throughput.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=600,
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # IMMEDIATE takes the write lock when a transaction starts, so concurrent
    # writers queue instead of failing with "database is locked" half-way.
    DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20}
    # Tests use a file too: an in-memory database shared between threads locks whole
    # tables and fails at once instead of waiting, unlike the file the service uses.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test_{os.getpid()}.sqlite3")}
    DATABASES["default"]["CONN_MAX_AGE"] = 0 if DEBUG else 600

# Behind a pooler in transaction pooling mode (PgBouncer's `pool_mode = transaction`,
# docs/operations.md), consecutive transactions of one connection may run on different
# server connections, so nothing may outlive a transaction: no server-side cursors (a
# queryset's iterator() would keep one open across transactions), no prepared
# statements (Django's default already; written down), and no LISTEN, the one session
# feature the service uses: the worker listens on DATABASE_DIRECT_URL instead, or polls.
DATABASE_POOLING = (env_str("DATABASE_POOLING") or "none").lower()
if DATABASE_POOLING not in {"none", "session", "transaction"}:
    raise ImproperlyConfigured(
        f"DATABASE_POOLING must be none, session or transaction, not {DATABASE_POOLING!r}."
    )
# PostgreSQL itself, not through the pooler: the worker's LISTEN connection (one per
# worker process). Unset, or unreachable, the worker looks for tasks every --interval.
# (Both are for PostgreSQL; SQLite ignores them.)
DATABASE_DIRECT_URL = env_str("DATABASE_DIRECT_URL")
DATABASE_DIRECT = dj_database_url.parse(DATABASE_DIRECT_URL) if DATABASE_DIRECT_URL else None
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    if DATABASE_POOLING == "transaction":
        DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
        DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = None
        if DATABASES["default"]["OPTIONS"].get("server_side_binding") is True:
            raise ImproperlyConfigured(
                "DATABASE_POOLING=transaction: server_side_binding would prepare statements."
            )
    if DATABASE_DIRECT and DATABASE_DIRECT["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_DIRECT_URL must be a postgres:// URL.")

# django-prometheus's wrappers of the same backends count queries, errors and connections;
# PostgreSQL's through ours, whose health check of an idle connection costs no round trip
# (messaging_project/core/postgresql/base.py).
DATABASES["default"]["ENGINE"] = DATABASES["default"]["ENGINE"].replace(
    "django.db.backends.", "django_prometheus.db.backends.", 1
)
if DATABASES["default"]["ENGINE"] == "django_prometheus.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "messaging_project.core.postgresql"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The rate limiter's counters live here, so the cache must be shared by every
# gunicorn worker: Redis in production, the database otherwise.
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "messaging_project.core.cache.SharedRedisCache",
            "LOCATION": REDIS_URL,
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "messaging_project.core.cache.AtomicDatabaseCache",
            "LOCATION": "django_cache",
        }
    }

# Staff members hold their organization's apps' permissions (accounts/backends.py).
AUTHENTICATION_BACKENDS = ["accounts.backends.StaffMemberBackend"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The admin's languages (docs/admin.md): those whose catalogs, Django's and ours (locale/),
# are complete. LANGUAGE_CODE is the admin's language when the browser asks for none of
# them; the API, its errors and the events are English whatever it is.
LANGUAGES = [("en", "English"), ("es", "Español"), ("pt-br", "Português (Brasil)")]
LANGUAGE_CODE = env_str("LANGUAGE_CODE", "en-us").lower()
if not any(LANGUAGE_CODE.split("-")[0] == code.split("-")[0] for code, _ in LANGUAGES):
    raise ImproperlyConfigured(
        f"LANGUAGE_CODE must be one of {', '.join(code for code, _ in LANGUAGES)}, "
        f"not {LANGUAGE_CODE!r}."
    )
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns when it is missing
# Media (docs/media.md): customers' images, voice notes, videos and documents are kept in
# Django's default storage, the file system under MEDIA_ROOT unless MEDIA_STORAGE=s3 puts
# them in an S3-compatible bucket (django-storages; its AWS_* settings below).
MEDIA_ROOT = Path(env_str("MEDIA_ROOT") or VAR_DIR / "media")
MEDIA_STORAGE = env_str("MEDIA_STORAGE", "filesystem").lower()
DEFAULT_STORAGE: dict[str, Any]
if MEDIA_STORAGE == "filesystem":
    DEFAULT_STORAGE = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
elif MEDIA_STORAGE == "s3":
    DEFAULT_STORAGE = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env_str("AWS_STORAGE_BUCKET_NAME"),
            "endpoint_url": env_str("AWS_S3_ENDPOINT_URL") or None,
            "region_name": env_str("AWS_S3_REGION_NAME") or None,
            "access_key": env_str("AWS_S3_ACCESS_KEY_ID") or None,
            "secret_key": env_str("AWS_S3_SECRET_ACCESS_KEY") or None,
            "location": env_str("AWS_LOCATION"),
            "default_acl": None,  # private: the files leave only through the API
            "querystring_auth": True,
            "file_overwrite": False,
        },
    }
    if not DEFAULT_STORAGE["OPTIONS"]["bucket_name"]:
        raise ImproperlyConfigured("MEDIA_STORAGE=s3 needs AWS_STORAGE_BUCKET_NAME.")
else:
    raise ImproperlyConfigured(f"MEDIA_STORAGE must be filesystem or s3, not {MEDIA_STORAGE!r}.")
STORAGES = {
    "default": DEFAULT_STORAGE,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Bytes read from the channel and written to storage at a time while media downloads.
MEDIA_CHUNK_SIZE = int(env_number("MEDIA_CHUNK_SIZE", 1024 * 1024, minimum=4096))
# Seconds one media file's download may take in all (connect to its last byte).
MEDIA_DOWNLOAD_TIMEOUT = env_number("MEDIA_DOWNLOAD_TIMEOUT", 60, minimum=0.01)
# Serve straight from the apps when collectstatic has not run (tests, first start).
WHITENOISE_USE_FINDERS = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["messaging_project.api.throttling.OrganizationRateThrottle"],
    "DEFAULT_PAGINATION_CLASS": "messaging_project.api.pagination.LaravelPagination",
    "DEFAULT_FILTER_BACKENDS": ["messaging_project.api.filters.FilterBackend"],
    "DEFAULT_PARSER_CLASSES": [
        "messaging_project.api.parsers.JSONObjectParser",
        # Forms as Laravel reads them (docs/api.md): the original product's clients send them.
        "messaging_project.api.parsers.LaravelFormParser",
        "messaging_project.api.parsers.LaravelMultiPartParser",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "messaging_project.api.exceptions.api_exception_handler",
    "UNAUTHENTICATED_USER": None,
    "PAGE_SIZE": 10,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

# The OpenAPI schema (/api/schema) and Swagger UI (/api/docs); each app documents its views
# in its api/schema.py, the shared parts are in messaging_project/api/schema.py.
SPECTACULAR_SETTINGS = {
    "TITLE": "WhatsApp Business Messaging API",
    "VERSION": "1.0.0",
    "DESCRIPTION": (
        "Send WhatsApp messages and manage contacts, contact groups and canned replies. "
        "Every endpoint takes `Authorization: Bearer <token>`. Errors are "
        '`{"statusCode", "message"}`, plus `errors` (dotted field paths) for validation '
        "failures. Lists are Laravel pages (`data`, `links`, `meta`)."
    ),
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and the docs are public: no token, so no authentication at all.
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",  # served from our own static files: works offline
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["messaging_project.api.schema.without_trailing_slash"],
    # One name for the event names, which several components share.
    "ENUM_NAME_OVERRIDES": {
        "EventNameEnum": "events.models.Event",
        "ConversationStatusEnum": "sending.models.ConversationStatus",
        "StatusEnum": "sending.models.ChatStatus",  # the name it had alone
    },
}

API_RATE_LIMIT = int(env_number("API_RATE_LIMIT", 60))
# Failed authentications allowed per client address and minute before it gets 429s
# (0 turns the limit off, for example behind a proxy that limits on its own).
API_AUTH_FAILURE_LIMIT = int(env_number("API_AUTH_FAILURE_LIMIT", 20, minimum=0))
WHATSAPP_GRAPH_URL = env_str("WHATSAPP_GRAPH_URL", "https://graph.facebook.com/v21.0").rstrip("/")
# Seconds one Cloud API call may take in all (connect, send, the answer's last byte).
WHATSAPP_TIMEOUT = env_number("WHATSAPP_TIMEOUT", 10, minimum=0.01)
# Status updates the WhatsApp webhook queues for the worker instead of applying them
# before it answers (docs/webhooks.md, "Queued statuses"): a status then costs the web
# process one insert, and the worker applies them in batches, within a second.
WHATSAPP_STATUSES_QUEUED = env_bool("WHATSAPP_STATUSES_QUEUED", False)
# The sandbox channel's messages move to sent, delivered and read like WhatsApp's, this
# many seconds apart (the first after acceptance), through the status webhook's own path
# (docs/channel.md, "The sandbox"). Fewer delays stop earlier (`1` is sent and no
# further); `off` keeps them accepted.
SANDBOX_STATUS_DELAYS = (
    []
    if env_str("SANDBOX_STATUS_DELAYS").lower() == "off"
    else env_delays("SANDBOX_STATUS_DELAYS", [1, 1, 2])[:3]
)

# URLs the service fetches or posts to (event webhooks, media) must reach public
# addresses only; true lifts that for development and tests (receivers on loopback).
WEBHOOK_ALLOW_PRIVATE_URLS = env_bool("WEBHOOK_ALLOW_PRIVATE_URLS", False)
# Event webhooks (docs/events.md): an attempt that gets no 2xx within WEBHOOK_TIMEOUT
# seconds (in all: connect, send, the answer's last byte) is tried again after each delay
# of WEBHOOK_RETRY_SCHEDULE (comma-separated seconds) in turn; then the delivery fails.
WEBHOOK_TIMEOUT = env_number("WEBHOOK_TIMEOUT", 10, minimum=0.01)
WEBHOOK_RETRY_SCHEDULE = env_delays(
    "WEBHOOK_RETRY_SCHEDULE", [5, 300, 1800, 7200, 18000, 36000, 36000]
)
# Deliveries under way at once (over every worker) to one endpoint, and to all the
# endpoints of one organization: receivers that never answer hold at most that many of
# the workers' POST slots, and the rest serve the other organizations (docs/events.md).
WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT = int(env_number("WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT", 4))
WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION = int(
    env_number("WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION", 16)
)
# An endpoint whose last WEBHOOK_BREAKER_FAILURES attempts failed is backed off as a
# whole: nothing is attempted for the first delay of WEBHOOK_BREAKER_BACKOFF (seconds),
# then one attempt probes it; each failed probe backs it off for the next delay (the last
# repeats), a success ends it (docs/events.md). 0 failures, or no delays: never.
WEBHOOK_BREAKER_FAILURES = int(env_number("WEBHOOK_BREAKER_FAILURES", 5, minimum=0))
WEBHOOK_BREAKER_BACKOFF = env_delays("WEBHOOK_BREAKER_BACKOFF", [30, 60, 300, 900, 1800, 3600])

# Background work (docs/operations.md): tasks are rows in this database, written on the
# caller's connection, so inside a transaction they commit (or roll back) with the data
# that caused them; `manage.py db_worker` runs them.
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default"],
    }
}
# Tasks one worker process runs at once (each thread holds a database connection).
TASK_WORKER_THREADS = int(env_number("TASK_WORKER_THREADS", 16))
# The connection budget (docs/operations.md, "Connections"): every gunicorn thread and
# every worker thread holds a database connection, and each worker process 4 more (its
# round, its LISTEN, the event deliveries' queue, the queued statuses'). `check --deploy`
# adds up what these say the deployment runs, against PostgreSQL's max_connections less
# its reserved slots:
#   WEB_SERVERS x WORKERS x THREADS + WORKER_PROCESSES x (TASK_WORKER_THREADS + 4)
# One machine with the defaults: 1 x 2 x 32 + 1 x (16 + 4) = 84 of the default 100 - 3.
# WORKERS and THREADS are also gunicorn's (messaging_project/gunicorn_config.py).
WEB_WORKERS = int(env_number("WORKERS", 2))
WEB_THREADS = int(env_number("THREADS", 32))
# Machines running the web process, and db_worker processes in all, on this database.
WEB_SERVERS = int(env_number("WEB_SERVERS", 1))
WORKER_PROCESSES = int(env_number("WORKER_PROCESSES", 1))
# A worker not heard from for this many seconds is dead: its running tasks run again.
TASK_WORKER_TIMEOUT = env_number("TASK_WORKER_TIMEOUT", 60)
# Seconds a worker given SIGTERM lets its outgoing HTTP calls run before it cuts them
# (their work is retried as any failed attempt is): below systemd's TimeoutStopSec (30).
TASK_WORKER_GRACEFUL_TIMEOUT = env_number("TASK_WORKER_GRACEFUL_TIMEOUT", 20, minimum=0)
# A task that failed for a reason worth retrying runs at most this many times in all,
# the first retry after about TASK_RETRY_DELAY seconds, each later one twice as late.
TASK_MAX_ATTEMPTS = int(env_number("TASK_MAX_ATTEMPTS", 5))
TASK_RETRY_DELAY = env_number("TASK_RETRY_DELAY", 10, minimum=0.01)
# Campaigns (docs/campaigns.md): messages per second per organization's number when a
# campaign names no rate (Meta's default throughput is 80); the sender tasks each campaign
# starts (more spread it over more workers) and the sending threads each may run at most
# (threads that only wait for their turn and the channel: they hold no database connection).
CAMPAIGN_RATE = int(env_number("CAMPAIGN_RATE", 80))
CAMPAIGN_SENDERS = int(env_number("CAMPAIGN_SENDERS", 2))
CAMPAIGN_THREADS = int(env_number("CAMPAIGN_THREADS", 256))
# Finished tasks are kept this many days for the admin, then pruned.
TASK_RESULTS_KEPT_DAYS = env_number("TASK_RESULTS_KEPT_DAYS", 7, minimum=0)

# /health/ready fails when the oldest task waiting for a worker has waited longer (seconds).
HEALTH_TASK_QUEUE_MAX_AGE = env_number("HEALTH_TASK_QUEUE_MAX_AGE", 300)

# /metrics answers only `Authorization: Bearer <this>`; empty, it is a 404.
METRICS_TOKEN = env_str("METRICS_TOKEN")

# Secrets at rest (channel credentials, event-webhook secrets) are encrypted with these
# Fernet keys, newest first: the first encrypts, all decrypt. Unset, a key derived from
# SECRET_KEY is used (with a warning; `check --deploy` fails). After adding a key in
# front, run `manage.py rotate_encryption_key`, then drop the old one.
FIELD_ENCRYPTION_KEYS = env_list("FIELD_ENCRYPTION_KEYS", [])
for _position, _key in enumerate(FIELD_ENCRYPTION_KEYS, 1):
    try:
        Fernet(_key)
    except ValueError:
        raise ImproperlyConfigured(
            f"FIELD_ENCRYPTION_KEYS: key {_position} is not a Fernet key "
            "(32 url-safe base64-encoded bytes)."
        ) from None


def env_networks(name: str) -> list[str]:
    networks = []
    for entry in env_list(name, []):
        try:
            networks.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {entry!r} is not an IP address or network."
            ) from None
    return networks


# The reverse proxies (addresses or networks, comma-separated) whose X-Forwarded-For is
# believed. Empty: the client address is the connection's peer (REMOTE_ADDR).
TRUSTED_PROXIES = env_networks("TRUSTED_PROXIES")

# Human lines by default; LOG_FORMAT=json for one JSON object per line (log shippers).
LOG_FORMAT = env_str("LOG_FORMAT", "plain").lower()
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}.")
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request": {"()": "messaging_project.core.request_log.RequestContextFilter"}},
    "formatters": {
        "plain": {"()": "messaging_project.core.request_log.PlainFormatter"},
        "json": {"()": "messaging_project.core.request_log.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.request": {"level": "ERROR"}},
}

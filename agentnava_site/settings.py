"""Settings for AgentNava Memory, read from the environment in this one place.

Every variable is documented in docs/operating.md ("Settings"); `.env.example` lists them.
"""

import os
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from surfaces.http.paths import EMBED_PREFIX

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
# The demo page /demo/chat/ exists only with DEBUG or DEMO=1 (`seed_demo` needs DEBUG or --force).
DEMO = env_bool("DEMO", False)
# A development checkout's own key: `make run` and `make key` write a random one here (mode 600,
# gitignored), so a command typed by hand after `make run` (`.venv/bin/python manage.py
# create_api_key --team demo`) works without DEBUG and signs django-q's tasks with the same key as
# the running demo. It is read with DEBUG on or not set at all, never with `DEBUG=0` said out loud, as
# every production environment says it (deploy/agentnava.env.example, .env.example): there a missing
# SECRET_KEY still stops the process, and a server where someone ran `make` anyway holds a random key
# of its own, never a published one.
DEV_SECRET_KEY_FILE = Path(os.environ.get("DEV_SECRET_KEY_FILE") or BASE_DIR / "var" / "dev-secret-key")


def _development_secret_key() -> str:
    if not DEBUG and os.environ.get("DEBUG", "") != "":
        return ""  # DEBUG=0 said out loud: a production environment
    try:
        return DEV_SECRET_KEY_FILE.read_text().strip()
    except OSError:
        return ""


SECRET_KEY = os.environ.get("SECRET_KEY", "") or _development_secret_key()
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off (on a development checkout, `make run` or `make key` "
            "writes a development key first)."
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production-0123456789abcdef"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "corsheaders",
    "django_htmx",
    "django_q",
    "rest_framework",
    "axes",
    "csp",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "agents",
    "consent",
    "memory",
    "ops",
    "webhooks",
    "surfaces",
]

MIDDLEWARE = [
    "ops.middleware.RequestLogMiddleware",  # one log line per request, request counters (/metrics)
    "agentnava_site.raw_path.RawPathMiddleware",  # API paths route on the segments as sent (bob%2Fmemory)
    "surfaces.http.cors.EmbedCorsMiddleware",  # django-cors-headers, for /embed/ only: refusals below carry it too
    "django.middleware.security.SecurityMiddleware",
    "django_permissions_policy.PermissionsPolicyMiddleware",  # PERMISSIONS_POLICY below, every response
    "agentnava_site.middleware.PrivatePagesMiddleware",  # Cache-Control: private, no-store when signed in
    "surfaces.http.boundary.InputBoundaryMiddleware",  # NUL, lone surrogates, deep JSON, big bodies: refused here
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "agentnava_site.middleware.WebSessionMiddleware",  # this and the Web* below: skipped for /api/ (middleware.py)
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",  # API views are csrf-exempt: it passes them by
    "agentnava_site.middleware.WebAuthenticationMiddleware",
    "agentnava_site.middleware.WebMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "agentnava_site.middleware.WebCSPMiddleware",  # CONTENT_SECURITY_POLICY below
    "agentnava_site.middleware.WebHtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # sign-in throttle: the lockout page (last, as axes asks)
]

ROOT_URLCONF = "agentnava_site.urls"

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
                "surfaces.web.context_processors.team_rail",
            ],
        },
    },
]

WSGI_APPLICATION = "agentnava_site.wsgi.application"

# --- Database -------------------------------------------------------------------------------
# The embedded default is an SQLite file in the repo, in WAL mode with a busy timeout and
# IMMEDIATE transactions, so the web server and the django-q cluster never fail with
# "database is locked". Production and CI use PostgreSQL through psycopg 3.
DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}"
# Connections are kept for CONN_MAX_AGE seconds (health-checked), which roughly doubles
# memory.get's throughput on PostgreSQL (docs/performance.md).
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL, conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")), conn_health_checks=True
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "agents:home"
LOGOUT_REDIRECT_URL = "login"

# --- Sign-in throttle (django-axes) and e-mail --------------------------------------------------
# After AXES_FAILURE_LIMIT wrong passwords for one account from one address, that pair is locked
# for AXES_COOLOFF_MINUTES (a clear page, status 429); a right password does not get in meanwhile.
# Keyed on the pair, so a guesser cannot lock a member out from elsewhere.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = int(os.environ.get("AXES_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("AXES_COOLOFF_MINUTES", "15")) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_DISABLE_ACCESS_LOG = True  # failures are kept; successful sign-ins are not logged by axes
# Password reset mails go through EMAIL_BACKEND: the console (the server's output) by default.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "AgentNava <no-reply@agentnava.local>")
PASSWORD_RESET_TIMEOUT = int(os.environ.get("PASSWORD_RESET_TIMEOUT", str(60 * 60 * 3)))

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# --- Security (python manage.py check --deploy is clean when DEBUG is off) -----------------
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy (django-csp 4.0; Django 5.2 has none of its own): scripts, styles and
# everything else from this origin only; no inline script or style, no eval (htmx runs with
# allowEval off, see base.html), no framing. The website chat's endpoints and script
# (/embed/...) are left out: they are used from customers' pages, under those pages' policies.
from csp.constants import NONE, SELF  # noqa: E402

# Permissions-Policy on every response: no page of the app uses the camera, the microphone, the
# location, payment, USB or sensors, so none may (an injected frame or script included).
PERMISSIONS_POLICY: dict[str, list[str]] = {
    "accelerometer": [],
    "camera": [],
    "geolocation": [],
    "gyroscope": [],
    "magnetometer": [],
    "microphone": [],
    "payment": [],
    "usb": [],
}
CONTENT_SECURITY_POLICY = {
    "EXCLUDE_URL_PREFIXES": [EMBED_PREFIX],
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# --- django-q2 ------------------------------------------------------------------------------
# Tasks take ids only and are idempotent: delivery is at least once. `timeout` < `retry`,
# bounded attempts, and no catch-up of missed schedule runs.
REDIS_URL = os.environ.get("REDIS_URL", "")
Q_CLUSTER = {
    "name": "agentnava",
    "workers": int(os.environ.get("Q_WORKERS", "2")),
    "timeout": 120,
    "retry": 180,
    "max_attempts": 3,
    "catch_up": False,
    "save_limit": 500,
    "ack_failures": True,
    "label": "Tasks",
    "sync": env_bool("Q_SYNC", False),
}
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"
# `manage.py memory_health` and /healthz/tasks fail when the oldest due end user, the oldest queued
# task or an active Apply has waited longer than this (docs/deploy.md).
MEMORY_HEALTH_STALL_SECONDS = int(os.environ.get("MEMORY_HEALTH_STALL_SECONDS", "300"))
# /metrics: with a token, `Authorization: Bearer <token>`; without, direct private-network requests only.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")

# Webhook endpoints: https only, to a host whose every address is globally routable (webhooks.addresses),
# unless these are on: local development (`make run`) and tests with a receiver on 127.0.0.1. Off by
# default whatever DEBUG says: a server that runs with them on lets a team's endpoint reach its own network.
WEBHOOKS_ALLOW_HTTP = env_bool("WEBHOOKS_ALLOW_HTTP", False)
WEBHOOKS_ALLOW_PRIVATE = env_bool("WEBHOOKS_ALLOW_PRIVATE", False)

# --- Model engines ---------------------------------------------------------------------------
# With OPENAI_API_KEY unset, every feature uses the offline engine (rules, no network).
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "") or None
AGENTNAVA_MODEL = os.environ.get("AGENTNAVA_MODEL", "gpt-4o-mini")
AGENTNAVA_ENGINE = os.environ.get("AGENTNAVA_ENGINE", "openai" if OPENAI_API_KEY else "offline")
OPENAI_TIMEOUT_SECONDS = float(os.environ.get("OPENAI_TIMEOUT_SECONDS", "30"))
OPENAI_MAX_RETRIES = int(os.environ.get("OPENAI_MAX_RETRIES", "2"))
# A model server's answer is read at most this many bytes (chat replies, the Builder, the writer);
# a longer one is refused before it is parsed (502 model_too_large).
MODEL_ANSWER_MAX_BYTES = int(os.environ.get("MODEL_ANSWER_MAX_BYTES", str(64 * 1024)))
# Model calls in flight at once in one process (the writer's batch, Apply, Try, and every other call:
# agents.engines.model_slots): a call waits on the network, so many wait together. 32 a core by
# default (a run costs about 15-30 ms of CPU: at 1 s a call, 32 calls a core keep it busy without
# queueing; docs/performance.md, "Capacity").
MODEL_CONCURRENCY = int(os.environ.get("MODEL_CONCURRENCY", str(32 * (os.cpu_count() or 1))))
# With REDIS_URL: at most this many calls in flight across every process together (0: no shared cap).
MODEL_CONCURRENCY_TOTAL = int(os.environ.get("MODEL_CONCURRENCY_TOTAL", "256"))

# --- The website chat's CORS (django-cors-headers; surfaces/http/cors.py) -------------------------
# Its endpoints are called from customers' pages, with no cookie and no credential: any origin may
# call them, and read Retry-After on a refusal. Nothing else on the site is CORS-open.
CORS_URLS_REGEX = "^" + re.escape(EMBED_PREFIX)
CORS_ALLOW_ALL_ORIGINS = True
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_METHODS = ["GET", "POST", "OPTIONS"]
CORS_ALLOW_HEADERS = ["Content-Type"]
CORS_EXPOSE_HEADERS = ["Retry-After"]
CORS_PREFLIGHT_MAX_AGE = 600

# --- The parts other apps plug in (dotted paths, resolved on use: nothing is filled at start-up) ----
# An agent's configuration sections owned by another app: key -> the module with its default(),
# validate(value) and describe_changes(old, new) (agents.agent_config).
AGENTNAVA_CONFIG_SECTIONS = {"memorySettings": "memory.store.settings"}
# The offline engine's rules, by task: the payload a model would get -> its answer (agents.engines).
AGENTNAVA_OFFLINE_RULES = {
    "chat_reply": "surfaces.chat.offline.chat_reply",
    "memory_operations": "memory.writer.offline.memory_operations",
    "builder_changes": "memory.tools.builder_rules.builder_changes",
}

# --- REST API -------------------------------------------------------------------------------
# An API key's authentication is cached per process. A revocation, a maker's role change or removal and
# a team's deletion bump the key generation, which every process reads before using its cache: from
# Redis on every request when REDIS_URL is set, otherwise from the database at most every
# API_KEY_GENERATION_CHECK_SECONDS. API_KEY_CACHE_SECONDS bounds a change made behind the services.
API_KEY_CACHE_SECONDS = float(os.environ.get("API_KEY_CACHE_SECONDS", "5"))
API_KEY_GENERATION_CHECK_SECONDS = float(os.environ.get("API_KEY_GENERATION_CHECK_SECONDS", "0.5"))
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["surfaces.api.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "surfaces.http.idempotency_schema.IdempotencySchema",  # AutoSchema + Idempotency-Key
    "EXCEPTION_HANDLER": "surfaces.http.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    # Per API key, through the cache: 429 with Retry-After past the rate. "off" turns it off.
    "DEFAULT_THROTTLE_CLASSES": ["surfaces.api.auth.ApiKeyRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "api_key": None
        if os.environ.get("API_RATE_PER_KEY") == "off"
        else os.environ.get("API_RATE_PER_KEY", "1200/minute"),
    },
}
# The throttle counts live in the cache: Redis when REDIS_URL is set (shared by every process),
# otherwise each process's memory (the limit then applies per process).
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
SPECTACULAR_SETTINGS = {
    "TITLE": "AgentNava Memory API",
    "DESCRIPTION": "Per-end-user memory for customer-facing AI agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# LOG_FORMAT=json: one JSON object a line (request, task and memory-run lines carry event, timings,
# outcome, agent id; never a memory's text, a message or a key). Otherwise readable key=value lines.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"ops": {"()": "ops.logs.JsonFormatter" if LOG_FORMAT == "json" else "ops.logs.ReadableFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "ops"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

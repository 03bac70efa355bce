"""Test settings: the real settings, with a fast password hasher and django-q run inline where a
test is not about the queue itself (tests that are start a real cluster in a subprocess)."""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("Q_SYNC", "1")

from agentnava_site.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
WHITENOISE_USE_FINDERS = True
ALLOWED_HOSTS = ["*"]

# The test database must be a file, not memory, so that a real django-q cluster started by a test
# (in another process) sees the same database.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / "test.sqlite3")}  # noqa: F405
    (BASE_DIR / "var").mkdir(exist_ok=True)  # noqa: F405
STATIC_ROOT.mkdir(exist_ok=True)  # noqa: F405  (whitenoise warns about a missing directory)

# Each test process keeps its caches in its own memory, whatever REDIS_URL the shell holds: the
# autouse fixture in tests/conftest.py empties them before every test, which on a shared Redis
# would empty another pytest worker's counts mid-test. Tests about Redis start their own processes
# with REDIS_URL set (tests/cluster.py, tests/ops).
# A server a test starts in its own processes to share Redis (gunicorn's workers in tests/gunicorn.py)
# keeps the real settings' Redis cache: TEST_SHARED_CACHE=1 with REDIS_URL set.
if not (os.environ.get("TEST_SHARED_CACHE") == "1" and REDIS_URL):  # noqa: F405
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

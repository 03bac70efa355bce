"""gunicorn for AgentNava (docs/deploy.md): threaded workers, so a chat reply waiting seconds on the
model holds one thread, not a whole worker. Every value can be set from the environment."""

import os

bind = os.environ.get("GUNICORN_BIND", "127.0.0.1:8000")
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))  # about one per core
threads = int(os.environ.get("GUNICORN_THREADS", "16"))  # requests in flight per worker (docs/performance.md)
# Longer than the slowest model call the app allows (OPENAI_TIMEOUT_SECONDS x (1 + retries)), or
# gunicorn kills a worker mid-reply with every thread in it.
_model = float(os.environ.get("OPENAI_TIMEOUT_SECONDS", "30")) * (1 + int(os.environ.get("OPENAI_MAX_RETRIES", "2")))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", str(int(_model) + 30)))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30"))
keepalive = 5
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "5000"))  # recycle a worker now and then
max_requests_jitter = 500
# The proxy in front terminates TLS and sets X-Forwarded-Proto; trust it from these addresses only.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = None  # the app logs one line per request itself (LOG_FORMAT=json)
errorlog = "-"

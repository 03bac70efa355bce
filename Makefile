# The two commands of the README: `make run` (the demo) and `make test` (the whole suite).
# Both create .venv and install the pinned requirements themselves.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# The demo runs on the embedded defaults: SQLite, django-q's ORM broker, the offline engine; its
# webhooks may go to a receiver on this machine.
DEMO_ENV := DEBUG=1 WEBHOOKS_ALLOW_HTTP=1 WEBHOOKS_ALLOW_PRIVATE=1
# pytest-xdist workers for `make test` and `make test-fast`, a worker taking queued tests from another once
# it is idle (worksteal: the real-cluster tests are long); each has its own test database and Redis
# db. PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 2

# Where `make run` serves (the README's examples say http://127.0.0.1:8000).
ADDR ?= 127.0.0.1:8000
# This checkout's development SECRET_KEY (agentnava_site/settings.py reads the same variable):
# random, mode 600, gitignored.
DEV_SECRET_KEY_FILE ?= var/dev-secret-key
export DEV_SECRET_KEY_FILE
# `KEY=$$(make key)` holds the key alone, also when make runs inside another make.
MAKEFLAGS += --no-print-directory

.PHONY: run key test test-fast lint messages prod-check test-fuzz test-repeat venv venv-dev clean

$(VENV)/.runtime: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt requirements.txt $(VENV)/.runtime
	$(PIP) install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

venv: $(VENV)/.runtime
venv-dev: $(VENV)/.dev

$(DEV_SECRET_KEY_FILE):
	@mkdir -p $(@D)
	@umask 077 && $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))' > $@

run: $(VENV)/.runtime $(DEV_SECRET_KEY_FILE)
	$(DEMO_ENV) $(PY) manage.py migrate --noinput
	$(DEMO_ENV) $(PY) manage.py seed_demo
	@echo
	@echo "  AgentNava is starting on http://$(ADDR)/"
	@echo "  Sign in as demo@agentnava.local with the password: demo-password (team 'demo')"
	@echo "  The demo agent: http://$(ADDR)/agents/agt_493fb4f0cf13/ (id agt_493fb4f0cf13)"
	@echo "  API keys: http://$(ADDR)/settings/api-keys/, or 'make key' in another terminal"
	@echo "  Website chat demo: http://$(ADDR)/demo/chat/"
	@echo "  Ctrl-C stops the web server and the task cluster."
	@echo
	$(DEMO_ENV) $(PY) manage.py devserver --addr $(ADDR)

# A new API key for the demo team that `make run` loads, printed alone on stdout (KEY=$$(make key));
# only its hash is stored. Without DEBUG: the settings read the development key above.
key: $(DEV_SECRET_KEY_FILE)
	@test -x $(PY) || { echo "No $(VENV) yet: run 'make run' first (it loads the demo team)." >&2; exit 1; }
	@$(PY) manage.py create_api_key --team demo --name "make key" || { echo "('make run' loads the demo team.)" >&2; exit 1; }

test: $(VENV)/.dev
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist worksteal $(PYTEST_ARGS)
	@if ls tests/js/*.test.mjs >/dev/null 2>&1; then node --test tests/js/*.test.mjs; fi

# What CI checks before the suite: lint with the size limits (ruff.toml), formatting, the apps' import
# contract (.importlinter), the types (mypy.ini), and that every model change has its migration.
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(DEMO_ENV) $(PY) manage.py makemigrations --check --dry-run

# The end user's replies in other languages: refresh memory/locale/*/django.po from the code, then
# compile the .mo files (committed; needs GNU gettext: apt-get install gettext).
messages: $(VENV)/.runtime
	cd memory && $(DEMO_ENV) ../$(PY) ../manage.py makemessages -l es -l hi -l fr -l de -l pt --no-location
	cd memory && $(DEMO_ENV) ../$(PY) ../manage.py compilemessages

# The inner loop: everything but the browser and the real-cluster tests.
test-fast: $(VENV)/.dev
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist worksteal -m "not browser and not cluster" $(PYTEST_ARGS)

# A longer random schema fuzz on demand: FUZZ_EXAMPLES=2000 make test-fuzz (FUZZ_SEED=N replays one).
test-fuzz: $(VENV)/.dev
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-500} $(PY) -m pytest -p no:cacheprovider -s tests/test_schema_fuzz.py $(PYTEST_ARGS)

# The fixed-seed fuzz RUNS times on SQLite and PostgreSQL, same requests and same result each time.
test-repeat: $(VENV)/.dev
	bash .ci/test-repeat

clean:
	rm -rf $(VENV) db.sqlite3 db.sqlite3-wal db.sqlite3-shm staticfiles .pytest_cache

# docs/deploy.md step by step on this machine, loopback only (PostgreSQL and Redis on 127.0.0.1):
# production settings, gunicorn with threads, two clusters on Redis, a chat through to a written
# memory, /metrics and memory_health. About 7 minutes; stops everything it starts.
prod-check: $(VENV)/.runtime
	PY=$(PY) GUNICORN=$(VENV)/bin/gunicorn deploy/prod_check.sh

#!/usr/bin/env bash
# `make prod-check`: docs/deploy.md, step by step, on this machine and loopback only.
# Production settings (DEBUG off, a SECRET_KEY), PostgreSQL and Redis, migrate and collectstatic,
# gunicorn with threaded workers, two qcluster processes (standing for two machines), then a smoke
# run: an agent, a chat through the REST API, the memory written by a cluster after the quiet
# window (5 minutes: this takes about 7), /metrics and memory_health answering.
# Everything it starts is stopped at the end, whatever happens; its database and Redis db go too.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
GUNICORN=${GUNICORN:-.venv/bin/gunicorn}
PGHOST=127.0.0.1
DB=agentnava_prodcheck
REDIS_DB=${PROD_CHECK_REDIS_DB:-14}
WORK=$(mktemp -d /tmp/agentnava-prodcheck.XXXXXX)
PIDS=()

say() { printf '\n== %s\n' "$*"; }
fail() { printf '\nPROD-CHECK FAILED: %s\n' "$*" >&2; for f in "$WORK"/*.log; do echo "--- $f"; tail -n 30 "$f"; done >&2; exit 1; }

stop_all() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for _ in $(seq 1 30); do
    local alive=0
    for pid in "${PIDS[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 1
  done
  for pid in "${PIDS[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  redis-cli -h 127.0.0.1 -n "$REDIS_DB" flushdb >/dev/null 2>&1 || true
  dropdb -h $PGHOST -U postgres --if-exists "$DB" 2>/dev/null || true
  rm -rf "$WORK"
}
trap stop_all EXIT
trap 'exit 130' INT TERM HUP

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start() {  # start NAME COMMAND...: in its own process group, output to $WORK/NAME.log
  local name=$1; shift
  setsid "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
}

say "1. Production settings (docs/deploy.md, 'Settings')"
PORT=$(free_port)
export DEBUG=0
export SECRET_KEY=$("$PY" -c 'import secrets; print(secrets.token_urlsafe(50))')
export ALLOWED_HOSTS=127.0.0.1
export CSRF_TRUSTED_ORIGINS=https://127.0.0.1
export DATABASE_URL=postgres://postgres@$PGHOST:5432/$DB
export REDIS_URL=redis://127.0.0.1:6379/$REDIS_DB
export Q_WORKERS=2
export WEB_CONCURRENCY=2
export GUNICORN_THREADS=8
export GUNICORN_BIND=127.0.0.1:$PORT
export METRICS_TOKEN=$("$PY" -c 'import secrets; print(secrets.token_urlsafe(24))')
export MEMORY_HEALTH_STALL_SECONDS=300
export LOG_FORMAT=json
unset OPENAI_API_KEY OPENAI_BASE_URL AGENTNAVA_ENGINE  # the offline engine: no network
BASE=http://127.0.0.1:$PORT
# The TLS proxy in front says the request came over HTTPS (SECURE_PROXY_SSL_HEADER).
PROXY=(-H "X-Forwarded-Proto: https")

redis-cli -h 127.0.0.1 -n "$REDIS_DB" ping >/dev/null || fail "Redis does not answer on 127.0.0.1:6379"
redis-cli -h 127.0.0.1 -n "$REDIS_DB" flushdb >/dev/null
dropdb -h $PGHOST -U postgres --if-exists "$DB"
createdb -h $PGHOST -U postgres "$DB"

say "2. Migrations, static files, deployment checks"
"$PY" manage.py migrate --noinput >"$WORK/migrate.log" 2>&1 || fail "migrate"
"$PY" manage.py collectstatic --noinput >"$WORK/collectstatic.log" 2>&1 || fail "collectstatic"
"$PY" manage.py check --deploy --fail-level WARNING >"$WORK/check.log" 2>&1 || fail "check --deploy"

say "3. gunicorn (threaded workers) and two clusters on Redis"
start web "$GUNICORN" -c deploy/gunicorn.conf.py agentnava_site.wsgi
start qcluster1 "$PY" manage.py qcluster
start qcluster2 "$PY" manage.py qcluster
for _ in $(seq 1 60); do curl -fsS "${PROXY[@]}" "$BASE/healthz" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "${PROXY[@]}" "$BASE/healthz" >/dev/null || fail "gunicorn did not answer /healthz"
grep -q "gthread" "$WORK/web.log" || fail "gunicorn is not running threaded workers"

say "4. Smoke: a team, a key, an agent, a chat"
"$PY" manage.py create_team smoke --plan team --owner ops@smoke.invalid >/dev/null
KEY=$("$PY" manage.py create_api_key --team smoke | tail -n 1)
api() {  # api METHOD PATH [JSON]
  curl -fsS "${PROXY[@]}" -X "$1" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
    ${3:+--data "$3"} "$BASE/api/v1$2"
}
json() { "$PY" -c "import json,sys; print(json.load(sys.stdin)$1)"; }
AGENT=$(api POST /agents '{"name": "Smoke", "memorySettings": {"on": true, "quietMinutes": 5}}' | json '["id"]') \
  || fail "POST /agents"
CONV=$(api POST "/agents/$AGENT/conversations" '{"endUserId": "smoke-user"}' | json '["id"]') || fail "start a chat"
api POST "/conversations/$CONV/messages" '{"text": "Please email me, I prefer email over phone."}' >/dev/null \
  || fail "send a message"
echo "chat $CONV on agent $AGENT: waiting for the quiet window (5 min) and a cluster's run"

say "5. The memory is written by a cluster"
MEMORY=""
for _ in $(seq 1 100); do  # up to ~8.5 minutes: 5 of quiet window, the schedule's minute, the 30 s tick
  MEMORY=$( (api GET "/agents/$AGENT/end-users/smoke-user/memory" | json '.get("text", "")') 2>/dev/null || true)
  [ -n "$MEMORY" ] && break
  sleep 5
done
[ -n "$MEMORY" ] || fail "no memory written within the quiet window and a sweep"
grep -h '"event": "memory_run"' "$WORK"/qcluster*.log | grep -q '"outcome": "succeeded"' \
  || fail "no memory_run log line from a cluster"
echo "memory written: $(echo "$MEMORY" | wc -l) line(s)"

say "6. /metrics and memory_health answer"
code=$(curl -s -o /dev/null -w '%{http_code}' "${PROXY[@]}" "$BASE/metrics")
[ "$code" = 401 ] || fail "/metrics without the token answered $code, not 401"
METRICS=$(curl -fsS "${PROXY[@]}" -H "Authorization: Bearer $METRICS_TOKEN" "$BASE/metrics") || fail "/metrics"
echo "$METRICS" | grep -q '^agentnava_memory_runs_total{kind="quiet",status="succeeded"} [1-9]' || fail "/metrics has no quiet run"
echo "$METRICS" | grep -q '^agentnava_chat_starts_total{memory="yes"} [1-9]' || fail "/metrics has no chat start"
"$PY" manage.py memory_health || fail "memory_health"
curl -fsS "${PROXY[@]}" "$BASE/healthz/tasks" >/dev/null || fail "/healthz/tasks"
grep -q '"event": "request"' "$WORK/web.log" || fail "no JSON request log line from gunicorn"
if grep -h "Please email me\|$KEY" "$WORK"/*.log >/dev/null; then fail "a log holds a message or the key"; fi

say "prod-check passed"

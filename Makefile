# lockd: every developer and CI command. `make help` lists them.

CARGO ?= cargo
# Crates the domain must never depend on (hexagonal rule: the domain knows no I/O, HTTP or JSON).
DOMAIN_FORBIDDEN := diesel actix-web actix-http serde serde_json r2d2 libsqlite3-sys pq-sys tokio
# The HTTP client (`lockd run`, tests, the benchmark) stays plain HTTP: no TLS stack.
CLIENT_FORBIDDEN := rustls native-tls openssl openssl-sys ring webpki-roots
# The application layer knows the domain (and tokio), never the web framework or the database.
SERVICE_FORBIDDEN := diesel actix-web actix-http actix-server r2d2 libsqlite3-sys pq-sys serde serde_json lock-store-diesel lock-http-actix lock-telemetry
# The HTTP adapter knows the service and the domain, never the store.
HTTP_FORBIDDEN := diesel r2d2 libsqlite3-sys pq-sys lock-store-diesel tokio-postgres
# The telemetry adapter (metrics, audit log) knows the service only: no web framework, no store.
TELEMETRY_FORBIDDEN := actix-web actix-http actix-server diesel r2d2 libsqlite3-sys pq-sys lock-store-diesel lock-http-actix tokio-postgres

.PHONY: safety-build help run test postgres-check fuzz bench-deps bench-quick bench grafana-picture bench-compare bench-history lint fmt openapi \
	deps-check ci lockd-debug e2e docs-check python-client browser-test safety safety-ci safety-ha safety-ha-ci ha-demo typescript-guard python-guard go-client

# The PostgreSQL server the PostgreSQL tests use (they create and drop their own databases on it).
LOCKD_TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
export LOCKD_TEST_DATABASE_URL

help:
	@echo "make run         serve on 127.0.0.1:8080 with ./lockd.db (release build)"
	@echo "make test        every test: unit, contract, handler and end-to-end"
	@echo "make e2e         the live tests: generated Python client, Swagger UI and the dashboard in Chromium, docs-check, the TypeScript and Python clients' guards, the Go client (< 8 min)"
	@echo "make docs-check  run the curl examples of docs/getting-started.md and docs/api.md against a live lockd"
	@echo "make safety      the safety checker on both backends under faults (SECONDS=60 SEED=random BACKEND=both)"
	@echo "make safety-ha   the safety checker on a PostgreSQL primary and synchronous standby, failed over under load (SECONDS=60 SEED=random)"
	@echo "make ha-demo     a real Patroni failover (etcd, synchronous mode) with two lockd under load, figures printed (NODES=2; root: installs etcd and Patroni)"
	@echo "make fuzz        schemathesis, every check, against a live lockd on SQLite and PostgreSQL (FUZZ_EXAMPLES=100 SEED=random)"
	@echo "make bench-deps  install redis-server, etcd and fonts from Debian's packages (root)"
	@echo "make bench-quick W1 and W2 for lockd (SQLite, PostgreSQL), Redis and etcd (< 3 min)"
	@echo "make bench       every system and workload, 3 x 10 s, writes docs/benchmarks.md and .png"
	@echo "make grafana-picture  the Grafana dashboard's panels from a 1-minute load: docs/images/grafana-dashboard.png"
	@echo "make bench-compare BASELINE=old/lockd  W1 of an earlier build against this one, one run"
	@echo "make bench-history W1 with history recorded against W1 without, one run"
	@echo "make lint        cargo fmt --check and clippy -D warnings"
	@echo "make fmt         format the code"
	@echo "make openapi     regenerate openapi/openapi.json from the code"
	@echo "make deps-check  prove lock-domain depends on no framework or database crate, lock-service on neither actix nor diesel, lock-http-actix on no store, lock-telemetry on neither, lock-client on no TLS"
	@echo "make ci          what .ci/run runs"

run:
	$(CARGO) run --release

test: postgres-check
	$(CARGO) test --workspace --all-features --locked

# PostgreSQL tests run whenever the server answers; say so loudly when it does not. In CI
# (LOCKD_REQUIRE_POSTGRES=1) they fail instead of skipping.
postgres-check:
	@if pg_isready -q -d "$(LOCKD_TEST_DATABASE_URL)" 2>/dev/null; then \
	  echo "PostgreSQL answers at $(LOCKD_TEST_DATABASE_URL): the PostgreSQL tests run"; \
	else \
	  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	  echo "!!! PostgreSQL does not answer at $(LOCKD_TEST_DATABASE_URL):"; \
	  echo "!!! every PostgreSQL test will be SKIPPED (CI fails them: LOCKD_REQUIRE_POSTGRES=1)."; \
	  echo "!!! Start it (pg_ctlcluster 15 main start) or set LOCKD_TEST_DATABASE_URL."; \
	  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	fi

# SEED empty = a fresh random seed, printed; SEED=N replays a run.
fuzz:
	$(if $(SEED),FUZZ_SEED=$(SEED)) scripts/fuzz

bench-deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server etcd-server fonts-dejavu-core postgresql-client

bench-quick:
	$(CARGO) build --release --locked -p lockd -p lock-bench
	target/release/lock-bench --quick

bench:
	$(CARGO) build --release --locked -p lockd -p lock-bench
	target/release/lock-bench --write docs/benchmarks.md

# docs/images/grafana-dashboard.png: the Grafana dashboard's panels (docs/grafana/lockd.json),
# drawn from a one-minute mixed load on one lockd (PICTURE_SECONDS=N for another length).
grafana-picture:
	$(CARGO) build --release --locked -p lockd -p lock-bench
	target/release/lock-bench --grafana-picture docs/images/grafana-dashboard.png $(if $(PICTURE_SECONDS),--seconds $(PICTURE_SECONDS))

# W1 of an earlier lockd build against this one, in one run, on SQLite and PostgreSQL:
# make bench-compare BASELINE=/path/to/old/lockd (build it from the old commit first).
bench-compare:
	@test -n "$(BASELINE)" || { echo "set BASELINE=/path/to/an/earlier/lockd"; exit 2; }
	$(CARGO) build --release --locked -p lockd -p lock-bench
	target/release/lock-bench --baseline $(BASELINE) --runs $${RUNS:-6} --seconds $${SECONDS_PER_RUN:-10}

# W1 with history recorded (the default) against W1 with none (--history-retention-hours 0),
# the same release build, alternating run by run in one run of the benchmark.
bench-history:
	$(CARGO) build --release --locked -p lockd -p lock-bench
	target/release/lock-bench --baseline target/release/lockd --baseline-args "--history-retention-hours 0" --runs $${RUNS:-6} --seconds $${SECONDS_PER_RUN:-10}

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features --locked -- -D warnings

fmt:
	$(CARGO) fmt --all

openapi:
	$(CARGO) run --quiet --locked -p lockd -- openapi > openapi/openapi.json
	@echo "wrote openapi/openapi.json"

# The live tests start the debug binary, target/debug/lockd, on a temporary SQLite file and a
# free port. Each installs what it needs (a virtualenv under target/, npm ci, Debian's chromium)
# and fails, never skips, when something is missing.
lockd-debug:
	$(CARGO) build --locked -p lockd

# A Python client generated from openapi/openapi.json (openapi-python-client) runs a lock scenario.
# (No Rust client is generated: progenitor 0.11 does not read OpenAPI 3.1; see tests/live/README.md.)
python-client: lockd-debug
	tests/live/python-client

# clients/python (lockd-client): its generated layer matches openapi/openapi.json (drift test),
# and its guard holds, renews, loses and releases leases against live lockd on SQLite and
# PostgreSQL, the server killed and frozen.
python-guard: lockd-debug
	tests/live/python-guard

# Swagger UI and the dashboard (/ui/) in headless Chromium: each acquires and releases a lock
# (the dashboard also force-releases one with an admin key); screenshots in target/*-test/.
browser-test: lockd-debug
	tests/browser/run

docs-check: lockd-debug
	scripts/docs-check

# The TypeScript client (clients/typescript): npm ci, tsc, the drift check of its generated types,
# and its guard's tests (renewal, SIGKILL/SIGSTOP mid-hold, unknown acquires) on SQLite and PostgreSQL.
typescript-guard: lockd-debug
	tests/live/typescript-guard

# The Go client (clients/go): gofmt and go vet clean, then go test against live lockd on SQLite and
# PostgreSQL (typed errors, the recipes, sessions run out and closed, SIGKILL/SIGSTOP mid-hold, an
# election observed across two instances, the README's example); installs golang-go when missing.
go-client: lockd-debug
	tests/live/go-client

e2e: python-client browser-test docs-check typescript-guard python-guard go-client

# The safety checker (docs/safety.md): lockd instances on one database, random clients, faults, then
# a linearizability check of the history. SEED empty = a random seed, printed. BACKEND=sqlite or
# postgres for one backend. lockd is the debug build, like the tests; the checker is a release
# build (its search is CPU-bound).
SECONDS ?= 60
SEED ?=
BACKEND ?= both
SAFETY_BACKENDS := $(if $(filter both,$(BACKEND)),sqlite postgres,$(BACKEND))
# CI's bounded form: per backend a fixed seed, then a random one (printed).
SAFETY_CI_SEED ?= 20261130

safety-build:
	$(CARGO) build --locked -p lockd
	$(CARGO) build --release --locked -p lock-safety

# Every run goes ahead; the target fails at the end if any run failed.
safety: safety-build
	@failed=0; for backend in $(SAFETY_BACKENDS); do \
	  target/release/lock-safety --lockd target/debug/lockd --backend $$backend --seconds $(SECONDS) \
	    $(if $(SEED),--seed $(SEED)) || failed=1; \
	done; exit $$failed

# Every run gates: a fixed seed, then a random one (printed, so a failure can be replayed).
safety-ci: safety-build
	@failed=0; for backend in sqlite postgres; do \
	  target/release/lock-safety --lockd target/debug/lockd --backend $$backend --seconds 60 --seed $(SAFETY_CI_SEED) || failed=1; \
	  target/release/lock-safety --lockd target/debug/lockd --backend $$backend --seconds 60 || failed=1; \
	done; exit $$failed

# The same checker on a PostgreSQL primary and its synchronous standby, both private to the run:
# the primary is killed (kill -9) and the standby promoted several times under the load, and the
# old primary rebuilt as the new standby each time (docs/safety.md).
safety-ha: safety-build
	target/release/lock-safety --lockd target/debug/lockd --backend postgres-ha --seconds $(SECONDS) \
	  $(if $(SEED),--seed $(SEED))

# CI's bounded form: 45 s with the fixed seed.
safety-ha-ci: safety-build
	target/release/lock-safety --lockd target/debug/lockd --backend postgres-ha --seconds 45 --seed $(SAFETY_CI_SEED)

# A real Patroni failover (docs/high-availability.md): one etcd, NODES Patroni nodes (2 or 3) in
# synchronous mode, two lockd instances under load; the leader is killed (kill -9) and Patroni
# promotes the standby. Installs etcd (apt) and Patroni (PyPI, target/ha-demo-venv) when missing.
# A demo, not part of CI: Patroni's ttl (20 s at least) makes each run last about a minute.
NODES ?= 2
ha-demo: lockd-debug
	HA_DEMO_NODES=$(NODES) scripts/ha-demo

# Lists the normal (non-dev) dependency tree of lock-domain with every feature on and fails if a
# forbidden crate appears. The second check proves the listing works: the store does have diesel.
deps-check:
	@tree=$$($(CARGO) tree --locked -p lock-domain -e normal --all-features --prefix none | awk '{print $$1}' | sort -u); \
	test -n "$$tree" || { echo "deps-check: empty dependency listing"; exit 1; }; \
	for crate in $(DOMAIN_FORBIDDEN); do \
	  if echo "$$tree" | grep -qx "$$crate"; then echo "deps-check: lock-domain depends on $$crate"; exit 1; fi; \
	done; \
	$(CARGO) tree --locked -p lock-store-diesel -e normal --prefix none | awk '{print $$1}' | grep -qx diesel \
	  || { echo "deps-check: the listing is broken (lock-store-diesel shows no diesel)"; exit 1; }; \
	echo "deps-check: lock-domain depends on none of: $(DOMAIN_FORBIDDEN)"; \
	client=$$($(CARGO) tree --locked -p lock-client -e normal --prefix none | awk '{print $$1}' | sort -u); \
	echo "$$client" | grep -qx ureq || { echo "deps-check: the lock-client listing is broken (no ureq)"; exit 1; }; \
	for crate in $(CLIENT_FORBIDDEN); do \
	  if echo "$$client" | grep -qx "$$crate"; then echo "deps-check: lock-client depends on $$crate"; exit 1; fi; \
	done; \
	echo "deps-check: lock-client depends on none of: $(CLIENT_FORBIDDEN)"; \
	service=$$($(CARGO) tree --locked -p lock-service -e normal --prefix none | awk '{print $$1}' | sort -u); \
	echo "$$service" | grep -qx lock-domain || { echo "deps-check: the lock-service listing is broken (no lock-domain)"; exit 1; }; \
	for crate in $(SERVICE_FORBIDDEN); do \
	  if echo "$$service" | grep -qx "$$crate"; then echo "deps-check: lock-service depends on $$crate"; exit 1; fi; \
	done; \
	echo "deps-check: lock-service depends on none of: $(SERVICE_FORBIDDEN)"; \
	http=$$($(CARGO) tree --locked -p lock-http-actix -e normal --prefix none | awk '{print $$1}' | sort -u); \
	echo "$$http" | grep -qx actix-web || { echo "deps-check: the lock-http-actix listing is broken (no actix-web)"; exit 1; }; \
	for crate in $(HTTP_FORBIDDEN); do \
	  if echo "$$http" | grep -qx "$$crate"; then echo "deps-check: lock-http-actix depends on $$crate"; exit 1; fi; \
	done; \
	echo "deps-check: lock-http-actix depends on none of: $(HTTP_FORBIDDEN)"; \
	telemetry=$$($(CARGO) tree --locked -p lock-telemetry -e normal --prefix none | awk '{print $$1}' | sort -u); \
	echo "$$telemetry" | grep -qx prometheus-client || { echo "deps-check: the lock-telemetry listing is broken (no prometheus-client)"; exit 1; }; \
	for crate in $(TELEMETRY_FORBIDDEN); do \
	  if echo "$$telemetry" | grep -qx "$$crate"; then echo "deps-check: lock-telemetry depends on $$crate"; exit 1; fi; \
	done; \
	echo "deps-check: lock-telemetry depends on none of: $(TELEMETRY_FORBIDDEN)"

ci: lint deps-check test safety-ci safety-ha-ci e2e

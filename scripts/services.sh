#!/usr/bin/env bash
# Brings up, reports on, and stops the servers Leasehold's tests and demos need, on
# loopback only:
#   PostgreSQL  the Debian cluster on 127.0.0.1:5432, or the server DATABASE_URL names
#   Redis       a test instance of our own on 127.0.0.1:16379, keyspace notifications on
#   etcd        a single node on 127.0.0.1:12379
#   etcd x3     (up --etcd-cluster) three members on 127.0.0.1:22379, 22479, 22579
#   ZooKeeper   a standalone server on 127.0.0.1:12181 (Debian's zookeeper package), with
#               Apache Curator's jars and a JDK for the tests' Curator holders
#   Alertmanager  Debian's prometheus-alertmanager on 127.0.0.1:19093, clustering off, no
#               receiver that sends anything
#   Chromium    Debian's package, for the browser tests
#
#   scripts/services.sh up [--etcd-cluster] [--no-chromium]
#   scripts/services.sh status
#   scripts/services.sh down [name...]
#
# What already answers is reused; what is missing is installed with apt-get and started.
# `up` twice starts nothing twice. `down` stops only what this script started, by the
# pids it recorded. Ports are below 32768, outside the kernel's ephemeral range.
# After `up`, $STATE/env holds the addresses for the tests (LEASEHOLD_TEST_*).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${LEASEHOLD_SERVICES_DIR:-$ROOT/.leasehold/services}
REDIS_PORT=${LEASEHOLD_TEST_REDIS_PORT:-16379}
ETCD_PORT=${LEASEHOLD_TEST_ETCD_PORT:-12379}
ETCD_CLUSTER_PORTS=(22379 22479 22579)   # client ports; each member's peer port is client + 1
ALERTMANAGER_PORT=${LEASEHOLD_TEST_ALERTMANAGER_PORT:-19093}
ZOOKEEPER_PORT=${LEASEHOLD_TEST_ZOOKEEPER_PORT:-12181}
PG_ROLE=leasehold
PG_PASSWORD=leasehold

mkdir -p "$STATE/pids" "$STATE/logs"

say() { printf '%s\n' "services: $*"; }
fail() { printf '%s\n' "services: error: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------- helpers

alive() { # pid -> true when running and not a zombie
  local pid=$1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
  local stat
  stat=$(ps -o stat= -p "$pid" 2>/dev/null || true)
  [[ -n $stat && $stat != Z* ]]
}

recorded_pid() { cat "$STATE/pids/$1.pid" 2>/dev/null || true; }
record_pid() { echo "$2" >"$STATE/pids/$1.pid"; }

wait_for() { # seconds description command...
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else fail "installing packages needs root: run 'apt-get install -y $*' as root, or start the service yourself"; fi
}

APT_UPDATED=0
apt_install() { # packages...
  say "installing $* with apt-get (missing on this machine)"
  if [[ $APT_UPDATED -eq 0 ]]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$STATE/logs/apt.log" 2>&1 ||
      fail "apt-get update failed; see $STATE/logs/apt.log"
    APT_UPDATED=1
  fi
  # Keep package scripts from starting their own daemons on the default ports: we start
  # what we need ourselves, on our own ports.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [[ ! -e $policy && $(id -u) -eq 0 ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
  fi
  local status=0
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" \
    >>"$STATE/logs/apt.log" 2>&1 || status=$?
  if [[ $created_policy -eq 1 ]]; then rm -f "$policy"; fi
  [[ $status -eq 0 ]] || fail "apt-get install $* failed; see $STATE/logs/apt.log"
}

url_part() { # url part(host|port|user|db) -> value, defaults for postgres URLs
  node -e '
    const u = new URL(process.argv[1]);
    const part = process.argv[2];
    const v = { host: u.hostname || "127.0.0.1", port: u.port || "5432", user: decodeURIComponent(u.username), db: u.pathname.slice(1) }[part];
    process.stdout.write(v ?? "");
  ' "$1" "$2"
}

is_loopback() { [[ $1 == 127.* || $1 == localhost || $1 == ::1 || $1 == "[::1]" ]]; }

# ---------------------------------------------------------------------------- PostgreSQL

pg_cluster() { # prints "version name port" of the Debian cluster on the port, if any
  command -v pg_lsclusters >/dev/null 2>&1 || return 0
  pg_lsclusters --no-header 2>/dev/null | awk -v port="$1" '$3 == port { print $1, $2, $3; exit }'
}

postgres_up() {
  local host=127.0.0.1 port=5432
  if [[ -n ${DATABASE_URL:-} ]]; then
    host=$(url_part "$DATABASE_URL" host)
    port=$(url_part "$DATABASE_URL" port)
  fi
  if ! command -v pg_isready >/dev/null 2>&1; then
    [[ -z ${DATABASE_URL:-} ]] || fail "pg_isready is missing; install postgresql-client"
    apt_install postgresql
  fi
  if pg_isready -q -h "$host" -p "$port" -t 2; then
    say "postgres: reusing the server already running on $host:$port"
  else
    is_loopback "$host" || fail "DATABASE_URL names $host:$port, which does not answer; start that server first"
    local cluster
    cluster=$(pg_cluster "$port")
    if [[ -z $cluster ]]; then
      [[ -n $(command -v pg_ctlcluster || true) ]] || apt_install postgresql
      cluster=$(pg_cluster "$port")
    fi
    [[ -n $cluster ]] || fail "no PostgreSQL cluster is configured for port $port (pg_lsclusters); set DATABASE_URL to a running server"
    read -r version name _ <<<"$cluster"
    say "postgres: starting the Debian cluster $version/$name on port $port"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start >"$STATE/logs/postgres.log" 2>&1 9>&- ||
      fail "pg_ctlcluster $version $name start failed; see $STATE/logs/postgres.log"
    wait_for 30 postgres pg_isready -q -h "$host" -p "$port" || fail "postgres did not accept connections on $host:$port within 30 s"
    local datadir
    datadir=$(pg_lsclusters --no-header | awk -v port="$port" '$3 == port { print $6; exit }')
    record_pid postgres "$(head -1 "$datadir/postmaster.pid")"
  fi

  if [[ -n ${DATABASE_URL:-} ]]; then
    PG_ADMIN_URL=$DATABASE_URL
  else
    # Our own login role, so the tests do not depend on how this cluster authenticates
    # the postgres user over TCP (trust on some machines, scram on a fresh install).
    local sql="DO \$\$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$PG_ROLE') THEN
        CREATE ROLE $PG_ROLE LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
      END IF;
    END \$\$;
    GRANT pg_read_all_stats TO $PG_ROLE;"
    if ! as_postgres psql -q -v ON_ERROR_STOP=1 -p "$port" -d postgres -c "$sql" >"$STATE/logs/postgres-setup.log" 2>&1; then
      fail "could not create the $PG_ROLE role; see $STATE/logs/postgres-setup.log"
    fi
    if [[ -z $(as_postgres psql -tA -p "$port" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$PG_ROLE'") ]]; then
      as_postgres psql -q -p "$port" -d postgres -c "CREATE DATABASE $PG_ROLE OWNER $PG_ROLE" >/dev/null
    fi
    PG_ADMIN_URL="postgres://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$port/$PG_ROLE"
  fi
}

as_postgres() { # run a client command as the postgres OS user over the local socket
  if [[ $(id -un) == postgres ]]; then "$@"
  elif [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"
  else sudo -n -u postgres "$@"; fi
}

# ---------------------------------------------------------------------------- Redis

redis_answers() { redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null | grep -q PONG; }

redis_up() {
  command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || apt_install redis-server redis-tools
  if redis_answers "$REDIS_PORT"; then
    say "redis: reusing the server already running on 127.0.0.1:$REDIS_PORT"
    return
  fi
  mkdir -p "$STATE/redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --notify-keyspace-events KEA --dir "$STATE/redis" --logfile "$STATE/logs/redis.log" \
    --pidfile "$STATE/redis/redis.pid" >/dev/null 9>&- ||
    fail "redis-server did not start; see $STATE/logs/redis.log"
  wait_for 10 redis redis_answers "$REDIS_PORT" || fail "redis did not answer on 127.0.0.1:$REDIS_PORT within 10 s; see $STATE/logs/redis.log"
  record_pid redis "$(cat "$STATE/redis/redis.pid")"
  say "redis: started on 127.0.0.1:$REDIS_PORT (pid $(recorded_pid redis))"
}

# ---------------------------------------------------------------------------- etcd

etcd_answers() { curl -sf --max-time 2 "http://127.0.0.1:$1/version" >/dev/null; }

etcd_installed() {
  command -v etcd >/dev/null 2>&1 && command -v etcdctl >/dev/null 2>&1 || apt_install etcd-server etcd-client
}

start_etcd_member() { # key name client_port peer_port initial_cluster cluster_token
  local key=$1 name=$2 client=$3 peer=$4 cluster=$5 token=$6
  local dir="$STATE/$key"
  mkdir -p "$dir"
  chmod 700 "$dir"
  setsid etcd --name "$name" --data-dir "$dir" --logger=zap --log-level=warn \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "$cluster" --initial-cluster-token "$token" --initial-cluster-state new \
    </dev/null >"$STATE/logs/$key.log" 2>&1 9>&- &
  record_pid "$key" $!
}

etcd_up() {
  etcd_installed
  if etcd_answers "$ETCD_PORT"; then
    say "etcd: reusing the server already running on 127.0.0.1:$ETCD_PORT"
    return
  fi
  start_etcd_member etcd n1 "$ETCD_PORT" $((ETCD_PORT + 1)) "n1=http://127.0.0.1:$((ETCD_PORT + 1))" leasehold-etcd
  wait_for 20 etcd etcd_answers "$ETCD_PORT" || fail "etcd did not answer on 127.0.0.1:$ETCD_PORT within 20 s; see $STATE/logs/etcd.log"
  say "etcd: started on 127.0.0.1:$ETCD_PORT (pid $(recorded_pid etcd))"
}

etcd_cluster_spec() {
  local spec="" i
  for i in 0 1 2; do spec+="${spec:+,}m$((i + 1))=http://127.0.0.1:$((ETCD_CLUSTER_PORTS[i] + 1))"; done
  echo "$spec"
}

etcd_cluster_up() {
  etcd_installed
  local spec i started=0
  spec=$(etcd_cluster_spec)
  for i in 0 1 2; do
    local port=${ETCD_CLUSTER_PORTS[i]}
    if etcd_answers "$port" || alive "$(recorded_pid "etcd-m$((i + 1))")"; then continue; fi
    start_etcd_member "etcd-m$((i + 1))" "m$((i + 1))" "$port" $((port + 1)) "$spec" leasehold-etcd-cluster
    started=1
  done
  for i in 0 1 2; do
    wait_for 30 etcd-cluster etcd_answers "${ETCD_CLUSTER_PORTS[i]}" ||
      fail "etcd member m$((i + 1)) did not answer on 127.0.0.1:${ETCD_CLUSTER_PORTS[i]}; see $STATE/logs/etcd-m$((i + 1)).log"
  done
  if [[ $started -eq 1 ]]; then say "etcd cluster: started on ports ${ETCD_CLUSTER_PORTS[*]}"; else say "etcd cluster: reusing the members already running"; fi
}

# ---------------------------------------------------------------------------- ZooKeeper

# srvr answers "Mode: ..." on a ZooKeeper server that allows it (ours does).
zookeeper_answers() { [[ $( (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && timeout 2 cat <&3) 2>/dev/null) == *Mode:* ]]; }

ZK_JARS=(zookeeper zookeeper-jute slf4j-api slf4j-simple netty-handler netty-common netty-buffer netty-transport
  netty-codec netty-resolver netty-transport-native-epoll netty-transport-native-unix-common commons-cli)

zookeeper_up() {
  # The server, Curator's recipes (for the tests' holders) and javac to build them.
  local missing=()
  [[ -f /usr/share/java/zookeeper.jar ]] || missing+=(zookeeper)
  [[ -f /usr/share/java/curator-recipes.jar ]] || missing+=(libcurator-recipes-java libcurator-framework-java)
  command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
  [[ ${#missing[@]} -eq 0 ]] || apt_install "${missing[@]}"
  if zookeeper_answers "$ZOOKEEPER_PORT"; then
    say "zookeeper: reusing the server already running on 127.0.0.1:$ZOOKEEPER_PORT"
    return
  fi
  local dir="$STATE/zookeeper" classpath="" jar
  mkdir -p "$dir/data"
  for jar in "${ZK_JARS[@]}"; do classpath+="${classpath:+:}/usr/share/java/$jar.jar"; done
  # Loopback only, no admin server (it would listen on 8080 of every interface), the four-letter
  # words the source reads, and sessions from 2 s so that tests can expire one quickly.
  cat >"$dir/zoo.cfg" <<CFG
tickTime=1000
dataDir=$dir/data
clientPort=$ZOOKEEPER_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr,mntr,ruok
maxClientCnxns=0
minSessionTimeout=2000
CFG
  setsid java -Xmx256m -cp "$classpath" -Dzookeeper.jmx.log4j.disable=true \
    org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" </dev/null >"$STATE/logs/zookeeper.log" 2>&1 9>&- &
  record_pid zookeeper $!
  wait_for 30 zookeeper zookeeper_answers "$ZOOKEEPER_PORT" ||
    fail "zookeeper did not answer on 127.0.0.1:$ZOOKEEPER_PORT within 30 s; see $STATE/logs/zookeeper.log"
  say "zookeeper: started on 127.0.0.1:$ZOOKEEPER_PORT (pid $(recorded_pid zookeeper))"
}

# ---------------------------------------------------------------------------- Alertmanager

alertmanager_answers() { curl -sf --max-time 2 "http://127.0.0.1:$1/-/ready" >/dev/null; }

alertmanager_up() {
  if alertmanager_answers "$ALERTMANAGER_PORT"; then
    say "alertmanager: reusing the server already running on 127.0.0.1:$ALERTMANAGER_PORT"
    return
  fi
  # The package's own instance (/etc/default/prometheus-alertmanager: :9093 on every
  # interface, gossip on 0.0.0.0:9094) is never started: apt_install keeps package scripts
  # from starting daemons, and we start the binary ourselves with our own flags.
  command -v prometheus-alertmanager >/dev/null 2>&1 || apt_install prometheus-alertmanager
  mkdir -p "$STATE/alertmanager"
  # One route to a receiver with no integrations: alerts are kept and listed, never sent
  # anywhere. Short waits, so that a posted alert is grouped at once.
  cat >"$STATE/alertmanager.yml" <<'YAML'
route:
  receiver: nowhere
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: nowhere
YAML
  # --cluster.listen-address= (empty) turns the gossip cluster off; its default binds
  # 0.0.0.0:9094 (TCP and UDP, for gossip with peers). --web.external-url only names links in
  # notifications, but without it Alertmanager builds them from the machine's hostname.
  setsid prometheus-alertmanager \
    --config.file="$STATE/alertmanager.yml" --storage.path="$STATE/alertmanager" \
    --web.listen-address="127.0.0.1:$ALERTMANAGER_PORT" --web.external-url="http://127.0.0.1:$ALERTMANAGER_PORT" \
    --cluster.listen-address= --log.level=warn \
    </dev/null >"$STATE/logs/alertmanager.log" 2>&1 9>&- &
  local pid=$! deadline=$((SECONDS + 30))
  record_pid alertmanager "$pid"
  # Not wait_for: a bad config or a port in use ends it at once, and that is said at once.
  until alertmanager_answers "$ALERTMANAGER_PORT"; do
    alive "$pid" || fail "alertmanager exited at start; see $STATE/logs/alertmanager.log"
    ((SECONDS < deadline)) ||
      fail "alertmanager did not answer /-/ready on 127.0.0.1:$ALERTMANAGER_PORT within 30 s; see $STATE/logs/alertmanager.log"
    sleep 0.2
  done
  say "alertmanager: started on 127.0.0.1:$ALERTMANAGER_PORT (pid $(recorded_pid alertmanager))"
}

# ---------------------------------------------------------------------------- Chromium

chromium_up() {
  if [[ -x /usr/bin/chromium ]]; then
    say "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  else
    apt_install chromium
    [[ -x /usr/bin/chromium ]] || fail "chromium was installed but /usr/bin/chromium is missing"
    say "chromium: installed $(/usr/bin/chromium --version 2>/dev/null)"
  fi
}

# ---------------------------------------------------------------------------- commands

write_env() {
  local cluster=""
  if etcd_answers "${ETCD_CLUSTER_PORTS[0]}"; then
    local i
    for i in 0 1 2; do cluster+="${cluster:+,}http://127.0.0.1:${ETCD_CLUSTER_PORTS[i]}"; done
  fi
  {
    echo "LEASEHOLD_TEST_DATABASE_URL=$PG_ADMIN_URL"
    echo "LEASEHOLD_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
    echo "LEASEHOLD_TEST_ETCD_ENDPOINTS=http://127.0.0.1:$ETCD_PORT"
    echo "LEASEHOLD_TEST_ETCD_CLUSTER_ENDPOINTS=$cluster"
    echo "LEASEHOLD_TEST_ALERTMANAGER_URL=http://127.0.0.1:$ALERTMANAGER_PORT"
    echo "LEASEHOLD_TEST_ZOOKEEPER=127.0.0.1:$ZOOKEEPER_PORT"
    if [[ -x /usr/bin/chromium ]]; then echo "LEASEHOLD_CHROMIUM=/usr/bin/chromium"; fi
  } >"$STATE/env.tmp"
  mv "$STATE/env.tmp" "$STATE/env"
}

cmd_up() {
  local cluster=0 chromium=1
  for arg in "$@"; do
    case $arg in
      --etcd-cluster) cluster=1 ;;
      --no-chromium) chromium=0 ;;
      *) fail "unknown option for up: $arg" ;;
    esac
  done
  command -v curl >/dev/null 2>&1 || apt_install curl
  postgres_up
  redis_up
  etcd_up
  if [[ $cluster -eq 1 ]]; then etcd_cluster_up; fi
  zookeeper_up
  alertmanager_up
  if [[ $chromium -eq 1 ]]; then chromium_up; fi
  write_env
  say "ready; addresses in ${STATE#"$ROOT"/}/env"
}

cmd_status() {
  local rc=0
  report() { # name address answers(0/1) key
    local owner="not started by this script" pid
    pid=$(recorded_pid "$4")
    if [[ -n $pid ]] && alive "$pid"; then owner="started by this script, pid $pid"; fi
    if [[ $3 -eq 0 ]]; then printf '  %-12s %-24s up    (%s)\n' "$1" "$2" "$owner"
    else printf '  %-12s %-24s down\n' "$1" "$2"; rc=1; fi
  }
  local pg_host=127.0.0.1 pg_port=5432
  if [[ -n ${DATABASE_URL:-} ]]; then pg_host=$(url_part "$DATABASE_URL" host); pg_port=$(url_part "$DATABASE_URL" port); fi
  local ok
  ok=1; command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h "$pg_host" -p "$pg_port" -t 2 && ok=0
  report postgres "$pg_host:$pg_port" $ok postgres
  ok=1; command -v redis-cli >/dev/null 2>&1 && redis_answers "$REDIS_PORT" && ok=0
  report redis "127.0.0.1:$REDIS_PORT" $ok redis
  ok=1; etcd_answers "$ETCD_PORT" && ok=0
  report etcd "127.0.0.1:$ETCD_PORT" $ok etcd
  local i
  for i in 0 1 2; do
    ok=1; etcd_answers "${ETCD_CLUSTER_PORTS[i]}" && ok=0
    [[ $ok -eq 0 || -n $(recorded_pid "etcd-m$((i + 1))") ]] && report "etcd-m$((i + 1))" "127.0.0.1:${ETCD_CLUSTER_PORTS[i]}" $ok "etcd-m$((i + 1))"
  done
  ok=1; zookeeper_answers "$ZOOKEEPER_PORT" && ok=0
  report zookeeper "127.0.0.1:$ZOOKEEPER_PORT" $ok zookeeper
  ok=1; alertmanager_answers "$ALERTMANAGER_PORT" && ok=0
  report alertmanager "127.0.0.1:$ALERTMANAGER_PORT" $ok alertmanager
  if [[ -x /usr/bin/chromium ]]; then printf '  %-12s %-24s installed\n' chromium /usr/bin/chromium
  else printf '  %-12s %-24s missing\n' chromium /usr/bin/chromium; fi
  return $rc
}

cmd_down() { # [key...]: only those (redis, etcd, etcd-m1, postgres, ...); none: all it started
  local file only=" $* "
  shopt -s nullglob
  for file in "$STATE"/pids/*.pid; do
    local key pid
    key=$(basename "$file" .pid)
    [[ $# -eq 0 || $only == *" $key "* ]] || continue
    pid=$(cat "$file")
    if alive "$pid"; then
      # Postgres: SIGINT is its "fast" shutdown; the others (Alertmanager too: it writes its
      # silences and notification log to $STATE/alertmanager first) stop cleanly on SIGTERM.
      if [[ $key == postgres ]]; then kill -INT "$pid"; else kill -TERM "$pid"; fi
      local deadline=$((SECONDS + 15))
      while alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
      if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
      say "$key: stopped (pid $pid)"
    fi
    rm -f "$file"
  done
  [[ $# -gt 0 ]] || rm -f "$STATE/env"
}

command=${1:-}
[[ $# -gt 0 ]] && shift
case $command in
  up | down)
    # Every daemon started below gets 9>&- : one that inherited this descriptor would hold
    # the lock for as long as it runs.
    exec 9>"$STATE/.lock"
    flock -w 300 9 || fail "another services.sh is still running (lock $STATE/.lock)"
    "cmd_$command" "$@"
    ;;
  status) cmd_status ;;
  *)
    echo "usage: scripts/services.sh up [--etcd-cluster] [--no-chromium] | status | down" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Two `cohort serve` instances sharing one PostgreSQL database and one data directory, behind nginx
# (round-robin), everything on loopback: the setup Docs/Server.md ("Several instances") walks through.
#   bash Scripts/two-instances.sh start [DIR]    start it all under DIR (default /tmp/cohort-two); prints the URL
#   bash Scripts/two-instances.sh stop [DIR]     stop it all (the data stays in DIR)
#   bash Scripts/two-instances.sh nginx-config PREFIX PORT PROXY-ADDRESS HOST:PORT...
#                                                print the nginx configuration it uses (the tests use it too)
# Needs Debian's postgresql and nginx (make deps). As root, PostgreSQL runs as the postgres user.
# COHORT_BIN: the folder of the cohort binary (default: a release build); COHORT_SERVE_ARGS: more
# options for both instances (e.g. "--identity-rate 1000000").
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
source "$scripts/timing.sh"   # free_port, wait_for

nginx_config() {  # PREFIX PORT PROXY-ADDRESS UPSTREAM...
  local prefix=$1 port=$2 bind=$3; shift 3
  cat <<CONF
daemon off;
worker_processes 1;
pid $prefix/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $prefix/body;
    proxy_temp_path $prefix/proxy;
    fastcgi_temp_path $prefix/fastcgi;
    uwsgi_temp_path $prefix/uwsgi;
    scgi_temp_path $prefix/scgi;
    upstream cohort {
$(for upstream in "$@"; do echo "        server $upstream max_fails=0;"; done)
    }
    server {
        listen 127.0.0.1:$port;
        # Pushes are bounded by cohort serve (--max-push-mb), not here.
        client_max_body_size 0;
        location / {
            proxy_pass http://cohort;
            # HTTP/1.1 to the instances: request bodies stream to them chunked.
            proxy_http_version 1.1;
            # The Host clients used (it must match --public-url) and the client's address
            # (read by the instances only from the address below: --trusted-proxy).
            proxy_set_header Host \$http_host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_bind $bind;
            # Clones and pushes stream both ways; a transfer may take long.
            proxy_request_buffering off;
            proxy_buffering off;
            # A response is relayed 64 KiB at a time (nginx asks the other two to fit with it).
            proxy_buffer_size 64k;
            proxy_buffers 4 64k;
            proxy_busy_buffers_size 128k;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
            # An instance that is down is skipped; a request already sent is never replayed.
            proxy_next_upstream error timeout;
        }
    }
}
CONF
}

as_postgres() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else "$@"; fi; }

start() {
  local dir=${1:-/tmp/cohort-two}
  [ -e "$dir/pids" ] && { echo "error: E_BUSY: $dir already runs a setup (stop it first: $0 stop $dir)" >&2; exit 1; }
  local pgbin bin
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -x "$pgbin/postgres" ] || { echo "error: E_IO: PostgreSQL is not installed (run make deps)" >&2; exit 1; }
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "error: E_IO: nginx is not installed (run make deps)" >&2; exit 1; }
  bin=${COHORT_BIN:-$(bash "$scripts/build-release.sh" cohort git-credential-cohort)}
  mkdir -p "$dir/pg" "$dir/nginx" "$dir/data"
  chmod 755 "$dir" "$dir/nginx"

  # PostgreSQL: a cluster of its own, password authentication, loopback only.
  local pgport password
  pgport=$(free_port)
  password=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
  umask 077; printf '%s\n' "$password" > "$dir/pg/password"; umask 022
  [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$dir/pg"
  as_postgres "$pgbin/initdb" -D "$dir/pg/data" -A scram-sha-256 -U cohort --pwfile="$dir/pg/password" -E UTF8 --no-locale >"$dir/pg/initdb.log"
  as_postgres "$pgbin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w \
    -o "-p $pgport -k $dir/pg -c listen_addresses=127.0.0.1" start >/dev/null
  PGPASSWORD=$password "$pgbin/psql" -h 127.0.0.1 -p "$pgport" -U cohort -d postgres -X -q -c "CREATE DATABASE cohort"
  # The state URL carries the password, so it goes in the environment, never on a command line.
  umask 077
  printf 'COHORT_SERVE_STATE=postgres://cohort:%s@127.0.0.1:%s/cohort?sslmode=disable\n' "$password" "$pgport" > "$dir/state.env"
  umask 022

  # Two instances on one data directory (they share token.key, challenge.key and the repositories),
  # both named by the URL nginx answers at.
  local front p1 p2
  front=$(free_port); p1=$(free_port); p2=$(free_port)
  : > "$dir/pids"
  for port in "$p1" "$p2"; do
    (set -a; source "$dir/state.env"; set +a
     # shellcheck disable=SC2086 # COHORT_SERVE_ARGS: more options for both instances, split on spaces
     exec setsid "$bin/cohort" serve --data "$dir/data" --listen "127.0.0.1:$port" --public-url "http://127.0.0.1:$front" \
       --trusted-proxy 127.0.0.2 ${COHORT_SERVE_ARGS:-} >"$dir/serve-$port.out" 2>"$dir/serve-$port.log" </dev/null) &
    echo "$!" >> "$dir/pids"
    wait_for 60 grep -q "listening on" "$dir/serve-$port.out" || { echo "error: E_IO: cohort serve did not start (see $dir/serve-$port.log)" >&2; exit 1; }
  done

  nginx_config "$dir/nginx" "$front" 127.0.0.2 "127.0.0.1:$p1" "127.0.0.1:$p2" > "$dir/nginx/nginx.conf"
  (exec setsid nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/error.log" </dev/null >/dev/null 2>&1) &
  echo "$!" >> "$dir/pids"
  echo "$pgbin $dir/pg/data" > "$dir/postgres"
  wait_for 20 python3 -c "import socket; socket.create_connection(('127.0.0.1', $front), 1)" \
    || { echo "error: E_IO: nginx did not start (see $dir/nginx/error.log)" >&2; exit 1; }
  echo "http://127.0.0.1:$front"
  echo "  instances 127.0.0.1:$p1 and 127.0.0.1:$p2 (logs $dir/serve-*.log), PostgreSQL 127.0.0.1:$pgport, data $dir/data" >&2
  echo "  publish: cohort publish http://127.0.0.1:$front --workspace FOLDER; stop: bash $0 stop $dir" >&2
}

stop() {
  local dir=${1:-/tmp/cohort-two}
  [ -e "$dir/pids" ] || { echo "nothing runs under $dir"; return 0; }
  while read -r pid; do kill "$pid" 2>/dev/null || true; done < "$dir/pids"
  sleep 0.5
  if [ -e "$dir/postgres" ]; then
    read -r pgbin data < "$dir/postgres"
    as_postgres "$pgbin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -f "$dir/pids" "$dir/postgres"
  echo "stopped (the data stays in $dir)"
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  nginx-config) shift; nginx_config "$@" ;;
  *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 64 ;;
esac

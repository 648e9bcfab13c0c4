#!/usr/bin/env bash
# Starts, or stops, the local server the `connection` benchmarks need: nginx (Debian's `nginx`
# package) on 127.0.0.1 over TLS, offering HTTP/2 and HTTP/1.1 by ALPN, serving `GET /small-json`
# (the same 68-byte JSON document as the embedded test server's) from a file.
#
#   apt-get install nginx                          # once; any nginx built with http_v2 and ssl
#   eval "$(Benchmarks/h2-server.sh start)"        # prints, and so exports, the ERRAND_BENCH_H2_* lines
#   .build/release/ErrandBenchmarks --only connection
#   Benchmarks/h2-server.sh stop                   # stops it by PID and removes its directory
#
# `start` makes a temporary directory (mktemp -d) holding a CA and a server certificate for
# 127.0.0.1 and localhost (openssl), the JSON file, nginx.conf, the PID file and nginx's logs;
# picks a free port; runs `nginx -p DIR -c DIR/nginx.conf -g 'daemon off;'` in the background
# (one worker process, access log off); waits until it answers over HTTP/2; and prints:
#
#   export ERRAND_BENCH_H2_URL=https://127.0.0.1:PORT   the server, without a path
#   export ERRAND_BENCH_H2_CA=DIR/ca.pem                 the CA that signed its certificate
#   export ERRAND_BENCH_H2_DIR=DIR                       the directory `stop` removes
#
# `stop [DIR]` (DIR defaults to $ERRAND_BENCH_H2_DIR) sends TERM to the master process whose PID
# is in DIR/nginx.pid — it ends its worker — waits for it, and removes DIR. Killing that PID by
# hand stops the server too; the directory then stays until removed.
#
# nginx ends a connection after `keepalive_requests` requests (default 1000, HTTP/2 included:
# it sends GOAWAY) and after `keepalive_timeout` idle (default 75 s). Both are raised here so that
# the connections a benchmark counts are the client's doing, not the server's.
set -euo pipefail

die() {
  echo "h2-server.sh: $*" >&2
  exit 1
}

start() {
  local nginx dir port pid _
  nginx=$(command -v nginx || true)
  [ -n "$nginx" ] || nginx=/usr/sbin/nginx
  [ -x "$nginx" ] || die "nginx not found: apt-get install nginx"
  command -v openssl >/dev/null || die "openssl not found"
  command -v curl >/dev/null || die "curl not found"

  dir=$(mktemp -d "${TMPDIR:-/tmp}/errand-h2-server.XXXXXX")
  # nginx's worker runs as nobody when started by root: it must be able to read the content.
  chmod 755 "$dir"
  mkdir -p "$dir/www" "$dir/tmp"

  # A CA, and a server certificate it signs for 127.0.0.1 and localhost.
  openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=Errand benchmark CA" \
    -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" 2>"$dir/openssl.log" ||
    die "openssl could not make the CA; see $dir/openssl.log"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$dir/server-key.pem" -out "$dir/server.csr" 2>>"$dir/openssl.log" ||
    die "openssl could not make the server key; see $dir/openssl.log"
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
    >"$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" -CAcreateserial \
    -days 7 -extfile "$dir/server.ext" -out "$dir/server.pem" 2>>"$dir/openssl.log" ||
    die "openssl could not sign the server certificate; see $dir/openssl.log"

  printf '%s\n' '{"id": 42, "name": "errand", "tags": ["fast", "small"], "ok": true}' >"$dir/www/small-json"
  chmod 644 "$dir/www/small-json"

  # A free port: bind port 0 and read what the kernel picked (it is free again once closed).
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    die "python3 could not find a free port"

  cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    default_type application/json;
    keepalive_requests 100000000;
    keepalive_timeout 3600s;
    open_file_cache max=16;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    server {
        listen 127.0.0.1:$port ssl http2;
        ssl_certificate $dir/server.pem;
        ssl_certificate_key $dir/server-key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        root $dir/www;
        location = /small-json { }
    }
}
EOF
  # -e: the error log before the configuration is read (nginx >= 1.19.5), not /var/log/nginx.
  "$nginx" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -t >"$dir/nginx-test.log" 2>&1 ||
    { cat "$dir/nginx-test.log" >&2; die "nginx rejected $dir/nginx.conf"; }
  # Its own output goes to a file, so that `eval "$(... start)"` does not wait for it; its own
  # session, so that Ctrl-C in the terminal that started it does not reach it.
  setsid "$nginx" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -g 'daemon off;' \
    </dev/null >"$dir/nginx.out" 2>&1 &
  pid=$!
  echo "$pid" >"$dir/master.pid"

  for _ in $(seq 1 50); do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$dir/nginx.out" "$dir/error.log" >&2 2>/dev/null || true
      die "nginx exited at start"
    fi
    if curl -sf --http2 --cacert "$dir/ca.pem" -o /dev/null "https://127.0.0.1:$port/small-json" 2>/dev/null; then
      # The master's own record of its PID: the same as $! unless setsid had to fork.
      if [ -s "$dir/nginx.pid" ]; then
        pid=$(cat "$dir/nginx.pid")
        echo "$pid" >"$dir/master.pid"
      fi
      echo "h2-server.sh: nginx $pid on https://127.0.0.1:$port ($dir)" >&2
      echo "export ERRAND_BENCH_H2_URL=https://127.0.0.1:$port"
      echo "export ERRAND_BENCH_H2_CA=$dir/ca.pem"
      echo "export ERRAND_BENCH_H2_DIR=$dir"
      return 0
    fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  die "nginx did not answer on port $port in 5 s; see $dir/error.log"
}

stop() {
  local dir=${1:-${ERRAND_BENCH_H2_DIR:-}} pid _
  [ -n "$dir" ] || die "stop: no directory given and ERRAND_BENCH_H2_DIR is not set"
  [ -f "$dir/master.pid" ] || die "stop: $dir/master.pid not found"
  pid=$(cat "$dir/master.pid")
  # TERM: nginx's fast shutdown; the master ends its worker, then itself.
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "h2-server.sh: nginx $pid did not stop on TERM; killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  echo "h2-server.sh: stopped nginx $pid and removed $dir" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  *) die "usage: $0 start | stop [DIR]" ;;
esac

#!/usr/bin/env bash
# Installs the benchmark's peers: Debian's postfix (smtp-source, smtp-sink and
# the Postfix peer itself) and Haraka from npm into bench/results/peers/haraka.
# Idempotent; prints one "peer NAME: ok|missing (reason)" line per peer and
# never fails the run: a peer that cannot be installed is reported missing.
set -u
cd "$(dirname "$0")/../.."
PEERS_DIR="bench/results/peers"
HARAKA_VERSION="3.3.4"
mkdir -p "$PEERS_DIR"

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }

if ! have postfix || ! have smtp-source || ! have smtp-sink; then
  if [ "$(id -u)" = "0" ] && have apt-get; then
    # Non-interactive: answer debconf's "General type of mail configuration" with "No configuration",
    # so the package installs without configuring or starting the system's own Postfix.
    echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections 2>/dev/null
    echo "postfix postfix/mailname string bench.localdomain" | debconf-set-selections 2>/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postfix >"$PEERS_DIR/postfix-install.log" 2>&1 \
      || { apt-get update -q >>"$PEERS_DIR/postfix-install.log" 2>&1 \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postfix >>"$PEERS_DIR/postfix-install.log" 2>&1; }
  fi
fi
if have postfix && have smtp-source && have smtp-sink; then
  echo "peer postfix: ok"
else
  echo "peer postfix: missing (apt-get install postfix failed or not root; see $PEERS_DIR/postfix-install.log)"
fi

HARAKA_DIR="$PEERS_DIR/haraka"
if [ ! -x "$HARAKA_DIR/node_modules/.bin/haraka" ]; then
  mkdir -p "$HARAKA_DIR"
  # libmime is pinned to the version this project already uses: newer ones
  # depend on releases some registry mirrors do not carry.
  cat >"$HARAKA_DIR/package.json" <<JSON
{ "name": "sealpost-bench-haraka", "private": true,
  "dependencies": { "Haraka": "$HARAKA_VERSION" },
  "overrides": { "libmime": "5.3.8" } }
JSON
  (cd "$HARAKA_DIR" && npm install --no-audit --no-fund --ignore-scripts >install.log 2>&1)
fi
if [ -x "$HARAKA_DIR/node_modules/.bin/haraka" ]; then
  echo "peer haraka: ok"
else
  echo "peer haraka: missing (npm install Haraka@$HARAKA_VERSION failed; see $HARAKA_DIR/install.log)"
fi

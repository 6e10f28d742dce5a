#!/bin/sh
# paywatch's container entrypoint (docker-compose.yml).
#
#   entrypoint.sh serve    write the config from the environment, apply the
#                          migrations, make the first API key once, and
#                          run `paywatch serve` (the default)
#   entrypoint.sh health   exit 0 only when a network is enabled and every
#                          enabled one is healthy (the compose healthcheck)
#   entrypoint.sh config   write the config and print where it is
#   entrypoint.sh CMD ...  run `paywatch CMD ...` on the config (PAYWATCH_CONFIG)
#
# A network is enabled by its node: PAYWATCH_<NETWORK>_RPC_URL (BITCOIN,
# LITECOIN, ETHEREUM, TRON, SOLANA) with PAYWATCH_<NETWORK>_ACCOUNT_KEY, the
# account's extended public key (Solana has none: import its address pool
# with `docker compose exec paywatch paywatch-entrypoint pool import
# --network solana FILE`). Every method of an enabled network is enabled.
# PAYWATCH_CHAIN (default mainnet) is every network's chain. With
# PAYWATCH_PUBLIC_URL the payment page is on (PAYWATCH_CHECKOUT_SECRET
# required); with PAYWATCH_WEBHOOK_URL events are delivered there, signed
# with PAYWATCH_WEBHOOK_SECRET. Secrets stay in the environment: the file
# names their variables only.
set -eu

PAYWATCH=${PAYWATCH_BIN:-/usr/local/bin/paywatch}
BASE=${PAYWATCH_BASE_CONFIG:-/etc/paywatch/paywatch.yaml}
CONFIG=${PAYWATCH_CONFIG:-/tmp/paywatch/paywatch.yaml}
# Every paywatch command run here (and by `docker compose exec`) reads it.
export PAYWATCH_CONFIG="$CONFIG"
STATE=${PAYWATCH_STATE_DIR:-/var/lib/paywatch}

fail() {
	echo "paywatch-entrypoint: $*" >&2
	exit 2
}

# quoted prints a value as a YAML double-quoted string, refusing what would
# need escaping (no legitimate URL or key has it).
quoted() {
	case "$2" in
	*'"'* | *'\'* | *'
'*) fail "$1 must not contain a double quote, a backslash or a newline" ;;
	esac
	printf '"%s"' "$2"
}

# var prints the value of the variable named $1 ("" when unset).
var() {
	eval "printf '%s' \"\${$1:-}\""
}

write_config() {
	chain=${PAYWATCH_CHAIN:-mainnet}
	case "$chain" in mainnet | testnet | regtest) ;; *) fail "PAYWATCH_CHAIN must be mainnet, testnet or regtest, not $chain" ;; esac
	umask 077
	mkdir -p "$(dirname "$CONFIG")"
	[ -r "$BASE" ] || fail "no base config at $BASE"
	nets=""
	methods=""
	{
		cat "$BASE"
		echo "listen: $(quoted PAYWATCH_LISTEN "${PAYWATCH_LISTEN:-0.0.0.0:8080}")"
		echo "admin_listen: $(quoted PAYWATCH_ADMIN_LISTEN "${PAYWATCH_ADMIN_LISTEN:-0.0.0.0:8090}")"
		echo "networks:"
		for n in bitcoin litecoin ethereum tron solana; do
			N=$(echo "$n" | tr a-z A-Z)
			url=$(var "PAYWATCH_${N}_RPC_URL")
			key=$(var "PAYWATCH_${N}_ACCOUNT_KEY")
			if [ -z "$url" ]; then
				[ -z "$key" ] || fail "PAYWATCH_${N}_ACCOUNT_KEY is set but PAYWATCH_${N}_RPC_URL is not: set both to watch $n, or neither"
				continue
			fi
			echo "  $n:"
			echo "    enabled: true"
			echo "    chain: $chain"
			# rpc_url: PAYWATCH_${N}_RPC_URL, read by paywatch itself.
			if [ "$n" != solana ]; then
				[ -n "$key" ] || fail "PAYWATCH_${N}_RPC_URL is set but PAYWATCH_${N}_ACCOUNT_KEY is not: the account's extended public key (xpub/zpub) addresses are derived from"
				echo "    account_key: $(quoted "PAYWATCH_${N}_ACCOUNT_KEY" "$key")"
			fi
			if [ "$n" = tron ] && [ -n "${PAYWATCH_TRON_API_KEY:-}" ]; then
				echo "    api_key_env: PAYWATCH_TRON_API_KEY"
			fi
			nets="$nets $n"
			case "$n" in
			bitcoin) methods="$methods BTC" ;;
			litecoin) methods="$methods LTC" ;;
			ethereum) methods="$methods ETH USDT-ERC20 USDC-ERC20" ;;
			tron) methods="$methods TRX USDT-TRC20" ;;
			solana) methods="$methods SOL" ;;
			esac
		done
		[ -n "$nets" ] || fail "no network is enabled, so nothing would be watched: set PAYWATCH_<NETWORK>_RPC_URL and PAYWATCH_<NETWORK>_ACCOUNT_KEY in .env for at least one of BITCOIN, LITECOIN, ETHEREUM, TRON, SOLANA"
		echo "methods:"
		for m in $methods; do
			echo "  $m: {enabled: true}"
		done
		if [ -n "${PAYWATCH_PUBLIC_URL:-}" ]; then
			[ -n "${PAYWATCH_CHECKOUT_SECRET:-}" ] || fail "PAYWATCH_PUBLIC_URL is set but PAYWATCH_CHECKOUT_SECRET is not (at least 32 characters: openssl rand -hex 32)"
			echo "checkout:"
			echo "  enabled: true"
			echo "  public_base_url: $(quoted PAYWATCH_PUBLIC_URL "$PAYWATCH_PUBLIC_URL")"
			echo "  secret_env: PAYWATCH_CHECKOUT_SECRET"
			if [ -n "${PAYWATCH_STOREFRONT_NAME:-}" ]; then
				echo "  storefront_name: $(quoted PAYWATCH_STOREFRONT_NAME "$PAYWATCH_STOREFRONT_NAME")"
			fi
		fi
		if [ -n "${PAYWATCH_WEBHOOK_URL:-}" ]; then
			[ -n "${PAYWATCH_WEBHOOK_SECRET:-}" ] || fail "PAYWATCH_WEBHOOK_URL is set but PAYWATCH_WEBHOOK_SECRET is not (at least 32 characters: openssl rand -hex 32)"
			echo "webhooks:"
			echo "  - name: shop"
			echo "    url: $(quoted PAYWATCH_WEBHOOK_URL "$PAYWATCH_WEBHOOK_URL")"
			echo "    secret_env: PAYWATCH_WEBHOOK_SECRET"
		fi
	} >"$CONFIG.tmp"
	mv "$CONFIG.tmp" "$CONFIG"
	echo "paywatch-entrypoint: watching$nets (methods$methods)" >&2
}

# first_key makes the first API key (every scope) once, into a file of the
# state volume only the container's user reads: never into the log.
first_key() {
	keyfile="$STATE/first-api-key"
	[ ! -e "$keyfile" ] || return 0
	mkdir -p "$STATE"
	if "$PAYWATCH" apikey create --config "$CONFIG" --name admin --scope storefront,finance,operator >"$keyfile.tmp" 2>/dev/null; then
		chmod 600 "$keyfile.tmp"
		mv "$keyfile.tmp" "$keyfile"
		echo "paywatch-entrypoint: the first API key (admin: storefront, finance, operator) is in $keyfile: read it with" \
			"\`docker compose exec paywatch cat $keyfile\`, keep it elsewhere, then delete the file" >&2
	else
		rm -f "$keyfile.tmp"
		echo "paywatch-entrypoint: an API key named admin exists already; make others with" \
			"\`docker compose exec paywatch paywatch-entrypoint apikey create --name N --scope S\`" >&2
	fi
}

cmd=${1:-serve}
[ $# -eq 0 ] || shift
case "$cmd" in
serve)
	write_config
	"$PAYWATCH" migrate --config "$CONFIG"
	first_key
	exec "$PAYWATCH" serve --config "$CONFIG" "$@"
	;;
health)
	exec "$PAYWATCH" status --check --config "$CONFIG"
	;;
config)
	write_config
	echo "$CONFIG"
	;;
*)
	[ -e "$CONFIG" ] || write_config
	exec "$PAYWATCH" "$cmd" "$@"
	;;
esac

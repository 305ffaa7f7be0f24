#!/usr/bin/env bash
# Your first payment: customer → KYC → virtual account → deposit → transfer → withdrawal → a
# signed webhook, received and verified. Needs a running sandbox server (npm start) and its key:
#   KEY=sk_test_… bash examples/quickstart.sh
# The README's "Your first payment in one minute" is this script; a test runs it in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:-http://localhost:8080}
KEY=${KEY:?set KEY to the sk_test_ key npm start printed}
RECEIVER_PORT=${RECEIVER_PORT:-9000}
# The receiver may have exited already (the journey's last line stops it): under `set -e` a failing
# kill inside the trap would make the script fail, so the trap never fails.
trap 'if [ -n "${RECEIVER:-}" ]; then kill "$RECEIVER" 2>/dev/null || true; fi' EXIT
# quickstart:start
api() { curl -sS --fail-with-body -H "Authorization: $KEY" -H 'Content-Type: application/json' "$@"; }
# get a.b.c: prints that field of the JSON answer; an error answer prints its code and message instead.
get() { node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{let v;try{v=JSON.parse(s)}catch{console.error(s||"no answer");process.exit(1)}
  if(v.code&&!v.data){console.error(`${v.code}: ${v.message}`);process.exit(1)}for(const k of process.argv[1].split("."))v=v[k];console.log(v)})' "$1"; }

# 1. A webhook subscription to every event, and a receiver that verifies each signature.
SUBSCRIPTION=$(api -X POST "$BASE/v1/webhooks" -d "{\"name\":\"quickstart\",\"url\":\"http://127.0.0.1:$RECEIVER_PORT/hooks\",\"subscribedEventTypes\":[\"*\"]}")
WEBHOOKS=$(mktemp)
WEBHOOK_SECRET=$(echo "$SUBSCRIPTION" | get data.secret) node examples/webhook-receiver.mjs "$RECEIVER_PORT" > "$WEBHOOKS" &
RECEIVER=$!

# 2. A customer, approved by KYC in one call (the sandbox's magic last name "Instant").
new_customer() {
  api -X POST "$BASE/v1/customers/individual" -d "{\"email\":\"$1.$RANDOM$RANDOM@example.com\",\"phoneNumber\":\"212 555 0123\",\"phoneCountryCode\":\"+1\",
    \"kyc\":{\"firstName\":\"$1\",\"lastName\":\"Instant\",\"birthDate\":\"1990-12-10\",\"nationality\":\"US\",\"documentSsn\":\"123-45-6789\",
    \"mainAddress\":{\"street1\":\"350 Fifth Avenue\",\"cityCounty\":\"New York\",\"stateRegion\":\"NY\",\"zip\":\"10118\",\"countryCode\":\"US\"},
    \"taxIdCountry\":\"US\",\"occupation\":\"15\"}}" | get data.id
}
ADA=$(new_customer Ada)
api -X POST "$BASE/v1/compliance/kyc" -d "{\"customerId\":\"$ADA\"}" | get data.status                 # APPROVED

# 3. Her wallet and its virtual account number (created by the approval).
WALLET=$(api "$BASE/v1/customers/$ADA" | get data.portfolios.0.wallets.0)
ACCOUNT=$(api "$BASE/v1/wallets/$WALLET" | get data.virtualAccount.virtualAccountNumber)
echo "wallet $WALLET, account $ACCOUNT"

# 4. A bank deposit of 100.00 arrives; the sandbox rail settles it 60 s later by the client's clock.
api -X POST "$BASE/v1/sandbox/bank-deposits" -d "{\"accountNumber\":\"$ACCOUNT\",\"amount\":\"100.00\",\"asset\":\"USD\",\"network\":\"ACH\",
  \"counterparty\":{\"name\":\"Charles Babbage\",\"accountNumber\":\"987654321\",\"routingNumber\":\"021000021\"}}" | get data.status   # PENDING
api -X POST "$BASE/v1/sandbox/clock/advance" -d '{"seconds":60}' > /dev/null                        # move time on: it settles
api "$BASE/v1/wallets/$WALLET/balance" | get data.AVAILABLE.0.amount                                # 100.00

# 5. An internal transfer of 30.00 to another customer's wallet.
GRACE=$(new_customer Grace)
api -X POST "$BASE/v1/compliance/kyc" -d "{\"customerId\":\"$GRACE\"}" > /dev/null
GRACE_WALLET=$(api "$BASE/v1/customers/$GRACE" | get data.portfolios.0.wallets.0)
api -X POST "$BASE/v1/internal-transfer" -d "{\"sourceWalletId\":\"$WALLET\",\"destinationWalletId\":\"$GRACE_WALLET\",\"amount\":\"30.00\",\"asset\":\"USD\"}" | get data.status   # COMPLETED

# 6. An ACH withdrawal of 25.00 to an outside bank account; it settles 60 s later.
api -X POST "$BASE/v1/baas/transactions/withdrawal" -d "{\"walletId\":\"$WALLET\",\"amount\":\"25.00\",\"name\":\"Ada Instant\",
  \"transferNetwork\":\"ACH_DOMESTIC\",\"personTypeCode\":\"P\",\"routingNumber\":\"021000021\",\"accountNumber\":\"123456789\",
  \"street1\":\"1 Main Street\",\"cityCounty\":\"Arlington\",\"stateRegion\":\"VA\",\"zip\":\"22201\",\"countryCode\":\"US\"}" | get data.status   # PENDING
api -X POST "$BASE/v1/sandbox/clock/advance" -d '{"seconds":60}' > /dev/null
api "$BASE/v1/wallets/$WALLET/balance" | get data.AVAILABLE.0.amount                                # 45.00

# 7. The signed webhook of the withdrawal, received and verified by the receiver.
for _ in $(seq 1 50); do grep -q 'verified BANK_WITHDRAWAL_TRANSACTION_COMPLETED' "$WEBHOOKS" && break; sleep 0.2; done
grep 'verified BANK_WITHDRAWAL_TRANSACTION_COMPLETED' "$WEBHOOKS"
kill $RECEIVER; rm -f "$WEBHOOKS"
# The subscription goes too: left behind, it would send the next receiver on this port every event.
api -X DELETE "$BASE/v1/webhooks/$(echo "$SUBSCRIPTION" | get data.id)" > /dev/null
# quickstart:end

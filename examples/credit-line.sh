#!/usr/bin/env bash
# A crypto-backed credit line from start to liquidation: a customer deposits 1 BTC, opens a
# 15,000.00 USD line on it, spends 9,000.00 on its credit card, then the BTC price falls step by
# step through every LTV threshold to a liquidation. Needs a running sandbox server (npm start):
#   KEY=sk_test_… bash examples/credit-line.sh
# docs/credit.md shows this script and what it prints; a test runs it in CI. Prices are the
# client's own sandbox prices: run it on a fresh server (or after POST /v1/sandbox/reset).
set -euo pipefail
BASE=${BASE:-http://localhost:8080}
KEY=${KEY:?set KEY to the sk_test_ key npm start printed}
api() { curl -sS --fail-with-body -H "Authorization: $KEY" -H 'Content-Type: application/json' "$@"; }
get() { node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{let v=JSON.parse(s);for(const k of process.argv[1].split("."))v=v[k];console.log(v)})' "$1"; }
line() { api "$BASE/v1/credit-lines/$LINE" | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const d=JSON.parse(s).data;
  console.log(`${process.argv[1]}: status ${d.status}, ltv ${d.ltv}, level ${d.ltvLevel}, collateral ${d.collateral.amount} BTC = ${d.collateral.value} USD, owed ${d.outstanding.total}, available ${d.availableCredit}`)})' "$1"; }
price() { api -X PUT "$BASE/v1/sandbox/prices/BTC-USD" -d "{\"price\":\"$1\"}" > /dev/null; line "BTC at $1"; }
# credit:start

# 1. An approved customer (the sandbox's magic last name "Instant") and her wallet.
CUSTOMER=$(api -X POST "$BASE/v1/customers/individual" -d "{\"email\":\"ada.$RANDOM$RANDOM@example.com\",\"phoneNumber\":\"212 555 0123\",\"phoneCountryCode\":\"+1\",
  \"kyc\":{\"firstName\":\"Ada\",\"lastName\":\"Instant\",\"birthDate\":\"1990-12-10\",\"nationality\":\"US\",\"documentSsn\":\"123-45-6789\",
  \"mainAddress\":{\"street1\":\"350 Fifth Avenue\",\"cityCounty\":\"New York\",\"stateRegion\":\"NY\",\"zip\":\"10118\",\"countryCode\":\"US\"},
  \"taxIdCountry\":\"US\",\"occupation\":\"15\"}}" | get data.id)
api -X POST "$BASE/v1/compliance/kyc" -d "{\"customerId\":\"$CUSTOMER\"}" > /dev/null
WALLET=$(api "$BASE/v1/customers/$CUSTOMER" | get data.portfolios.0.wallets.0)

# 2. 1 BTC arrives on her deposit address, already confirmed.
ADDRESS=$(api -X POST "$BASE/v1/digital/addresses" -d "{\"walletId\":\"$WALLET\",\"asset\":\"BTC\"}" | get data.address)
api -X POST "$BASE/v1/sandbox/crypto-deposits" -d "{\"address\":\"$ADDRESS\",\"asset\":\"BTC\",\"amount\":\"1.00000000\",\"confirmations\":6}" | get data.status   # COMPLETED

# 3. A 15,000.00 USD credit line; locking the 1 BTC (worth 60,000.00) opens it: 60,000 × 0.50 ≥ 15,000.
LINE=$(api -X POST "$BASE/v1/credit-lines" -d "{\"customerId\":\"$CUSTOMER\",\"collateralWalletId\":\"$WALLET\",\"collateralAsset\":\"BTC\",\"currency\":\"USD\",\"creditLimit\":\"15000.00\"}" | get data.id)
api -X POST "$BASE/v1/credit-lines/$LINE/collateral" -d '{"amount":"1.00000000"}' > /dev/null
line "locked"

# 4. Her credit card, and 9,000.00 of purchases on it (an authorization, then its completion, twice).
PROGRAM=$(api "$BASE/v1/cards/programs" | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>console.log(JSON.parse(s).data.find(p=>p.cardType==="CREDIT").id))')
CARD=$(api -X POST "$BASE/v1/cards/credit" -d "{\"customerId\":\"$CUSTOMER\",\"cardProgramId\":\"$PROGRAM\",\"isVirtual\":true,\"isPrimary\":true,
  \"collateralWalletId\":\"$WALLET\",\"creditLineId\":\"$LINE\"}" | get data.id)
for AMOUNT in 5000 4000; do
  SWIPE=$(api -X POST "$BASE/v1/sandbox/cards/$CARD/authorizations" -d "{\"amount\":$AMOUNT}" | get data.parentCardTransactionId)
  api -X POST "$BASE/v1/sandbox/card-transactions/$SWIPE/completions" -d "{\"amount\":$AMOUNT}" > /dev/null
done
line "spent"

# 5. The price falls step by step; every crossing writes its event in the price change's transaction.
price 14000.00      # LTV 0.6428: LTV_THRESHOLD_WARNING
price 13500.00      # LTV 0.6666: LTV_PURCHASE_RESTRICTED, the line is RESTRICTED
api -X POST "$BASE/v1/sandbox/cards/$CARD/authorizations" -d '{"amount":20}' | get data.responseCode   # 57: purchases declined
price 12500.00      # LTV 0.7200: LTV_COLLATERAL_NEEDED
price 11900.00      # LTV 0.7563: LTV_URGENT_COLLATERAL_NEEDED
price 11200.00      # LTV 0.8035: LTV_LIQUIDATION_WARNING
price 10500.00      # LTV 0.8571: collateral is sold until the LTV is back at 0.50, LTV_LIQUIDATED

# 6. The events, oldest first, and what the liquidation sold.
api "$BASE/v1/events?limit=20" | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{for(const e of JSON.parse(s).data.reverse())
  if(e.type.startsWith("LTV_")&&e.data.creditLineId===process.argv[1])console.log(e.type,e.data.ltv,...(e.type==="LTV_LIQUIDATED"?
  [`sold ${e.data.collateralSold} BTC + penalty ${e.data.penaltyAmount} BTC for ${e.data.proceeds} USD, principal repaid ${e.data.principalRepaid}`]:[]))})' "$LINE"
# credit:end

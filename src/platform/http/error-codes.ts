/**
 * The one registry of error codes. Every code a client can receive is here with its HTTP status
 * and a description; docs/errors.md is checked against this list by a test.
 *
 * Modules add their codes to this object (keep the groups sorted by status).
 */
export const errorCodes = {
  // 400
  VALIDATION_ERROR: { status: 400, description: 'The request breaks an input rule; `details` names each offending field.' },
  INVALID_JSON: { status: 400, description: 'The body is not well-formed UTF-8 JSON, is nested too deeply, or holds a NUL character or a lone surrogate.' },
  FIELD_REMOVED: { status: 400, description: 'The body uses a field the API no longer accepts; the message names its replacement.' },
  INVALID_AMOUNT: { status: 400, description: 'An amount is not a positive decimal string within the asset\'s scale and maximum.' },
  UNKNOWN_ASSET: { status: 400, description: 'The asset is not in the asset registry (or not available in this mode).' },
  BAD_REQUEST: { status: 400, description: 'The request itself is malformed (for example a badly encoded URL, or a multipart upload without its boundary or cut short).' },
  INVALID_ROUTING_NUMBER: { status: 400, description: 'A US routing number is not 9 digits or fails the ABA checksum; the message gives the reason.' },
  INVALID_SWIFT_CODE: { status: 400, description: 'A SWIFT/BIC code does not have the ISO 9362 form (8 or 11 letters and digits with a valid country code); the message gives the reason.' },
  INVALID_IBAN: { status: 400, description: 'An IBAN has the wrong characters, country, length or format, or fails its mod-97 or national checksum; the message gives the reason.' },
  WRONG_CUSTOMER_TYPE: { status: 400, description: 'The customer is of the other type for this route or field (an individual where a business is needed, or the reverse); the message names the right route, and details the field or path parameter that named the customer.' },
  WALLET_NOT_LINKED: { status: 400, description: 'A bank withdrawal from a wallet that has no virtual account: the wallet must be linked to a virtual account first.' },
  ROUTING_NUMBER_NOT_ELIGIBLE: { status: 400, description: 'The bank of the routing number does not take payments on this network (not in the FedACH directory for ACH, or not eligible for Fedwire funds transfers).' },
  INVALID_IDEMPOTENCY_KEY: { status: 400, description: 'The Idempotency-Key header is empty, too long or holds characters other than visible ASCII.' },
  UNKNOWN_EVENT_TYPE: { status: 400, description: 'A subscribed event type is not in the event catalogue (a renamed legacy name is refused with its replacement); `details` names each one.' },
  WEBHOOK_URL_NOT_ALLOWED: { status: 400, description: 'The webhook URL is refused in this mode: production accepts only https URLs whose host is a public address (no loopback, private, link-local or unique-local address, also after DNS resolution).' },
  DIRECTION_MISMATCH: { status: 400, description: 'A trade quote\'s `direction` does not match its assets: `direct` sells the pair\'s base asset for its quote asset, `reverse` buys the base asset with the quote asset.' },
  SIDE_MISMATCH: { status: 400, description: 'A trade quote\'s `side` disagrees with its `direction`: `direct` must be `sell` and `reverse` must be `buy` (the side is relative to the pair\'s base asset).' },
  SANDBOX_RESET_NOT_CONFIRMED: { status: 400, description: 'POST /v1/sandbox/reset was sent with a `confirm` other than `"RESET"` (without `confirm` at all it is a VALIDATION_ERROR); `details` names the field. Nothing was deleted.' },
  ISO8583_MALFORMED: { status: 400, description: 'An ISO 8583 message sent to the sandbox card network breaks the OpenBaaS sandbox network layout (bad MTI, bitmap, length or characters); the message and `details` name the offending field number.' },
  INVALID_ADDRESS: { status: 400, description: 'A crypto address is not well-formed for the network (characters, length, version, or a Bech32, Base58Check or EIP-55 checksum that fails); the message gives the reason and names the network the address belongs to when it is valid on another one.' },
  ADDRESS_WRONG_NETWORK: { status: 400, description: 'A valid Bitcoin address of the other Bitcoin network (a mainnet address on a testnet server, or the reverse); the message names the network the server expects.' },
  ADDRESS_NOT_ALLOWED: { status: 400, description: 'A well-formed crypto address that funds must never be sent to: a zero address, the Solana System Program, or a stablecoin token contract.' },
  MEMO_NOT_SUPPORTED: { status: 400, description: 'A withdrawal carries a `memo` on a network whose transfers have none (BITCOIN, ETHEREUM); memos are accepted on TRON and SOLANA.' },
  // 401, 403
  UNAUTHENTICATED: { status: 401, description: 'The Authorization header is missing, malformed, or names no known key.' },
  VAULT_TOKEN_INVALID: { status: 401, description: 'A vault endpoint was called without a valid vault token (Authorization: Bearer <token> from POST /v1/vault/token): missing, malformed, an API key, a wrong signature or algorithm, a wrong issuer or audience, or a secret rotated away.' },
  VAULT_TOKEN_EXPIRED: { status: 401, description: 'The vault token has expired (tokens live 6 minutes by the client\'s clock); ask your server for a new one.' },
  FORBIDDEN: { status: 403, description: 'The key is valid but may not do this: revoked, read-only on a write, or the caller\'s address is outside its allow-list; also a vault token without the scope a reveal needs, and a physical card on a program that allows none.' },
  // 404
  NOT_FOUND: { status: 404, description: 'No such resource for this client (another client\'s resource answers the same).' },
  BANK_NOT_FOUND: { status: 404, description: 'A well-formed routing number or SWIFT/BIC code that is not in the bank directory.' },
  ROUTE_NOT_FOUND: { status: 404, description: 'No such route.' },
  // 405
  METHOD_NOT_ALLOWED: { status: 405, description: 'The path exists but not with this method; the Allow header lists the methods it accepts. Answered before authentication, as 404 is.' },
  // 408
  REQUEST_TIMEOUT: { status: 408, description: 'The request did not arrive whole in time (its headers or body stopped coming); nothing was applied.' },
  // 409
  CONFLICT: { status: 409, description: 'The request conflicts with the current state of a resource.' },
  DUPLICATE_EMAIL: { status: 409, description: 'Another customer of this client already uses this email address (compared without regard to letter case).' },
  INVALID_STATE: { status: 409, description: 'The resource is in a state that does not allow this change; the message names the state (for example KYC data after onboarding was decided).' },
  DUPLICATE_RELATION: { status: 409, description: 'The person already has this role in the business; update the relation with PATCH instead.' },
  CARD_NOT_ACTIVE: { status: 422, description: 'The card is not ACTIVE, so the vault does not reveal it (a BLOCKED physical card must be activated first).' },
  INVALID_CARD_STATUS_TRANSITION: { status: 409, description: 'The card cannot move to that status: ACTIVE and SUSPENDED switch with PATCH, any status but CANCELLED can be CANCELLED, a BLOCKED (physical) card becomes ACTIVE only through POST /v1/cards/:cardId/activate, and CANCELLED is final.' },
  KYC_NOT_APPROVED: { status: 409, description: 'The customer\'s KYC (or KYB, for a business) is not APPROVED, which this request needs (for example a virtual account).' },
  VIRTUAL_ACCOUNT_EXISTS: { status: 409, description: 'The wallet already has a virtual account; a wallet has at most one.' },
  OWNERSHIP_LIMIT_EXCEEDED: { status: 409, description: 'The shareholders of a business would together own more than 100%.' },
  VIRTUAL_ACCOUNT_REQUIRED: { status: 409, description: 'The wallet has no virtual account yet, which a dedicated account number, a VRN or deposit instructions need.' },
  VRN_NOT_ASSIGNED: { status: 409, description: 'ACH deposit instructions were asked for a wallet without a VRN; assign one with POST /v1/virtual-accounts/assign-vrn.' },
  BANK_TRANSFER_NOT_PENDING: { status: 409, description: 'The bank deposit or withdrawal already settled or failed; only a PENDING one can settle or fail.' },
  CRYPTO_TRANSACTION_NOT_PENDING: { status: 409, description: 'A sandbox confirm or fail call names a crypto deposit or withdrawal that already COMPLETED or FAILED; only a PENDING one can change.' },
  SANDBOX_CLOCK_LIMIT: { status: 422, description: 'The advance would move the sandbox clock more than 100 years ahead of the wall clock, the furthest it may run (the clock never moves back; restoring an earlier snapshot puts back its offset from the wall clock, not its time).' },
  SANDBOX_CLOCK_BUSY: { status: 409, description: 'An advance of this client\'s sandbox clock was still running its timers after 30 s of waiting (a second advance waits for the first, and every other write of the client waits for an advance running in the same process); nothing was applied: retry when the advance has answered.' },
  SANDBOX_STATE_BUSY: { status: 409, description: 'A sandbox reset, snapshot or restore was refused because an advance of the client\'s clock is still running its timers; retry when it has answered. (A reset or restore that deadlocks with the client\'s other writes on every attempt answers 503 WRITE_CONFLICT, as every write does.)' },
  COOP_AUTH_ENDPOINT_EXISTS: { status: 409, description: 'Another active webhook subscription already lists COOP_AUTH_0100 or COOP_AUTH_0200: a cooperative decision request has exactly one endpoint. Remove the type from that subscription, or pause it, first.' },
  COOP_AUTH_ENDPOINT_MISSING: { status: 409, description: 'POST /v1/sandbox/coop-auth/echo found no active webhook subscription that lists COOP_AUTH_0100 (a `*` subscription is not asked to decide): create one first.' },
  QUOTE_ALREADY_EXECUTED: { status: 409, description: 'The trade quote was already executed; a quote executes once. Replaying the first request with its Idempotency-Key returns its response instead.' },
  IDEMPOTENCY_REQUEST_IN_PROGRESS: { status: 409, description: 'A request with this Idempotency-Key is still being processed; retry later.' },
  // 410
  ENDPOINT_REMOVED: { status: 410, description: 'The endpoint was removed; the message names its replacement.' },
  // 413, 415
  PAYLOAD_TOO_LARGE: { status: 413, description: 'The body exceeds the size limit (1 MiB for JSON, 10 MiB for uploads).' },
  UNSUPPORTED_FILE_TYPE: { status: 415, description: 'The uploaded file is not a PDF, PNG or JPEG; the type is read from the file\'s content, not its name.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'The Content-Type is not accepted by this route (JSON bodies need application/json, in UTF-8: another charset is refused), or the body is compressed (a Content-Encoding other than identity).' },
  // 422
  CARD_EXPIRY_OUT_OF_RANGE: { status: 422, description: 'A card issued now would expire after 2099, which the two-digit expiry year of a card (DE14, YYMM) cannot carry: only when the sandbox clock has been moved past 2095.' },
  CARD_PROGRAM_MISMATCH: { status: 422, description: 'The card program is of the other card type for this route (a CREDIT program for a debit card, or the reverse), or, for the cooperative echo tool, not a COOP_AUTH program.' },
  COMPLIANCE_PROFILE_INCOMPLETE: { status: 422, description: 'KYC or KYB cannot start until the customer\'s data is complete; `details` names each missing field, and in the sandbox each field a check forced to fail stands for (its message names the override).' },
  RESOURCE_LIMIT_REACHED: { status: 422, description: 'A documented per-record limit is reached (for example portfolios per customer or wallets per portfolio).' },
  WEBHOOK_LIMIT_REACHED: { status: 422, description: 'The client already has the maximum number of webhook subscriptions (100, deleted ones not counted).' },
  SANDBOX_SNAPSHOT_INCOMPATIBLE: { status: 422, description: 'The sandbox snapshot was taken with an older database schema and its records no longer fit the current tables, or it holds ledger records without their transfer (left by a reset or a restore that ran while transfers committed, before 2026-12-07); take a new snapshot.' },
  SANDBOX_SNAPSHOT_LIMIT_REACHED: { status: 422, description: 'The client already keeps the maximum number of sandbox snapshots (20); delete one first.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, description: 'The Idempotency-Key was already used with a different request (also when the new request is itself invalid).' },
  PAIR_NOT_TRADABLE: { status: 422, description: 'No tradable asset pair joins the two assets of a trade quote, in either order (GET /v1/trades/asset-pairs lists them).' },
  AMOUNT_OUT_OF_RANGE: { status: 422, description: 'The base-asset amount of a trade is outside the pair\'s `minAmount`..`maxAmount`, or the trade would leave the customer nothing to receive.' },
  COLLATERAL_WALLET_MISMATCH: { status: 422, description: 'A credit card\'s `collateralWalletId` is not the collateral wallet of its `creditLineId`.' },
  CREDIT_LINE_NOT_ACTIVE: { status: 422, description: 'The credit line is not ACTIVE (it waits for collateral, or it is RESTRICTED by its LTV), so this request (for example a credit card) is refused.' },
  LTV_TOO_HIGH: { status: 422, description: 'Releasing that much collateral would take the credit line\'s LTV above its opening LTV (0.50 by default), or locking that little would leave a line that owes at or above its liquidation threshold (it would be sold at once); nothing was moved.' },
  AMOUNT_EXCEEDS_OUTSTANDING: { status: 422, description: 'A credit line payment is larger than what the line owes (principal plus interest; open card holds are not owed yet); nothing was moved.' },
  QUOTE_EXPIRED: { status: 422, description: 'The trade quote\'s `expiresAt` has passed; request a new quote.' },
  INSUFFICIENT_FUNDS: { status: 422, description: 'The wallet\'s AVAILABLE balance in the asset is smaller than the amount (or, for a collateral release, the credit line has less collateral locked than the amount); nothing was moved.' },
  ASSET_NETWORK_MISMATCH: { status: 422, description: 'A sandbox crypto deposit sends an asset that does not move on the network of the receiving address; the funds are lost on chain and the deposit is kept as a FAILED crypto transaction for support (the message names its id; list the wallet\'s FAILED crypto transactions to find it by program).' },
  AMOUNT_BELOW_FEE: { status: 422, description: 'A crypto withdrawal with `grossAmount: true` whose amount does not exceed the network fee: the recipient would get nothing.' },
  // 429
  RATE_LIMITED: { status: 429, description: 'Too many requests for this key (or more than 10 vault reveals of one card in a minute); wait for the number of seconds in Retry-After.' },
  // 431
  REQUEST_HEADERS_TOO_LARGE: { status: 431, description: 'The request\'s headers are larger than the server reads (16 KiB in all); nothing was applied.' },
  // 500, 503
  INTERNAL_ERROR: { status: 500, description: 'A bug on our side. It is logged with the trace id; please report it.' },
  PRICE_FEED_UNAVAILABLE: { status: 503, description: 'No price feed is connected in this mode (production ships none), so trade quotes cannot be priced and credit lines cannot be opened; the sandbox prices them with its own feed.' },
  IDENTITY_PROVIDER_UNAVAILABLE: { status: 503, description: 'No identity verification provider is configured in this mode (production ships none); only the EXTERNAL onboarding strategy works.' },
  WRITE_CONFLICT: {
    status: 503,
    description:
      'The request\'s transaction conflicted with concurrent writes to the same records (a deadlock or a serialization failure) on every one of its attempts, and was rolled back. Retry after Retry-After, with the same Idempotency-Key.',
  },
  SERVICE_UNAVAILABLE: { status: 503, description: 'The service is starting, shutting down, cannot reach its database or found no free database connection in time (DB_CONNECT_TIMEOUT_MS). Retry with the same Idempotency-Key: a write cut off from the database may have been applied.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof errorCodes;

/**
 * The event catalogue: every event type of the specification, and none of the renamed legacy
 * names (DEPOSIT_TRANSACTION_INITIALIZED and the like are never emitted).
 */
export const eventTypes = [
  'WEBHOOK_CREATED',
  'WEBHOOK_UPDATED',
  'WEBHOOK_DELETED',
  'CUSTOMER_CREATED',
  'VIRTUAL_ACCOUNT_CREATED',
  'ASSET_TRADE_SUCCESSFUL',
  'ASSET_TRADE_FAIL',
  'LTV_LIQUIDATED',
  'LTV_LIQUIDATION_WARNING',
  'LTV_URGENT_COLLATERAL_NEEDED',
  'LTV_COLLATERAL_NEEDED',
  'LTV_PURCHASE_RESTRICTED',
  'LTV_THRESHOLD_WARNING',
  'BANK_DEPOSIT_TRANSACTION_PENDING',
  'BANK_DEPOSIT_TRANSACTION_COMPLETED',
  'BANK_DEPOSIT_TRANSACTION_FAILED',
  'BANK_WITHDRAWAL_TRANSACTION_PENDING',
  'BANK_WITHDRAWAL_TRANSACTION_COMPLETED',
  'BANK_WITHDRAWAL_TRANSACTION_FAILED',
  'INTERNAL_TRANSACTION_COMPLETED',
  'CUSTOMER_KYC_STARTED',
  'CUSTOMER_KYC_SDK_FLOW_REQUIRED',
  'CUSTOMER_KYC_SDK_FLOW_COMPLETED',
  'CUSTOMER_KYC_FINISHED',
  'CUSTOMER_KYC_RESTARTED',
  'CUSTOMER_KYC_SDK_EXPIRED',
  'CUSTOMER_KYC_ERROR',
  'CUSTOMER_KYB_STARTED',
  'CUSTOMER_KYB_FINISHED',
  'COOP_AUTH_0100',
  'COOP_AUTH_0120',
  'COOP_AUTH_0200',
  'COOP_AUTH_0220',
  'COOP_AUTH_0420',
  'CARD_TRANSACTION_PENDING',
  'CARD_TRANSACTION_COMPLETED',
  'CARD_TRANSACTION_FAILED',
  'CARD_TRANSACTION_CANCELLED',
  'CRYPTO_DEPOSIT_TRANSACTION_PENDING',
  'CRYPTO_DEPOSIT_TRANSACTION_COMPLETED',
  'CRYPTO_DEPOSIT_TRANSACTION_FAILED',
  'CRYPTO_WITHDRAWAL_TRANSACTION_PENDING',
  'CRYPTO_WITHDRAWAL_TRANSACTION_COMPLETED',
  'CRYPTO_WITHDRAWAL_TRANSACTION_FAILED',
] as const;

export type EventType = (typeof eventTypes)[number];

/** Subscribes to every event type of the catalogue, today's and those added later (as Stripe's `["*"]`). Stands alone. */
export const everyEventType = '*';
/** What a subscription lists: event types of the catalogue, or `*` alone. */
export type SubscribedEventType = EventType | typeof everyEventType;

const eventTypeSet: ReadonlySet<string> = new Set(eventTypes);

export function isEventType(value: string): value is EventType {
  return eventTypeSet.has(value);
}

/** Event names that were renamed (2026-01-15), each with the name that replaced it. They are never emitted. */
export const renamedEventTypes: Readonly<Record<string, EventType>> = {
  DEPOSIT_TRANSACTION_INITIALIZED: 'BANK_DEPOSIT_TRANSACTION_PENDING',
  DEPOSIT_TRANSACTION_SUCCEEDED: 'BANK_DEPOSIT_TRANSACTION_COMPLETED',
  DEPOSIT_TRANSACTION_FAILED: 'BANK_DEPOSIT_TRANSACTION_FAILED',
  WITHDRAW_TRANSACTION_INITIALIZED: 'BANK_WITHDRAWAL_TRANSACTION_PENDING',
  WITHDRAW_TRANSACTION_SUCCEEDED: 'BANK_WITHDRAWAL_TRANSACTION_COMPLETED',
  WITHDRAW_TRANSACTION_FAILED: 'BANK_WITHDRAWAL_TRANSACTION_FAILED',
  VIRTUAL_INTERNAL_TRANSACTION_SUCCEEDED: 'INTERNAL_TRANSACTION_COMPLETED',
};

/** For a filter given a legacy event name: the message that names its replacement (undefined for any other value). */
export function renamedFilterMessage(type: unknown): string | undefined {
  const renamed = typeof type === 'string' ? renamedEventTypes[type] : undefined;
  return renamed === undefined ? undefined : `${String(type)} was renamed ${renamed}; filter by ${renamed}`;
}

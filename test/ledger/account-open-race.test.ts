import { describe, expect, it } from 'vitest';
import { isRetryableDatabaseError } from '../../src/platform/db/transaction.js';

// Transactions opening the same ledger account at once (two batches crediting a system account's
// shard of an asset never used before, say). The upsert resolves conflicts on (client_id, id);
// the table's other unique constraints can raise instead when the other transaction's row reached
// them first (seen once in a CI pre-check: trades.routes.test.ts, "twenty trades at once"). Such a
// transaction runs again (transaction.ts) and then takes the ON CONFLICT path. A concurrent test
// did not reproduce the race on this machine, so the rule itself is what is tested here.

describe('a unique violation while opening a ledger account', () => {
  it('on a constraint the upsert does not arbitrate is a reason to run the transaction again; others are not', () => {
    for (const constraint of ['ledger_accounts_client_id_id_asset_key', 'ledger_accounts_wallet_key', 'ledger_accounts_system_key']) {
      expect(isRetryableDatabaseError({ code: '23505', constraint })).toBe(true);
    }
    expect(isRetryableDatabaseError({ code: '23505', constraint: 'idempotency_keys_pkey' })).toBe(false);
    expect(isRetryableDatabaseError({ code: '23505' })).toBe(false);
    expect(isRetryableDatabaseError({ code: '23503', constraint: 'ledger_accounts_wallet_key' })).toBe(false);
    expect(isRetryableDatabaseError({ code: '40P01' })).toBe(true);
    expect(isRetryableDatabaseError({ code: '40001' })).toBe(true);
  });
});

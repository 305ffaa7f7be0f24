import { sql } from 'kysely';
import { withTransaction } from '../../src/platform/db/transaction.js';
import { createDebitCard, listCardPrograms } from '../../src/modules/cards/index.js';
import { withDeps, type Target } from './setup.js';

/** Issues one virtual card of `programName` on each of the client's wallets; returns the card ids. */
export async function issueProgramCards(target: Target, clientId: string, programName: string): Promise<string[]> {
  return withDeps(target, async (deps) => {
    // The seeded customers skipped KYC: approve them, as the compliance flow would.
    await sql`UPDATE customers SET onboarding_status = 'APPROVED' WHERE client_id = ${clientId}`.execute(deps.db);
    const program = (await listCardPrograms(deps.db, clientId)).find((candidate) => candidate.name === programName);
    if (!program) throw new Error(`the bench client has no ${programName} program`);
    const wallets = await sql<{ id: string; customer_id: string }>`SELECT id, customer_id FROM wallets WHERE client_id = ${clientId} ORDER BY id`.execute(deps.db);
    const cards: string[] = [];
    for (const wallet of wallets.rows) {
      const context = { clientId, traceId: 'bench-setup', now: deps.clock.now() };
      const created = await withTransaction(deps.db, (tx) =>
        createDebitCard(tx, context, deps, { customerId: wallet.customer_id, cardProgramId: program.id, walletId: wallet.id, isVirtual: true, isPrimary: false }),
      );
      cards.push(created.id);
    }
    return cards;
  });
}

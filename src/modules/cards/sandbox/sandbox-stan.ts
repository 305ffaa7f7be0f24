import type { Tx } from '../../../platform/db/transaction.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { retrievalReferenceNumber, type IsoMessage } from '../network/index.js';
import { newStan } from './sandbox-messages.js';

/**
 * A message the sandbox acquirer built, with a STAN (and the RRN made from it, when it was) that no
 * earlier message of the card has with that RRN: the processor takes a second message with the same
 * STAN and RRN for a repeat or a duplicate of the first, and answers it with the first's answer.
 * STANs are drawn at random and an RRN keeps only the hour, so without this check two messages of
 * one card within an hour collided about n²/2,000,000 times for n messages (found by an audit:
 * completions answered as an earlier lifecycle's, their own hold left open). The card is locked.
 */
export async function withUnusedStan(tx: Tx, context: RequestContext, cardId: string, message: IsoMessage): Promise<IsoMessage> {
  let fields = message.fields;
  for (let attempt = 0; attempt < 16; attempt += 1) {
    const stan = fields['11'] ?? '';
    const rrn = fields['37'] ?? '';
    const used = await tx
      .selectFrom('card_transactions')
      .select('id')
      .where('client_id', '=', context.clientId)
      .where('card_id', '=', cardId)
      .where('stan', '=', stan)
      .where('rrn', '=', rrn)
      .limit(1)
      .executeTakeFirst();
    if (used === undefined) break;
    const next = newStan();
    fields = { ...fields, '11': next, ...(rrn === retrievalReferenceNumber(context.now, stan) ? { '37': retrievalReferenceNumber(context.now, next) } : {}) };
  }
  return fields === message.fields ? message : { ...message, fields };
}

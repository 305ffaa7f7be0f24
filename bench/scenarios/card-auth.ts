import crypto from 'node:crypto';
import type { Scenario, ScenarioResult } from '../lib.js';
import { anchoredRounds, closedLoop, type Load, type LoadTally } from '../support/http-rounds.js';
import { recreateDatabase } from '../support/postgres.js';
import { buildOnce, startServer } from '../support/server.js';
import { seedWallets, targetEnv, withDeps, type Target } from '../support/setup.js';
import { benchEnv, describeMachine, durationS } from '../support/settings.js';
import { cardVaultOf, listCardPrograms } from '../../src/modules/cards/index.js';
import { issueProgramCards } from '../support/cards.js';
import { buildSandboxMessage, type CardOfMessage } from '../../src/modules/cards/sandbox/sandbox-messages.js';
import { newNetworkDataRef, toKeyedIsoMessage } from '../../src/modules/cards/network/index.js';
import { connections, createAnchorTables, transferAnchorScript, walletCount } from './transfers.js';

/**
 * Issue 18 item 8: 0100 authorizations each followed by its 0220 completion, sent to the
 * message-level endpoint (POST /v1/sandbox/iso8583), for cards spread over 10,000 funded wallets,
 * 32 connections, PostgreSQL; the anchor is the transfers scenario's pgbench script in the same
 * run. One unit is one message (an authorization: a hold, two records and an event; a completion:
 * a capture, two records and an event). Target: 0.5 of the anchor.
 */
const targetRatio = 0.5;
const authorizationMinor = 100n;

interface CardRef {
  card: CardOfMessage;
}

/** Issues one virtual Standard Debit card per wallet and returns what the network needs to address each. */
async function issueCards(target: Target, clientId: string): Promise<CardRef[]> {
  const ids = await issueProgramCards(target, clientId, 'Standard Debit');
  return withDeps(target, async (deps) => {
    const program = (await listCardPrograms(deps.db, clientId)).find((candidate) => candidate.name === 'Standard Debit');
    if (!program) throw new Error('the bench client has no Standard Debit program');
    const vault = cardVaultOf(deps);
    const cards: CardRef[] = [];
    for (const id of ids) {
      const row = await deps.db.selectFrom('cards').select(['pan_encrypted', 'expiry_month', 'expiry_year']).where('client_id', '=', clientId).where('id', '=', id).executeTakeFirstOrThrow();
      cards.push({ card: { pan: vault.decryptPan(row.pan_encrypted, clientId, id), expiry: { expiryMonth: row.expiry_month, expiryYear: row.expiry_year }, network: program.network } });
    }
    return cards;
  });
}

/** What one turn keeps between its two messages. */
interface CardTurn {
  card: CardOfMessage;
  reference: string;
  sentAt: number;
}

/** The ISO 8583 request of a turn's message, noting when it is sent. */
function messageRequest(turn: Partial<CardTurn>, mti: '0100' | '0220') {
  const { card, reference } = turn;
  if (!card || !reference) throw new Error('a card turn starts with its authorization');
  turn.sentAt = performance.now();
  const message = buildSandboxMessage(card, new Date(), { mti, processingCode: '000000', amountMinor: authorizationMinor, networkDataRef: reference });
  return { path: '/v1/sandbox/iso8583', body: { format: 'json', message: toKeyedIsoMessage(message) } };
}

/** Counts an approved message (201/200 with DE39 00) with its latency; anything else is a failure and ends the turn. */
function readApproval(what: string) {
  return (status: number, body: string, turn: Partial<CardTurn>, tally: LoadTally): boolean => {
    if (status !== 201 && status !== 200) {
      tally.fail(`${what} HTTP ${status}`);
      return false;
    }
    const code = (JSON.parse(body) as { data: { response: Record<string, string> } }).data.response['39'];
    if (code !== '00') {
      tally.fail(`${what} ${code}`);
      return false;
    }
    tally.done(performance.now() - (turn.sentAt ?? Number.NaN));
    return true;
  };
}

/** Closed loop: each turn authorizes 1.00 on a random card and completes it with a new RRN. */
function runLoad(serverUrl: string, apiKey: string, cards: readonly CardRef[], seconds: number, serverPid: number): Promise<Load> {
  return closedLoop<CardTurn>(serverUrl, apiKey, connections, seconds, serverPid, [
    {
      send: (turn) => {
        const target = cards[crypto.randomInt(cards.length)];
        if (!target) throw new Error('no cards to authorize');
        turn.card = target.card;
        turn.reference = newNetworkDataRef();
        return messageRequest(turn, '0100');
      },
      read: readApproval('0100'),
    },
    { send: (turn) => messageRequest(turn, '0220'), read: readApproval('0220') },
  ]);
}

async function runCardAuth(): Promise<ScenarioResult> {
  await buildOnce();
  const url = await recreateDatabase();
  await createAnchorTables(url);
  const target = { databaseUrl: url };
  const seeded = await seedWallets(target, walletCount, 1_000_000_00n);
  const cards = await issueCards(target, seeded.clientId);
  const server = await startServer({ ...benchEnv, ...targetEnv(target) });
  const measured = await anchoredRounds({
    target,
    url,
    server,
    anchorScript: transferAnchorScript,
    connections,
    load: (seconds) => runLoad(server.url, seeded.apiKey, cards, seconds, server.pid),
  });
  return {
    scenario: 'card-auth',
    ratio: measured.ratio,
    figures: { ...measured.figures, lifecycles_per_s: measured.ours / 2, messages: measured.figures.units ?? 0, cards: cards.length, target: targetRatio },
    extra: { machine: describeMachine(), anchorCommand: measured.anchorCommand, anchorScript: transferAnchorScript, connections, durationS, rounds: measured.rounds, walletCount, ledgerTotals: measured.ledgerTotals },
  };
}

export const cardAuth: Scenario = {
  name: 'card-auth',
  description: `0100 authorizations of 1.00, each followed by its 0220 completion, through POST /v1/sandbox/iso8583 for ${walletCount} cards on ${walletCount} funded wallets, ${connections} connections, PostgreSQL; unit: one message; anchor: the transfers scenario's pgbench script, ${connections} clients, measured in turn`,
  run: runCardAuth,
};

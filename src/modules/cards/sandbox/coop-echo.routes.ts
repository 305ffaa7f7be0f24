import { Type, type Static } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { Envelope, Text } from '../../../platform/http/envelope.js';
import { AppError, notFound } from '../../../platform/http/errors.js';
import { runPausableWrite } from '../../../platform/http/idempotency.js';
import { idAt } from '../../../platform/ids.js';
import { decisionEndpointOf, eventRecordOf, sendDecisionRequest, type DecisionEndpoint, type EventRecord } from '../../webhooks/index.js';
import { cardVaultOf } from '../card-vault.js';
import { findCard, type CardRow } from '../cards.service.js';
import { cardExpiryFor, generatePan, newNetworkDataRef } from '../network/index.js';
import { defaultCoopAuth, type CoopAuthSettings } from '../program-settings.js';
import { findCardProgram, listCardPrograms } from '../programs.js';
import { coopOutcome, readClientAnswer, verdictText, type ClientExchange } from '../processor/coop-answer.js';
import { coopEventData } from '../processor/coop-auth.js';
import { fundingSourceOf } from '../processor/funding-source.js';
import { readMessage } from '../processor/message-info.js';
import { amountMinorOf, buildSandboxMessage } from './sandbox-messages.js';

/** The sample card's `availableMinor` (1,000.00 in the program's currency): it has no wallet or line to read. */
const sampleAvailableMinor = 100_000n;

const EchoBody = Type.Object(
  {
    cardId: Type.Optional(Text.id({ description: 'a card of yours to take the number reference and program settings from; without it, a sample card of your first COOP_AUTH program' })),
    amount: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'major units, at most 2 decimals (default 10)', examples: [10] })),
    partialApprovalCapable: Type.Optional(Type.Boolean({ description: 'whether the sample terminal takes a partial approval (default true)' })),
  },
  { additionalProperties: false, examples: [{ amount: 12.5 }] },
);

const EchoResult = Type.Object(
  {
    webhookId: Type.String({ description: 'the subscription asked (the oldest active one that lists COOP_AUTH_0100)' }),
    url: Type.String(),
    timeoutMs: Type.Integer({ description: "the program's timeoutMs the request was sent with" }),
    request: Type.Object(
      { id: Type.String(), type: Type.Literal('COOP_AUTH_0100'), createdAt: Type.String({ format: 'date-time' }), data: Type.Record(Type.String(), Type.Unknown()) },
      { description: 'the body sent, signed like every decision request; data.echo is true (no card transaction exists for it)' },
    ),
    answer: Type.Object({
      httpStatus: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no answer arrived in time' }),
      latencyMs: Type.Integer(),
      body: Type.Union([Type.String(), Type.Null()], { description: 'the start of the answer (2000 characters at most)' }),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
    outcome: Type.Object(
      {
        decisionSource: Type.Union([Type.Literal('CLIENT'), Type.Literal('STAND_IN')]),
        responseCode: Type.String({ description: 'DE39 the network would have been answered' }),
        approvedAmountMinor: Type.Integer(),
        standInReason: Type.Union([Type.String(), Type.Null()], { description: 'why the stand-in rule would have decided' }),
        detail: Type.Union([Type.String(), Type.Null()]),
        verdict: Type.String({ description: 'as the delivery log shows it' }),
      },
      { description: 'what the system would have done with this answer for a real authorization of this amount' },
    ),
  },
  { title: 'CoopAuthEchoResult' },
);

interface EchoRequest {
  endpoint: DecisionEndpoint;
  event: EventRecord;
  settings: CoopAuthSettings;
  amountMinor: bigint;
  partialApprovalCapable: boolean;
}

const echoBodyMaxChars = 2000;

/**
 * POST /v1/sandbox/coop-auth/echo (contract §12.5): the integrator's test of a decision endpoint.
 * It sends a sample COOP_AUTH_0100, signed like the real ones, and answers what came back, how
 * long it took and what the processor would have done with it. Nothing is reserved or recorded.
 */
export function registerSandboxCoopEchoRoutes(app: App, deps: Deps): void {
  app.post(
    '/v1/sandbox/coop-auth/echo',
    {
      schema: {
        operationId: 'sandbox.echoCoopAuth',
        tags: ['Sandbox'],
        summary: 'Send a sample cooperative decision request to your endpoint',
        description:
          'Sends a sample COOP_AUTH_0100 (data.echo true) to the active subscription that lists COOP_AUTH_0100, with the program\'s timeoutMs, ' +
          'and answers what it returned, its latency and what the processor would have decided: your code, a partial approval, or the ' +
          'stand-in and why. No money moves and no record or event is written. 409 COOP_AUTH_ENDPOINT_MISSING without such a subscription; 422 ' +
          'CARD_PROGRAM_MISMATCH for a card of a STANDARD program.',
        body: EchoBody,
        response: { 200: Envelope(EchoResult) },
      },
    },
    async (request, reply) =>
      runPausableWrite<Static<typeof EchoResult>, EchoRequest>(request, reply, deps, {
        work: async (tx, context) => {
          const body = request.body;
          const amountMinor = amountMinorOf(body.amount ?? 10);
          let sample: { id: string | null; reference: string; pan: string; expiry: { expiryMonth: number; expiryYear: number }; programId: string; card?: CardRow };
          if (body.cardId !== undefined) {
            const card = await findCard(tx, context.clientId, body.cardId);
            if (!card) throw notFound('Card', 'cardId');
            const pan = cardVaultOf(deps).decryptPan(card.pan_encrypted, context.clientId, card.id);
            sample = { id: card.id, reference: card.reference_number, pan, expiry: { expiryMonth: card.expiry_month, expiryYear: card.expiry_year }, programId: card.card_program_id, card };
          } else {
            const programs = await listCardPrograms(tx, context.clientId);
            const program = programs.find((candidate) => candidate.card_transaction_handler === 'COOP_AUTH') ?? programs[0];
            if (!program) throw notFound('Card program');
            sample = { id: null, reference: 'SAMPLE', pan: generatePan(program.bin), expiry: cardExpiryFor(context.now), programId: program.id };
          }
          const program = await findCardProgram(tx, context.clientId, sample.programId);
          if (!program) throw notFound('Card program');
          // A STANDARD card's authorizations are decided by the system: nobody is asked, so a sample
          // "what the processor would have done" with it would be made up (carried from an audit).
          if (body.cardId !== undefined && program.card_transaction_handler !== 'COOP_AUTH') {
            throw new AppError('CARD_PROGRAM_MISMATCH', `The card's program "${program.name}" is ${program.card_transaction_handler}: its authorizations are decided without asking you. Name a card of a COOP_AUTH program, or none for a sample card.`, {
              details: [{ field: 'cardId', message: 'not a card of a COOP_AUTH program' }],
            });
          }
          const endpoint = await decisionEndpointOf(tx, deps, context.clientId, 'COOP_AUTH_0100', context.now);
          if (!endpoint) throw new AppError('COOP_AUTH_ENDPOINT_MISSING', 'No active webhook subscription lists COOP_AUTH_0100: create one (POST /v1/webhooks) to receive decision requests.');
          const partialApprovalCapable = body.partialApprovalCapable ?? true;
          const message = buildSandboxMessage({ pan: sample.pan, expiry: sample.expiry, network: program.network }, context.now, {
            mti: '0100',
            processingCode: '000000',
            amountMinor,
            networkDataRef: newNetworkDataRef(),
            partialApprovalCapable,
          });
          const data = coopEventData({
            message,
            info: readMessage(message, context.now),
            cardId: sample.id,
            cardReferenceId: sample.reference,
            cardTransactionId: idAt(context.now),
            parentCardTransactionId: idAt(context.now),
            // What a real request carries: the card's spendable funds (its wallet's AVAILABLE, or its
            // line's available credit); the sample card has none, so a sample figure. Until
            // 2026-12-07 the field was left out, though the checklist says to decide from it
            // (found by an audit).
            availableMinor: sample.card === undefined ? sampleAvailableMinor : await fundingSourceOf(sample.card, program.currency, context).available(tx),
            original: null,
          });
          const event = eventRecordOf(context, 'COOP_AUTH_0100', { ...data, echo: true });
          return { paused: { endpoint, event, settings: program.coop_auth ?? defaultCoopAuth, amountMinor, partialApprovalCapable } };
        },
        wait: (echo) => sendDecisionRequest(deps, echo.endpoint, echo.event, echo.settings.timeoutMs, () => undefined),
        finish: async (_tx, _context, echo, waited) => {
          const exchange = waited as ClientExchange;
          const verdict = readClientAnswer(exchange, echo.amountMinor);
          const decided = coopOutcome(verdict, echo.settings, echo.amountMinor, echo.partialApprovalCapable);
          const outcome: Static<typeof EchoResult>['outcome'] = {
            decisionSource: decided.source,
            responseCode: decided.responseCode,
            approvedAmountMinor: Number(decided.approvedMinor),
            standInReason: verdict.kind === 'STAND_IN' ? verdict.reason : null,
            detail: verdict.kind === 'STAND_IN' ? verdict.detail : decided.partialNotAllowed ? 'a partial approval the program or the terminal does not allow' : null,
            verdict: verdictText(verdict, decided.responseCode),
          };
          return {
            message: 'Sample decision request sent',
            data: {
              webhookId: echo.endpoint.subscriptionId,
              url: echo.endpoint.url,
              timeoutMs: echo.settings.timeoutMs,
              request: { id: echo.event.id, type: 'COOP_AUTH_0100', createdAt: echo.event.createdAt, data: echo.event.data },
              answer: { httpStatus: exchange.httpStatus, latencyMs: exchange.latencyMs, body: exchange.responseBody?.slice(0, echoBodyMaxChars) ?? null, error: exchange.error },
              outcome,
            },
          };
        },
      }),
  );
}

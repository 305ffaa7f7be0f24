import { Type } from 'typebox';
import type { App } from '../../../platform/http/app-type.js';
import type { Deps } from '../../../platform/deps.js';
import { noteClockOffset } from '../../../platform/client-clock.js';
import { authOf } from '../../../platform/http/context.js';
import { Envelope, ListEnvelope, Text } from '../../../platform/http/envelope.js';
import { AppError } from '../../../platform/http/errors.js';
import { idempotencyKeyOf, runWrite } from '../../../platform/http/idempotency.js';
import { listQueryProperties, paginate } from '../../../platform/http/pagination.js';
import { flushRequestLog } from '../../traces/index.js';
import { resetKeptTables } from './client-tables.js';
import * as service from './state.service.js';

const tags = ['Sandbox'];
const exampleId = '019ca945-0a00-74c1-8797-3bfde107f365';
const exampleTime = '2026-03-01T12:00:00.000Z';

const RowCountsSchema = Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
  description: 'rows per table of the client, by table name',
  examples: [{ customers: 3, wallets: 3, events: 12 }],
});

const ResetSchema = Type.Object(
  {
    deleted: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'rows deleted per table (every table of the client\'s state that a reset empties, zero counts included)',
      examples: [{ customers: 3, events: 12, wallets: 3 }],
    }),
    kept: Type.Array(Type.String(), { description: 'the tables of client configuration the reset kept', examples: [[...resetKeptTables]] }),
  },
  { title: 'SandboxReset' },
);

const SnapshotSchema = Type.Object(
  {
    id: Type.String({ examples: [exampleId] }),
    name: Type.String({ examples: ['before the month-end run'] }),
    createdAt: Type.String({ format: 'date-time', examples: [exampleTime], description: 'by the client\'s clock' }),
    clockOffsetSeconds: Type.Number({ minimum: 0, description: 'the client\'s clock offset when the snapshot was taken; a restore sets it back' }),
    rowCounts: RowCountsSchema,
    sizeBytes: Type.Integer({ minimum: 0, description: 'the stored size of the saved rows' }),
  },
  { title: 'SandboxSnapshot' },
);

const RestoreSchema = Type.Object(
  {
    snapshot: SnapshotSchema,
    deleted: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'rows of the state before the restore deleted, per table' }),
    restored: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'rows written back from the snapshot, per table' }),
    cancelledDeliveries: Type.Integer({
      minimum: 0,
      description: 'restored PENDING webhook deliveries marked CANCELLED (0 with resendPendingDeliveries: true)',
    }),
    clockOffsetSeconds: Type.Number({ minimum: 0, description: 'the client\'s clock offset after the restore (the saved one)' }),
  },
  { title: 'SandboxRestore' },
);

const ResetBody = Type.Object(
  {
    confirm: Type.String({ maxLength: 100, description: `must be exactly "${service.resetConfirmation}": a reset deletes the client's data` }),
  },
  { additionalProperties: false, examples: [{ confirm: service.resetConfirmation }] },
);

const SnapshotBody = Type.Object(
  { name: Text.short({ description: 'a name for people (1 to 100 characters, not only white space); names need not be unique' }) },
  { additionalProperties: false, examples: [{ name: 'three funded customers' }] },
);

const RestoreBody = Type.Object(
  {
    resendPendingDeliveries: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'false (default): the restored PENDING webhook deliveries are marked CANCELLED; true: they stay PENDING and are sent (again)',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ resendPendingDeliveries: false }] },
);

const SnapshotParams = Type.Object({ snapshotId: Text.id() });

/**
 * Sandbox reset and snapshots (registered only in sandbox mode): empty the client's data, or save
 * it and put it back later.
 */
export function registerSandboxStateRoutes(app: App, deps: Deps): void {
  app.post(
    '/v1/sandbox/reset',
    {
      schema: {
        operationId: 'sandbox.reset',
        tags,
        summary: 'Delete all of the client\'s data (sandbox)',
        description:
          'Deletes, in one transaction, every record the calling client owns: customers, wallets, ledger, bank transfers, counterparties, ' +
          'onboardings and documents, events, webhook subscriptions and deliveries, idempotency keys (not those of the snapshot routes), timers. ' +
          'It keeps the client\'s API keys, ' +
          `its configuration (${resetKeptTables.join(', ')}), its snapshots and its clock. Other clients are untouched. ` +
          `The body must be { "confirm": "${service.resetConfirmation}" } (400 SANDBOX_RESET_NOT_CONFIRMED otherwise).`,
        body: ResetBody,
        response: { 200: Envelope(ResetSchema) },
      },
    },
    async (request, reply) => {
      if (request.body.confirm !== service.resetConfirmation) {
        throw new AppError('SANDBOX_RESET_NOT_CONFIRMED', `A reset deletes all of the client's data: send { "confirm": "${service.resetConfirmation}" } to confirm it.`, {
          details: [{ field: 'confirm', message: `must be exactly "${service.resetConfirmation}"` }],
        });
      }
      // The request log of the requests answered so far is part of what the reset deletes.
      await flushRequestLog(app);
      await runWrite(request, reply, deps, async (tx, context) => {
        const data = await service.resetClientState(tx, context, deps);
        const total = Object.values(data.deleted).reduce((sum, count) => sum + count, 0);
        return { message: `Sandbox reset: ${total} record(s) deleted`, data };
      }, { clientFence: 'exclusive' });
    },
  );

  app.post(
    '/v1/sandbox/snapshots',
    {
      schema: {
        operationId: 'sandbox.createSnapshot',
        tags,
        summary: 'Save the client\'s data as a snapshot (sandbox)',
        description:
          'Saves every record the calling client owns (its configuration included; its API keys excepted) and its clock offset, as one ' +
          `consistent picture. A client keeps at most ${service.snapshotsPerClientMax} snapshots (422 SANDBOX_SNAPSHOT_LIMIT_REACHED beyond); ` +
          'a reset keeps them.',
        body: SnapshotBody,
        response: { 201: Envelope(SnapshotSchema) },
      },
    },
    async (request, reply) => {
      // The request log of the requests answered so far is part of what the snapshot saves.
      await flushRequestLog(app);
      return runWrite(request, reply, deps, async (tx, context) => ({
        statusCode: 201,
        message: 'Snapshot saved',
        data: await service.createSnapshot(tx, context, deps, request.body.name),
      }));
    },
  );

  app.get(
    '/v1/sandbox/snapshots',
    {
      schema: {
        operationId: 'sandbox.listSnapshots',
        tags,
        summary: 'List the client\'s snapshots, newest first (sandbox)',
        querystring: Type.Object(listQueryProperties, { additionalProperties: false }),
        response: { 200: ListEnvelope(SnapshotSchema) },
      },
    },
    async (request) => {
      const { clientId } = authOf(request);
      const { rows, pagination } = await paginate(deps.db, service.snapshotsQuery(deps.db, clientId), request.query, { id: 'id', createdAt: 'created_at' });
      return { message: 'Snapshots retrieved', data: rows.map(service.snapshotView), pagination, traceId: String(request.id) };
    },
  );

  app.get(
    '/v1/sandbox/snapshots/:snapshotId',
    {
      schema: {
        operationId: 'sandbox.getSnapshot',
        tags,
        summary: 'Retrieve a snapshot (sandbox)',
        params: SnapshotParams,
        response: { 200: Envelope(SnapshotSchema) },
      },
    },
    async (request) => ({
      message: 'Snapshot retrieved',
      data: await service.getSnapshot(deps.db, authOf(request).clientId, request.params.snapshotId),
      traceId: String(request.id),
    }),
  );

  app.post(
    '/v1/sandbox/snapshots/:snapshotId/restore',
    {
      schema: {
        operationId: 'sandbox.restoreSnapshot',
        tags,
        summary: 'Put the client\'s data back as it was in a snapshot (sandbox)',
        description:
          'In one transaction: deletes every record the calling client owns (configuration included; API keys and snapshots excepted), writes ' +
          'the snapshot\'s records back with their ids, and sets the client\'s clock offset back to the saved one. Every read then answers ' +
          'as it did when the snapshot was taken, with one exception: webhook deliveries that were PENDING are marked CANCELLED, so the ' +
          'receiver does not get them twice, unless resendPendingDeliveries is true. The Idempotency-Keys of the snapshot routes (create, ' +
          'delete, restore) are kept as they are. The snapshot itself is kept and can be restored again. ' +
          'The client\'s writes sent while a restore runs wait for it and then run on the restored data (a card message whose card it ' +
          'replaced answers 404); its reads see the data before it until it commits.',
        params: SnapshotParams,
        body: RestoreBody,
        response: { 200: Envelope(RestoreSchema) },
      },
    },
    async (request, reply) => {
      let restoredOffsetMs: number | undefined;
      // The request log of the requests answered so far is replaced like the rest.
      await flushRequestLog(app);
      await runWrite(request, reply, deps, async (tx, context) => {
        const data = await service.restoreSnapshot(tx, context, deps, request.params.snapshotId, {
          resendPendingDeliveries: request.body?.resendPendingDeliveries ?? false,
          requestIdempotencyKey: idempotencyKeyOf(request),
        });
        restoredOffsetMs = data.clockOffsetSeconds * 1000;
        return { message: `Snapshot ${data.snapshot.name} restored`, data };
      }, { clientFence: 'exclusive' });
      // Committed: this process answers the client's next requests with the restored clock at once.
      if (restoredOffsetMs !== undefined) noteClockOffset(deps, authOf(request).clientId, restoredOffsetMs);
    },
  );

  app.delete(
    '/v1/sandbox/snapshots/:snapshotId',
    {
      schema: {
        operationId: 'sandbox.deleteSnapshot',
        tags,
        summary: 'Delete a snapshot (sandbox)',
        params: SnapshotParams,
        response: { 200: Envelope(SnapshotSchema) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, deps, async (tx, context) => ({
        message: 'Snapshot deleted',
        data: await service.deleteSnapshot(tx, context, request.params.snapshotId),
      })),
  );
}

import client from 'prom-client';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';

export type Metrics = ReturnType<typeof createMetrics>;

/** One registry per app instance, so tests that build several apps do not share counters. */
export function createMetrics(pool: pg.Pool) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requestDuration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route, method and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new client.Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  const writeBatches = new client.Counter({
    name: 'openbaas_write_batches_total',
    help:
      'Batched write transactions by route, way (unchecked: one round trip that reads nothing, checked: locks and reads first) ' +
      'and result (committed, or retried the checked way)',
    labelNames: ['route', 'path', 'result'] as const,
    registers: [registry],
  });
  const transactionGroups = new client.Histogram({
    name: 'openbaas_transaction_group_members',
    help:
      'Writes that shared one database transaction (transaction groups, e.g. card messages), by group and result ' +
      '(committed, or failed: every member then ran again alone); groups of one are not counted',
    labelNames: ['group', 'result'] as const,
    buckets: [2, 4, 8, 16, 32, 64, 128],
    registers: [registry],
  });
  const transactionGroupDeferred = new client.Counter({
    name: 'openbaas_transaction_group_deferred_total',
    help: 'Members of a transaction group that left it for a later group because another member, or another group in flight, claimed the same card or wallet',
    labelNames: ['group'] as const,
    registers: [registry],
  });
  const coopDecisionDuration = new client.Histogram({
    name: 'openbaas_coop_auth_decision_seconds',
    help: 'Cooperative authorization: time from sending a decision request to its answer (or the timeout), by who decided (CLIENT or STAND_IN)',
    labelNames: ['source'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4],
    registers: [registry],
  });
  const coopStandIns = new client.Counter({
    name: 'openbaas_coop_auth_stand_ins_total',
    help: 'Cooperative authorization decisions taken by the stand-in rule, by reason (TIMEOUT, NON_2XX, BAD_BODY, UNREACHABLE, NO_ENDPOINT, LIFECYCLE_CLOSED)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  return {
    registry,
    /** One cooperative decision request: its latency (null when nothing was sent) and, for a stand-in, why. */
    coopDecision(latencyMs: number | null, standInReason: string | null) {
      if (latencyMs !== null) coopDecisionDuration.observe({ source: standInReason === null ? 'CLIENT' : 'STAND_IN' }, latencyMs / 1000);
      if (standInReason !== null) coopStandIns.inc({ reason: standInReason });
    },
    /** One transaction group (see TransactionGroups' observe); the size histogram counts groups of two or more. */
    transactionGroup(group: string, members: number, committed: boolean, deferred: number) {
      if (members > 1) transactionGroups.observe({ group, result: committed ? 'committed' : 'failed' }, members);
      if (deferred > 0) transactionGroupDeferred.inc({ group }, deferred);
    },
    /** Counts one batched write of `route` (see WriteBatcherOptions.observe). */
    writeBatch(route: string, path: 'unchecked' | 'checked', committed: boolean) {
      writeBatches.inc({ route, path, result: committed ? 'committed' : 'retried' });
    },
    observe(request: FastifyRequest, reply: FastifyReply) {
      requestDuration.observe(
        { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    },
  };
}

import crypto from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import type { DatabaseHandle } from './database.js';
import { onceOnNextTurn } from '../next-turn.js';
import { isCommitOutcomeUnknown, withPipelinedTransaction } from './pipelined-transaction.js';
import { isRetryableDatabaseError, sqlStateOf, withTransaction, type Tx } from './transaction.js';
import { WriteStatement } from './write-statement.js';

/**
 * Writes that arrive together share one database transaction (group commit), each still running
 * its own code: the card processor's messages, whose paths read, decide and write in many steps
 * that cannot all be planned ahead as the write batcher's (write-batcher.ts) are.
 *
 * The members of a group run at once on one pipelined transaction (pipelined-transaction.ts):
 * the statements the members issue in the same turn of the event loop leave in one write and the
 * database runs them one after the other, so a group of n members costs about as many round trips
 * as its longest member, and one commit. A member must therefore keep to what it would do in a
 * transaction of its own, and two rules keep members from seeing each other's half-done work:
 *
 * - a member names, before it writes anything, the rows it is about to work on (`claimInGroup`:
 *   its card, its wallet); a member naming what another member of its group, or another group in
 *   flight, already named leaves its group (what it read or locked stays harmlessly in the
 *   transaction) and runs again in a later group, once the group holding the name has ended. A
 *   lock wait would stall the whole group, whose statements run one after the other;
 * - members with the same key given up front (an Idempotency-Key) never share a group.
 *
 * When a member fails (an error, or PostgreSQL refusing a statement, which aborts the whole
 * transaction), nothing commits: the others run again together as a new group (one transaction,
 * not one each, in the lane's turn), then the member that failed runs again in a transaction of
 * its own and gets the answer it would have got alone, so one bad request cannot fail its
 * neighbours nor hold the lane for a transaction per neighbour. The member that failed is the one
 * whose error is its own: a statement that PostgreSQL refused aborts the transaction, and the
 * statements of others sent after it fail with "current transaction is aborted" (25P02). A
 * group of one is a transaction of its own (its claims still count for the other groups). Every
 * system account shard a group touches is the same (`transactionShard`), so a group locks one shard per
 * account, as a single transaction does.
 *
 * Writes written together: a member's last write, when it is rows of kinds only (WriteStatement's
 * `mergeable`), may be left to the group (`deferToGroup`) instead of sent. Once every member has
 * finished, the group merges what its members left into one statement (WriteStatement.merge: one
 * part per table for all of them) and sends it with its COMMIT, so the database prepares each
 * table's constraints, starts each insert and fires its statement triggers once per group rather
 * than once per member. Members claim what they write, so no two of them write one row, except
 * the system account shard they share, whose additions the merge sums. If the merged statement
 * fails, nothing commits and the group runs again in halves, each a group of its own, halved
 * again while it fails (no one member's failure to leave out), down to members alone.
 *
 * Overlap (`overlapCommit`, PostgreSQL only): once a group's members have all finished, the next
 * group may start while this one sends its merged write and COMMIT: the server works on the next
 * members while the database writes the last ones. Only the groups still at work count toward
 * `concurrency`; a group whose merged write failed on a deadlock or a serialization failure is at
 * work again while its members run again. The claims of the committing group hold until it has
 * ended, as for any group in flight.
 *
 * Lanes: writes of one kind whose parts must not queue behind each other (the second transactions
 * of cooperative card decisions behind new messages) take instances of their own that share one
 * GroupsInFlight: the claims of every lane's groups in flight count for all of them, and they take
 * system account shards in one turn, so no lane waits in the database for another's locks.
 */
export class TransactionGroups {
  private readonly queue: Member[] = [];
  private running = 0;
  /** Starts groups once the requests of this turn of the event loop have queued. */
  private readonly scheduleStart = onceOnNextTurn(() => this.start());

  /** The claims of the groups in flight and the turn of shards, shared with other instances given the same. */
  private readonly shared: GroupsInFlight;

  constructor(
    private readonly database: Pick<DatabaseHandle, 'db' | 'pool' | 'kind'>,
    private readonly options: {
      /** Most members in one group (1 turns grouping off). */
      sizeMax: number;
      /** Most groups in flight at once, each on a connection of its own. */
      concurrency: number;
      /**
       * Counts toward `concurrency` only the groups whose members are still at work: a group
       * sending its merged write and COMMIT leaves room for the next group's reads (at most
       * twice `concurrency` groups in flight).
       */
      overlapCommit?: boolean;
      /**
       * Shared with the other TransactionGroups working on the same rows (lanes of one kind of
       * write): a member claiming what a group of another lane holds leaves its group as it would
       * for one of its own lane's, and the lanes take system account shards in one turn. Absent:
       * this instance's own.
       */
      inFlight?: GroupsInFlight;
      /**
       * Told of every group: how many members it had, whether it committed (else, with two or
       * more, they ran again: the rest as a new group, told of in turn, and the failing member
       * alone; or, when the merged write failed, in two halves, each a group told of in turn) and
       * how many of them left it for a later group (a claim).
       */
      observe?: (members: number, committed: boolean, deferred: number) => void;
    },
  ) {
    this.shared = options.inFlight ?? new GroupsInFlight();
    this.overlaps = options.overlapCommit === true && database.kind === 'postgres';
  }

  /**
   * Runs `work` in a transaction, shared with the other members of its group. `work` may run more
   * than once (as in `withTransaction`): it must have no effect outside the transaction. `keys`
   * are what two members of one group must not share.
   */
  run<T>(keys: readonly string[], work: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ keys, work, resolve: resolve as (value: unknown) => void, reject });
      this.scheduleStart();
    });
  }

  /** Groups whose members are still at work (not yet sending the merged write and COMMIT). */
  private working = 0;

  /** Whether a group sending its merged write and COMMIT leaves room for the next (overlapCommit, PostgreSQL only). */
  private readonly overlaps: boolean;

  private hasRoom(): boolean {
    const { concurrency } = this.options;
    return this.overlaps ? this.working < concurrency && this.running < 2 * concurrency : this.running < concurrency;
  }

  private start(): void {
    while (this.hasRoom() && this.queue.length > 0) {
      const members = this.take();
      this.running++;
      let working = false;
      // Called when an attempt of the group starts its members' work: a group that ran again
      // (a deadlock or a serialization failure rolled back its merged write) counts as at work
      // again, so the next group does not start beside its second attempt's members.
      const atWork = () => {
        if (working) return;
        working = true;
        this.working++;
      };
      const doneWorking = () => {
        if (!working) return;
        working = false;
        this.working--;
        if (this.overlaps) this.start();
      };
      atWork();
      void this.runGroup(members, { atWork, doneWorking }).finally(() => {
        doneWorking();
        this.running--;
        this.start();
      });
    }
  }

  /** The queue's first members whose keys do not repeat, in order; the others keep their place. */
  private take(): Member[] {
    const taken: Member[] = [];
    const keys = new Set<string>();
    for (let index = 0; index < this.queue.length && taken.length < this.options.sizeMax; ) {
      const member = this.queue[index] as Member;
      if (member.keys.some((key) => keys.has(key))) {
        index++;
        continue;
      }
      member.keys.forEach((key) => keys.add(key));
      taken.push(member);
      this.queue.splice(index, 1);
    }
    return taken;
  }

  private async runGroup(members: Member[], working: AtWork): Promise<void> {
    // A group of one runs the same way: its claims keep the other groups from waiting on its locks.
    let settled: PromiseSettledResult<unknown>[];
    // The group of this run's current attempt (a deadlock runs the whole group again): its claims
    // count for the other groups until it has ended.
    const attempts: Group[] = [];
    try {
      settled = await this.transaction(async (tx) => {
        // A new attempt (the last one rolled back on a deadlock): the last one's claims are free again.
        this.release(attempts.splice(0));
        working.atWork();
        let end = () => {};
        const ended = new Promise<void>((resolve) => (end = resolve));
        const lockTurn: LockTurn = { mayAsk: new Set(members), waiting: [] };
        const group: Group = { held: this.shared.held, claims: new Map(), shard: this.shared.takeShard(), ended, end, deferred: [], lockTurn };
        attempts.push(group);
        const outcomes = await Promise.allSettled(
          members.map(async (member) => {
            try {
              return await member.work(memberHandle(tx, group, member));
            } finally {
              // A member that has finished (or left) holds up no one's ordered locks.
              lockTurn.mayAsk.delete(member);
              releaseLockTurn(lockTurn);
            }
          }),
        );
        const failed = failedMember(members, outcomes);
        // A deadlock or a serialization failure aborted the whole transaction, not one member's
        // work: thrown as it is, it runs the whole group again, as withTransaction runs a
        // transaction again (until 2026-12-07 it was wrapped without its SQLSTATE, so a group of
        // one answered the deadlock as its error, a 500; found by a money audit).
        if (failed && isRetryableDatabaseError(failed.reason)) throw failed.reason;
        if (failed) throw new GroupFailed(failed.reason, failed.member);
        // A member that left a write and then left the group (a claim after writing) would lose it.
        const leftAfterWriting = group.deferred.find(({ member }) => outcomes[members.indexOf(member)]?.status !== 'fulfilled');
        if (leftAfterWriting) throw new GroupFailed(new Error('a member left its transaction group after leaving it a write'));
        const last = group.deferred.length === 0 ? undefined : WriteStatement.merge(group.deferred.map(({ write }) => write));
        working.doneWorking();
        return { result: outcomes, last };
      });
    } catch (error) {
      this.release(attempts);
      this.options.observe?.(members.length, false, 0);
      if (members.length === 1 || isCommitOutcomeUnknown(error)) {
        // Alone already, or nobody knows whether the group committed (doing the work again could
        // do it twice): the error is the answer.
        for (const member of members) member.reject(error instanceof GroupFailed ? error.reason : error);
        return;
      }
      const culprit = error instanceof GroupFailed ? error.member : undefined;
      if (culprit !== undefined) {
        // Nothing committed. The others run again as one group in this one's turn (it may fail
        // again: then another member is left out), then the member that failed runs alone for its
        // own answer: one connection at a time, as one group takes.
        await this.runGroup(members.filter((member) => member !== culprit), working);
        await this.runAlone(culprit);
        return;
      }
      // Nothing committed, and no one member failed: the merged write did, on one member's rows or
      // on what the members' rows add up to. The group runs again as two halves, one after the
      // other in this one's turn, each a group of its own; a half that fails again is halved
      // again, down to members alone, whose error is their own answer. One bad row costs about
      // 2·log2(n) transactions rather than n, all on one connection at a time, as one group takes.
      const half = Math.ceil(members.length / 2);
      await this.runGroup(members.slice(0, half), working);
      await this.runGroup(members.slice(half), working);
      return;
    }
    this.release(attempts);
    // No member finished, each having left for what another member of this group had claimed (one
    // claimed a card and then needed a key another had claimed first, which needed the card). Run
    // again together they would leave again, for ever: until 2026-12-03 such members (cooperative
    // decisions answered at once on one card) went round without end and their requests were never
    // answered (found by the cooperative model test). The first now runs alone, in a transaction of
    // its own (its row locks decide there), and the others queue again once it has.
    const own = attempts.at(-1)?.ended;
    const first = members[0] as Member;
    const cycle = settled.every((outcome) => outcome.status === 'rejected' && (outcome.reason as GroupConflict).after === own);
    const alone = cycle ? this.runAlone(first) : undefined;
    let deferred = 0;
    settled.forEach((outcome, index) => {
      const member = members[index] as Member;
      if (outcome.status === 'fulfilled') {
        member.resolve(outcome.value);
        return;
      }
      deferred++;
      if (alone !== undefined && member === first) return;
      // A row it needed was locked by a transaction outside this process's groups: it runs alone
      // once this group has ended, and waits for that lock there, holding nothing else.
      if (outcome.reason instanceof LockedElsewhere) {
        void (alone ?? Promise.resolve()).then(() => this.runAlone(member));
        return;
      }
      // Once the group that holds what it claimed has ended (this one has), ahead of what queued meanwhile.
      const after = (outcome.reason as GroupConflict).after;
      void (alone === undefined ? after : Promise.all([after, alone])).then(() => {
        this.queue.unshift(member);
        this.scheduleStart();
      });
    });
    this.options.observe?.(members.length, true, deferred);
    await alone;
  }

  /** Ends the groups of a run: their claims are free again and the members waiting for them may go. */
  private release(attempts: readonly Group[]): void {
    for (const group of attempts) {
      for (const key of group.claims.keys()) if (group.held.get(key) === group) group.held.delete(key);
      group.end();
    }
  }

  private async runAlone(member: Member): Promise<void> {
    try {
      member.resolve(await withTransaction(this.database.db, member.work));
    } catch (error) {
      member.reject(error);
    }
  }

  /** Runs `work` in a transaction; its `last` statement is sent last, with the COMMIT where the connection pipelines. */
  private transaction<T>(work: (tx: Tx) => Promise<{ result: T; last: WriteStatement | undefined }>): Promise<T> {
    if (this.database.kind === 'postgres') {
      // Generic plans, as for the batched writes: the members' prepared statements are planned
      // once per connection (and again as their runs grow, prepared-statements.ts) instead of for
      // every message; the ledger's would otherwise be planned for each run, their arrays' lengths
      // making a custom plan look cheaper. Their plans are held to index lookups by their tests
      // (processor-plans.test.ts, ledger-plans.test.ts).
      return withPipelinedTransaction(this.database.pool, async (tx) => {
        const { result, last } = await work(tx);
        return { result, last: last?.compile(tx) };
      });
    }
    // The embedded database has one connection and no pipelining: the members' statements take turns.
    return withTransaction(this.database.db, async (tx) => {
      const { result, last } = await work(tx);
      await last?.execute(tx);
      return result;
    });
  }
}

/**
 * What the groups in flight of one or more TransactionGroups (lanes of one kind of write) share:
 * what they claimed, and the turn in which they take system account shards.
 */
export class GroupsInFlight {
  /** What the groups in flight claimed, by key. */
  readonly held = new Map<string, Group>();

  /**
   * The shard number of the next group. Consecutive groups take consecutive numbers (from a random
   * start, so that processes differ): the groups in flight of the lanes sharing it, fewer than any
   * shard count, never share a system account's shard and so never wait for each other's lock on it. At
   * random, two groups in flight met on one of the ledger's 16 shards once in 16.
   */
  private nextShard = crypto.randomInt(groupShardRange);

  takeShard(): number {
    const shard = this.nextShard;
    this.nextShard = (shard + 1) % groupShardRange;
    return shard;
  }
}

/** A group's count among the groups at work: `atWork` as each attempt's members start, `doneWorking` once they have all finished. */
interface AtWork {
  atWork: () => void;
  doneWorking: () => void;
}

interface Member {
  keys: readonly string[];
  work: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface Group {
  /** What the groups in flight of its TransactionGroups (and of the lanes sharing their GroupsInFlight) claimed, by key. */
  held: Map<string, Group>;
  /** What each claimed key's member is. */
  claims: Map<string, Member>;
  shard: number;
  /** Settles once the group has ended (committed or rolled back); `end` settles it. */
  ended: Promise<void>;
  end: () => void;
  /** The writes members left to the group (deferToGroup), in the order they left them. */
  deferred: { member: Member; write: WriteStatement }[];
  /** The members' ordered locks (`inGroupLockOrder`): who may still ask, and the statements waiting. */
  lockTurn: LockTurn;
}

/**
 * The members of a group that lock rows other transactions lock too (wallet accounts) wait here
 * until every other member has come, finished or passed, and their statements then leave in one
 * turn, in the rows' lock order.
 */
interface LockTurn {
  /** The members that may still ask (inGroupLockOrder): not finished, not waiting, not passed (passLockTurn). */
  mayAsk: Set<Member>;
  waiting: { order: string; send: () => void }[];
}

/** Sends the waiting statements, in lock order, once no member could still add one. */
function releaseLockTurn(turn: LockTurn): void {
  if (turn.mayAsk.size > 0 || turn.waiting.length === 0) return;
  const waiting = turn.waiting.splice(0).sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  for (const { send } of waiting) send();
}

/**
 * Each member works through a handle of its own on the shared transaction (the same connection,
 * another Kysely instance), so a claim or a shard question knows whose it is by the handle alone.
 * (AsyncLocalStorage would know it too, but using it turns on Node's promise hooks for the whole
 * process: a cost on every request of every route.)
 */
const handles = new WeakMap<Tx, { group: Group; member: Member }>();
/** A plugin that changes nothing: `withPlugin` is Kysely's way to a new instance on the same connection. */
const memberMarker: KyselyPlugin = { transformQuery: (args) => args.node, transformResult: (args) => Promise.resolve(args.result) };

function memberHandle(tx: Tx, group: Group, member: Member): Tx {
  const handle = tx.withPlugin(memberMarker);
  handles.set(handle, { group, member });
  return handle;
}

/** The range of the number `transactionShard` answers; the ledger takes it modulo its own shard count (a power of two that divides it). */
const groupShardRange = 1 << 16;

/**
 * A member named a row that another member of its group, or another group in flight, works on:
 * it runs again in a later group, once the group holding the row (`after`) has ended.
 */
export class GroupConflict extends Error {
  constructor(
    key: string,
    readonly after: Promise<void>,
  ) {
    super(`${key} is claimed by another member of a transaction group`);
  }
}

/**
 * A member's row is locked by a transaction outside the groups of this process (lockedElsewhere):
 * the member runs alone once the group has ended, rather than in a later group.
 */
class LockedElsewhere extends GroupConflict {}

/** Whether `tx` is a member's handle in a transaction group. */
export function inTransactionGroup(tx: Tx): boolean {
  return handles.has(tx);
}

/**
 * The error a member throws when a row it must lock first (a card) is held by a transaction
 * outside this process's groups, which the claims do not see (another server process on the same
 * database, a worker). Locked in the group, it would wait there with every other member's locks
 * held, in an order no other process knows, and two processes' groups could deadlock on their
 * cards; so the member takes that row with SKIP LOCKED and, finding it taken, leaves: it runs
 * alone once its group has ended, in a transaction of its own that waits for the lock holding
 * nothing else. Outside a group it is never needed (the lock is simply waited for).
 */
export function lockedElsewhere(tx: Tx, key: string): GroupConflict {
  const scope = handles.get(tx);
  return new LockedElsewhere(`${key} (locked outside this process's transaction groups)`, scope?.group.ended ?? Promise.resolve());
}

/**
 * For a row a member took with SKIP LOCKED and did not get: when `exists` (a read without a lock)
 * finds it, a transaction outside this process's groups holds it, and the member leaves
 * (lockedElsewhere); otherwise the row is simply missing, and this returns. Outside a group
 * (where the lock is waited for, so an empty answer means missing) it returns without reading.
 */
export async function leaveIfLockedElsewhere(tx: Tx, key: string, exists: () => Promise<boolean>): Promise<void> {
  if (inTransactionGroup(tx) && (await exists())) throw lockedElsewhere(tx, key);
}

/** A member of a group failed (`member`, when one did): nothing commits, and the members run again. */
class GroupFailed extends Error {
  constructor(
    readonly reason: unknown,
    readonly member?: Member,
  ) {
    super('a member of the transaction group failed', { cause: reason });
  }
}

/** PostgreSQL's answer to a statement sent after another failed in the same transaction. */
const transactionAborted = '25P02';

/**
 * The member whose failure failed the group, with its error: the first that failed of its own
 * accord, before any that only found the transaction aborted by another's statement. Members that
 * left for a later group (GroupConflict) did not fail.
 */
function failedMember(members: readonly Member[], outcomes: readonly PromiseSettledResult<unknown>[]): { member: Member; reason: unknown } | undefined {
  let aborted: { member: Member; reason: unknown } | undefined;
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome.status !== 'rejected' || outcome.reason instanceof GroupConflict) continue;
    const failed = { member: members[index] as Member, reason: outcome.reason as unknown };
    if (sqlStateOf(outcome.reason) !== transactionAborted) return failed;
    aborted ??= failed;
  }
  return aborted;
}

/**
 * Names what the member working through `tx` is about to work on, before it writes: in a
 * transaction group, throws GroupConflict when another member of the group, or another group in
 * flight, already named one of the keys. Outside a group (a transaction of its own) it does nothing.
 */
export function claimInGroup(tx: Tx, keys: readonly string[]): void {
  const scope = handles.get(tx);
  if (!scope) return;
  const { group, member } = scope;
  for (const key of keys) {
    const owner = group.claims.get(key);
    if (owner !== undefined && owner !== member) throw new GroupConflict(key, group.ended);
    // Another group in flight holds it (or is about to lock it): waiting for its lock would stall
    // every member of this group behind one statement, so this member waits outside instead.
    const other = group.held.get(key);
    if (other !== undefined && other !== group) throw new GroupConflict(key, other.ended);
  }
  for (const key of keys) {
    group.claims.set(key, member);
    group.held.set(key, group);
  }
}

/**
 * Leaves `write` (not yet sent) to the transaction group of the member working through `tx`: the
 * group sends it merged with its other members' before it commits. True when it did; false (and
 * the caller sends it itself) outside a group or when the statement is not only rows of kinds. The
 * caller must read nothing it writes afterwards, and must not leave the group (a claim) after it.
 */
export function deferToGroup(tx: Tx, write: WriteStatement): boolean {
  const scope = handles.get(tx);
  if (!scope || !write.mergeable) return false;
  scope.group.deferred.push({ member: scope.member, write });
  return true;
}

/**
 * Sends a statement that locks rows other transactions lock in an order of their own (a wallet's
 * ledger account: by account id, as the ledger locks them), with `order` its place in that order.
 * Outside a group it is sent at once. In a group, the members' locks would otherwise be taken in
 * the order the members reach them, so a group holding one wallet's account while waiting for
 * another's could deadlock with a transfer batch taking the two the other way (until the
 * thirty-fourth session; PostgreSQL broke such deadlocks after deadlock_timeout, and a money
 * audit measured card messages' p99 at 6–10 s under a mixed load): the statement waits until every
 * member of the group that may still ask has asked, finished or passed (passLockTurn), and they
 * all leave in one turn, in `order`. A member asks once per attempt (asking again is sent as soon
 * as the members still able to ask have, and orders nothing across the two turns). `send` must
 * send its statement at once (in its first synchronous step) so that the turn's statements reach
 * the connection in the order they were started.
 */
export function inGroupLockOrder<T>(tx: Tx, order: string, send: () => Promise<T>): Promise<T> {
  const scope = handles.get(tx);
  if (!scope) return send();
  const turn = scope.group.lockTurn;
  return new Promise<T>((resolve, reject) => {
    turn.waiting.push({
      order,
      send: () => {
        // A statement that fails to start fails its own member, never the release of the others.
        try {
          send().then(resolve, reject);
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      },
    });
    turn.mayAsk.delete(scope.member);
    releaseLockTurn(turn);
  });
}

/**
 * Says that the member working through `tx` will not ask inGroupLockOrder for anything, so the
 * members that do need not wait for it to finish (a card message whose lookup locks no account).
 * Outside a group it does nothing.
 */
export function passLockTurn(tx: Tx): void {
  const scope = handles.get(tx);
  if (!scope) return;
  scope.group.lockTurn.mayAsk.delete(scope.member);
  releaseLockTurn(scope.group.lockTurn);
}

/** The shard numbers of transactions outside groups, each drawn the first time it is asked for. */
const ownShards = new WeakMap<Tx, number>();

/**
 * A number fixed for the transaction `tx`, to pick one shard of each system account for everything
 * it writes (the ledger takes it modulo its shard count): in a transaction group, the group's, the
 * same for all its members (groups take them in turn: takeShard); in any other transaction, drawn
 * at random once. So a transaction never locks two shards of one account, in whatever order.
 */
export function transactionShard(tx: Tx): number {
  const group = handles.get(tx)?.group;
  if (group) return group.shard;
  let shard = ownShards.get(tx);
  if (shard === undefined) {
    shard = crypto.randomInt(groupShardRange);
    ownShards.set(tx, shard);
  }
  return shard;
}

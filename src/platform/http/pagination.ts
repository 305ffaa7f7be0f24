import { sql, type QueryExecutorProvider, type SelectQueryBuilder } from 'kysely';
import { Type, type Static } from 'typebox';
import { isUuid } from '../ids.js';
import { validationError } from './errors.js';

export const listLimitMax = 200;
export const listLimitDefault = 20;
export const listOffsetMax = 1_000_000;

const DateOrDateTime = Type.String({
  maxLength: 40,
  pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
  description: 'ISO 8601 date (2026-01-31) or date-time (2026-01-31T12:00:00Z)',
});

/** Query parameters shared by every list endpoint; spread them into the route's own query object. */
export const listQueryProperties = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: listLimitMax, default: listLimitDefault })),
  // No schema default: an offset given with startAfterId is refused, even 0, so the route must
  // see whether one was sent (CONTRACT §5: with startAfterId, offset must be absent).
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: listOffsetMax, description: 'rows to skip (default 0); not with startAfterId' })),
  startAfterId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'keyset cursor: the nextStartAfterId of the previous page (an id; anything else is 400)' })),
  createdAfter: Type.Optional(DateOrDateTime),
  createdBefore: Type.Optional(DateOrDateTime),
};

export const ListQuerySchema = Type.Object(listQueryProperties, { additionalProperties: false });
export type ListQuery = Static<typeof ListQuerySchema>;

/**
 * The most matching rows a list counts for `totalResults`. Beyond it, `totalResults` is this number
 * and `totalResultsExact` false. Counting every row on every page made each list cost as much as
 * its table is long: on the embedded database (one connection, so every request waits behind a
 * slow one), `GET /v1/events?limit=1` took 24-35 ms at 88,000 events against 5-6 ms at 11,000, and
 * events are never deleted (an embedded soak, 2026-12-06). Elasticsearch counts the same way
 * (`track_total_hits`, 10,000 by default).
 */
export const listCountMax = 10_000;

export interface Pagination {
  /** Matching rows, at most listCountMax (then `totalResultsExact` is false). */
  totalResults: number;
  /** False when more than listCountMax rows match: `totalResults` is then a floor. */
  totalResultsExact: boolean;
  hasMoreResults: boolean;
  nextStartAfterId: string | null;
}

/** Whether `YYYY-MM-DD` names a day of the calendar (JavaScript would roll 2023-02-30 over to March). */
function isCalendarDay(text: string): boolean {
  const [year, month, day] = text.split('-').map(Number) as [number, number, number];
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0 to 99 as 1900 to 1999.
  const probe = new Date(0);
  probe.setUTCFullYear(year, month - 1, day);
  return probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
}

/**
 * Whether the part after the day (`T24:00:00Z`, `+24:00`) names a time of a clock: JavaScript takes
 * 24:00 for the next midnight, ISO 8601-1:2019 and RFC 3339 have no hour 24.
 */
function isClockTime(rest: string): boolean {
  const time = /^T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(rest);
  if (time !== null && (Number(time[1]) > 23 || Number(time[2]) > 59 || Number(time[3] ?? 0) > 59)) return false;
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(rest);
  return offset === null || (Number(offset[2]) <= 23 && Number(offset[3]) <= 59);
}

/**
 * A list bound as an instant. The day must exist whatever the offset (2026-02-30T10:00:00+01:00
 * is refused like its Z form), and so must the time (23:59:60 is not one). Records are dated to
 * the millisecond, so a bound with finer digits is the next millisecond: a record at .177 is
 * before a bound of .177999, for createdAfter and createdBefore alike.
 */
export function parseInstant(value: string, field: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime()) || !isCalendarDay(value.slice(0, 10)) || !isClockTime(value.slice(10))) throw validationError(field, 'is not a valid date');
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
  return /[1-9]/.test(fraction.slice(3)) ? new Date(date.getTime() + 1) : date;
}

/**
 * Pages a query newest first. Ids are UUIDv7, so descending id order is creation order and the
 * keyset cursor is simply "id below startAfterId". `createdAfter` is inclusive, `createdBefore`
 * exclusive. totalResults counts the rows that match the filters, up to listCountMax.
 */
export async function paginate<DB, TB extends keyof DB, O extends { id: string }>(
  /** What `query` was built from (the database, or the transaction it reads in): the count runs there too. */
  executor: QueryExecutorProvider,
  query: SelectQueryBuilder<DB, TB, O>,
  list: ListQuery,
  columns: { id: string; createdAt: string },
): Promise<{ rows: O[]; pagination: Pagination }> {
  const limit = list.limit ?? listLimitDefault;
  const offset = list.offset ?? 0;
  if (list.startAfterId !== undefined && list.offset !== undefined) {
    throw validationError('offset', 'cannot be combined with startAfterId');
  }
  // A cursor is an id this API gave as nextStartAfterId; anything else is a client's bug, refused
  // rather than answered with an empty page that a backfill loop would take for the end.
  if (list.startAfterId !== undefined && !isUuid(list.startAfterId)) {
    throw validationError('startAfterId', 'must be an id (the nextStartAfterId of an earlier page)');
  }
  let filtered = query;
  if (list.createdAfter) {
    filtered = filtered.where(sql<boolean>`${sql.ref(columns.createdAt)} >= ${parseInstant(list.createdAfter, 'createdAfter')}`);
  }
  if (list.createdBefore) {
    filtered = filtered.where(sql<boolean>`${sql.ref(columns.createdAt)} < ${parseInstant(list.createdBefore, 'createdBefore')}`);
  }
  // Counts at most listCountMax + 1 rows: the count of a subquery cut at that many.
  const counted = filtered.clearSelect().clearOrderBy().select(sql<number>`1`.as('one')).limit(listCountMax + 1);
  const countRow = await sql<{ total: string }>`SELECT count(*) AS total FROM ${counted} AS counted`.execute(executor);
  const counts = Number(countRow.rows[0]?.total ?? 0);
  const totalResultsExact = counts <= listCountMax;

  let page = filtered;
  if (list.startAfterId !== undefined) {
    page = page.where(sql<boolean>`${sql.ref(columns.id)} < ${list.startAfterId}::uuid`);
  }
  const rows = await page
    .clearOrderBy()
    .orderBy(sql.ref(columns.id), 'desc')
    .limit(limit + 1)
    .offset(offset)
    .execute();
  const hasMoreResults = rows.length > limit;
  const pageRows = hasMoreResults ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    rows: pageRows,
    pagination: { totalResults: totalResultsExact ? counts : listCountMax, totalResultsExact, hasMoreResults, nextStartAfterId: hasMoreResults && last ? last.id : null },
  };
}

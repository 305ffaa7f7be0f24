import type { paths } from './generated/openapi.js';

/** `pagination` of every list answer: `{ totalResults, totalResultsExact, hasMoreResults, nextStartAfterId }`. */
export interface Pagination {
  /** Matching records, counted up to 10,000 (then `totalResultsExact` is false). */
  totalResults: number;
  /** False when more than 10,000 records match: `totalResults` is then a floor. */
  totalResultsExact?: boolean;
  hasMoreResults: boolean;
  nextStartAfterId?: string | null;
}

type JsonBody<Operation> = Operation extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;
type GetPath = { [P in keyof paths]: paths[P] extends { get: object } ? P : never }[keyof paths];

/** The paths whose GET answers a page: `data` is an array and `pagination` is beside it. */
export type ListPath = {
  [P in GetPath]: JsonBody<paths[P]['get']> extends { data: readonly unknown[]; pagination: object } ? P : never;
}[GetPath];

/** What one element of `data` is on the list at `P`. */
export type ListItem<P extends ListPath> = JsonBody<paths[P]['get']> extends { data: ReadonlyArray<infer Item> } ? Item : never;

/** One page as a list answers it. */
export interface Page<Item> {
  data: Item[];
  pagination: Pagination;
}

/** The query of the next page, or undefined after the last one. */
export function nextPageQuery(query: Record<string, unknown>, page: Page<unknown>): Record<string, unknown> | undefined {
  if (!page.pagination.hasMoreResults || page.data.length === 0) return undefined;
  const { offset, ...rest } = query;
  // Keyset paging when the list gives a cursor (stable while records are added); offsets otherwise.
  if (typeof page.pagination.nextStartAfterId === 'string') return { ...rest, startAfterId: page.pagination.nextStartAfterId };
  return { ...rest, offset: (typeof offset === 'number' ? offset : 0) + page.data.length };
}

/**
 * Every item of a list, page after page: `fetchPage` is called with the query of each page (the
 * caller's filters and `limit`, then the cursor of the previous page) until the last page.
 */
export async function* paginate<Item>(query: Record<string, unknown>, fetchPage: (query: Record<string, unknown>) => Promise<Page<Item>>): AsyncGenerator<Item, void, undefined> {
  let next: Record<string, unknown> | undefined = query;
  while (next) {
    const page = await fetchPage(next);
    yield* page.data;
    next = nextPageQuery(next, page);
  }
}

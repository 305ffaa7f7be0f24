import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError, errorTraceIdOf, firstItems, rateLimitWaitSeconds, listPageSize, type ListPage } from './api.js';
import { pollMsOf, pollMsStorageKey, scaledInterval } from './poll-interval.js';

/**
 * How often the pages read their lists and records again, in milliseconds: 5,000, or what this
 * browser's localStorage holds under `openbaas.pollMs` (`pollMsOf`). Read once, when the console loads.
 */
export const pollMs = pollMsOf(readStoredPollMs());

function readStoredPollMs(): string | null {
  try {
    return localStorage.getItem(pollMsStorageKey);
  } catch {
    return null; // storage refused (a sandboxed frame, a privacy setting): the default
  }
}

/** An interval that is `defaultMs` at the default `pollMs` (a history read every 3 s, say), scaled with it. */
export function pollEvery(defaultMs: number): number {
  return scaledInterval(defaultMs, pollMs);
}

/** Until when (Date.now() milliseconds) the console's reading again is paused: see `notePause`. */
let pausedUntilMs = 0;

/**
 * Notes a failure: a 429 (the key's rate limit) pauses every page's reading again for the
 * Retry-After it carries (30 s without one), since the limit is the key's, not the page's: the
 * reads a person asks for (a filter, "Load more", a form) still go. Until 2026-12-07 the pages went
 * on reading every few seconds through the limit, so the developer's own calls with the same key
 * kept getting 429 (found by an audit).
 */
export function notePause(failure: unknown, nowMs = Date.now()): void {
  const seconds = rateLimitWaitSeconds(failure);
  if (seconds !== undefined) pausedUntilMs = Math.max(pausedUntilMs, nowMs + seconds * 1000);
}

/** Whether reading again is paused now (a 429's Retry-After has not passed), or the tab is hidden. */
export function pollingPaused(nowMs = Date.now()): boolean {
  return document.visibilityState !== 'visible' || nowMs < pausedUntilMs;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads `load()` when the component appears and whenever `deps` change; with `pollMs`, again
 * every so often while the tab is visible and no 429 has paused reading (`notePause`), so a page
 * follows what curl, the SDK or the clock do.
 * An answer that arrives after a newer request started is dropped. What was loaded is cleared when
 * `clearKey` changes (by default, whenever `deps` do): a list asked for more rows keeps the rows it
 * shows until the longer list arrives, or fails.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number, clearKey?: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const lastClearKey = useRef<string | undefined>(undefined);

  const run = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    loadRef.current().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        notePause(failure);
        if (mine !== generation.current) return;
        setError(describeError(failure));
        setLoading(false);
      },
    );
  }, []);

  useEffect(() => {
    if (clearKey === undefined || clearKey !== lastClearKey.current) setData(undefined);
    lastClearKey.current = clearKey;
    run();
    if (!pollMs) return undefined;
    const timer = setInterval(() => {
      if (!pollingPaused()) run();
    }, pollMs);
    return () => clearInterval(timer);
  }, deps);

  return { data, error, loading, reload: run };
}

export interface PagedList<T> extends Loaded<{ items: T[]; total: string; hasMore: boolean }> {
  /** Shows `listPageSize` more rows. */
  more: () => void;
  /** More rows were asked for and have not arrived yet (a poll alone is not this). */
  loadingMore: boolean;
}

/**
 * A newest-first list shown `listPageSize` rows at a time ("Load more" asks for the next ones), read
 * again every `pollMs` like `useLoad`. `page` fetches one page of the API's list; a change of `deps`
 * (a filter) starts again from the first rows. Until 2026-12-04 the cards, bank transfers, credit
 * lines, webhooks and API keys pages showed the first 50 or 100 rows and said nothing of the rest
 * (found by an audit).
 */
export function usePagedList<T>(page: (limit: number, startAfterId: string | undefined) => Promise<ListPage<T>>, deps: unknown[], pollMs: number): PagedList<T> {
  const depsKey = JSON.stringify(deps);
  const [shown, setShown] = useState({ depsKey, count: listPageSize });
  const count = shown.depsKey === depsKey ? shown.count : listPageSize;
  // "Load more" keeps the rows shown while the longer list loads (until 2026-12-07 the table
  // emptied, losing the keyboard focus, and a failed load left it empty; found by an audit).
  const loaded = useLoad(() => firstItems(count, page), [depsKey, count], pollMs, depsKey);
  const loadingMore = moreRowsPending(loaded, count);
  return {
    ...loaded,
    loadingMore,
    more: () => {
      // Once per shown page: a second press while the next rows load asks for nothing more.
      if (!loadingMore) setShown({ depsKey, count: count + listPageSize });
    },
  };
}

/** A list asked for `count` rows is still loading the ones it lacks (it shows fewer and has more). */
export function moreRowsPending(loaded: Loaded<{ items: unknown[]; hasMore: boolean }>, count: number): boolean {
  return loaded.loading && loaded.data !== undefined && loaded.data.hasMore && loaded.data.items.length < count;
}

/** Runs an action (a write) and keeps its outcome for the page: busy while it runs, then the result or the error. */
export function useAction<A extends unknown[], T>(action: (...args: A) => Promise<T>): {
  run: (...args: A) => Promise<T | undefined>;
  /** Forgets the last outcome (an action whose outcome a newer one makes stale). */
  reset: () => void;
  busy: boolean;
  error: string | undefined;
  /** The failed request's trace, when the API answered one (the page links to it). */
  errorTraceId: string | undefined;
  result: T | undefined;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ text: string; traceId: string | undefined } | undefined>(undefined);
  const [result, setResult] = useState<T | undefined>(undefined);
  const run = async (...args: A) => {
    setBusy(true);
    setError(undefined);
    try {
      const value = await action(...args);
      setResult(value);
      return value;
    } catch (failure) {
      notePause(failure);
      setError({ text: describeError(failure), traceId: errorTraceIdOf(failure) });
      setResult(undefined);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  const reset = () => {
    setError(undefined);
    setResult(undefined);
  };
  return { run, reset, busy, error: error?.text, errorTraceId: error?.traceId, result };
}

/**
 * A picker's selection: the id picked, else the first item of the list as it first loaded, which is
 * then kept (as if picked) while polling puts newer items first. Until 2026-12-06 an unpicked select
 * followed the newest item, so a customer created elsewhere changed the Trades page's customer
 * under a quote made for another (found by an audit). `reset` names what, when it changes, clears
 * the pick (the Trades wallet follows its customer).
 */
export function usePinnedChoice(firstId: string | undefined, initial = '', reset: unknown = undefined): [string, (id: string) => void] {
  const [picked, setPicked] = useState(initial);
  const lastReset = useRef(reset);
  useEffect(() => {
    if (lastReset.current !== reset) {
      lastReset.current = reset;
      setPicked('');
    }
  }, [reset]);
  useEffect(() => {
    if (picked === '' && firstId !== undefined && firstId !== '') setPicked(firstId);
  }, [picked, firstId]);
  return [picked || firstId || '', setPicked];
}

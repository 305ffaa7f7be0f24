/**
 * A function that runs `run` once, on the next turn of the event loop (setImmediate: after the
 * pending I/O callbacks), however many times it is called before then. The batchers use it to
 * start work once the requests that arrived in the same turn have queued, so that they go
 * together instead of the first one always leaving alone.
 */
export function onceOnNextTurn(run: () => void): () => void {
  let scheduled = false;
  return () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      run();
    });
  };
}

/**
 * Resolves on the next turn of the event loop, after the pending I/O callbacks. The embedded
 * database's pool awaits it before each taking of its one connection (database.ts): there a query
 * is answered without any I/O, so a loop that only awaits the database would never let the event
 * loop take a new connection or request.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

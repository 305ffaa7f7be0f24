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
 * Resolves on the next turn of the event loop, after the pending I/O callbacks. A loop of database
 * work awaits it between its steps: on the embedded database a query answers without any I/O, so
 * a loop that only awaits queries never lets the event loop take a new connection or request
 * (an advance of a client's clock through hundreds of timers held every other client's requests
 * until it ended; found by an audit on 2026-12-04).
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

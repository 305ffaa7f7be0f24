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

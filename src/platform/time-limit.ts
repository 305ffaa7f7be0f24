/**
 * `work`'s value, or `late` when `ms` pass first; the timer is cleared either way. `work` goes on
 * after a timeout (nothing here can stop it), and its failure then is handled (Promise.race
 * subscribes to it), so it is not an unhandled rejection.
 */
export async function withinTime<T, L>(work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
  });
  try {
    return await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

import fc from 'fast-check';

/**
 * The fast-check parameters of a model test: `numRuns` runs (FC_RUNS instead, when set, as the
 * ledger's and credit's model tests take it) from FC_SEED (else a seed of the clock), and a failure
 * that says how to replay it (FC_SEED, and FC_PATH for the counterexample alone, without the run
 * that found it and its shrinking).
 */
export function modelRunOptions<T>(name: string, numRuns: number): fc.Parameters<T> {
  return {
    numRuns: process.env.FC_RUNS === undefined ? numRuns : Number(process.env.FC_RUNS),
    seed: Number(process.env.FC_SEED ?? Date.now() % 2_147_483_647),
    ...(process.env.FC_PATH === undefined ? {} : { path: process.env.FC_PATH, endOnFailure: true }),
    reporter: (details) => {
      if (!details.failed) return;
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(`${name} failed; replay with FC_SEED=${details.seed} (the counterexample alone: FC_PATH=${details.counterexamplePath ?? ''}): ${fc.defaultReportMessage(details) ?? ''}\n${cause}`);
    },
  };
}

import { defineConfig } from 'vitest/config';

// One project per database: every test runs on the embedded PGlite (PostgreSQL 18) and, when
// TEST_DATABASE_URL is set, again on that PostgreSQL server.
const databases = ['pglite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];

export default defineConfig({
  test: {
    projects: databases.map((database) => ({
      extends: true,
      test: {
        name: database,
        env: { TEST_DB: database },
        include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
        // A file named *.pglite.test.ts or *.postgres.test.ts is about that database only.
        exclude: [`**/*.${database === 'pglite' ? 'postgres' : 'pglite'}.test.ts`, '**/node_modules/**'],
        // Each project's files start from one migrated database made at the start of the run: an
        // embedded one for pglite, a template database on the server for postgres (test/harness.ts).
        // Both build the sources once for the tests that start `openbaas` processes (test/cli-build.global.ts).
        globalSetup: ['test/cli-build.global.ts', database === 'pglite' ? 'test/pglite-template.global.ts' : 'test/postgres-template.global.ts'],
        // A guard against hangs, not a speed check (npm run bench measures speed). Two files run
        // at once on two cores, so a test that starts several processes can take twice as long
        // as alone: embedded.pglite's five CLI runs took 49 s alone and passed 60 s beside
        // another file.
        testTimeout: 180_000,
        hookTimeout: 120_000,
        pool: 'forks',
        // Files run one after the other in a worker that keeps its modules loaded, rather than
        // loading the whole app again for each file (about 1.2 s per file, 270 s of the run on two
        // cores). What a module keeps for the process is reset per file in test/setup-file.ts.
        isolate: false,
        setupFiles: ['test/setup-file.ts'],
        // Two files at once even on two cores: most of a file's time is spent waiting (on the
        // database, on timers, on child processes), so a second worker fills it. Vitest's default
        // on two cores is one worker.
        maxWorkers: 2,
      },
    })),
  },
});

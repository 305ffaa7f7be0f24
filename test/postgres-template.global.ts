import crypto from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../src/platform/db/migrate.js';
import { databaseUrlNamed } from './support/database-url.js';

declare module 'vitest' {
  interface ProvidedContext {
    /** The name of a migrated, empty database on TEST_DATABASE_URL's server, each test file's template (see harness.ts). */
    postgresTemplate: string;
  }
}

/**
 * Global setup of the postgres project: creates one database on TEST_DATABASE_URL's server and
 * applies the migrations. Each test file's database is a copy of it (CREATE DATABASE … TEMPLATE:
 * about 0.12 s, where creating a schema and applying every migration took about 0.6 s of the
 * server's CPU, for each of the 150-odd test apps of a run). Made afresh by every run, so it always
 * holds the current migrations; dropped when the run ends. The user of TEST_DATABASE_URL needs the
 * CREATEDB privilege (postgres has it).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is required for the postgres test project');
  const name = `openbaas_test_template_${crypto.randomBytes(6).toString('hex')}`;
  const run = async (statement: string) => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(statement);
    } finally {
      await admin.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  // No session may be left on a template when a copy is made: this pool ends before any test starts.
  const drop = () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  const pool = new pg.Pool({ connectionString: databaseUrlNamed(url, name), max: 1 });
  try {
    await migrate(pool);
  } catch (error) {
    // A setup that fails leaves no template behind.
    await pool.end();
    await drop();
    throw error;
  }
  await pool.end();
  project.provide('postgresTemplate', name);
  return drop;
}

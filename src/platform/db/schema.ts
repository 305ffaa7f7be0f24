import type { ColumnType, Generated } from 'kysely';

/**
 * The Kysely view of the database. Each module adds its own tables to this interface by
 * declaration merging in its `<module>.tables.ts`, so a module's SQL is typed without this file
 * knowing the module:
 *
 *   declare module '../../platform/db/schema.js' { interface Database { customers: CustomersTable } }
 */
export interface Database {
  schema_migrations: SchemaMigrationsTable;
}

export interface SchemaMigrationsTable {
  version: string;
  name: string;
  applied_at: Generated<Date>;
}

/** A jsonb column: written as a JSON string, read back as a parsed value. */
export type Json<T> = ColumnType<T, string, string>;
/** A numeric column holding minor units: read as a string, written from a bigint as a string. */
export type Numeric = ColumnType<string, string | bigint, string | bigint>;

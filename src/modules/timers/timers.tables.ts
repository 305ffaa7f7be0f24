import type { ColumnType } from 'kysely';

export interface TimersTable {
  client_id: string;
  kind: string;
  subject_id: string;
  due_at: Date;
  created_at: Date;
  failed_attempts: ColumnType<number, number | undefined, number>;
  retry_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    timers: TimersTable;
  }
}

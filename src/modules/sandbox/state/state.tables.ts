import type { Json } from '../../../platform/db/schema.js';

/** A saved client state (migration 0019); its rows are in sandbox_snapshot_tables. */
export interface SandboxSnapshotsTable {
  client_id: string;
  id: string;
  name: string;
  /** bigint: read as a string. */
  clock_offset_ms: string;
  row_counts: Json<Record<string, number>>;
  /** bigint: read as a string. */
  size_bytes: string;
  created_at: Date;
  /** The last migration applied when the snapshot was taken (migration 0032); null before it. */
  schema_version: string | null;
}

/** The rows of one table of a snapshot, as a JSON array of to_jsonb(row), in chunks of about 16 MB. */
export interface SandboxSnapshotTablesTable {
  client_id: string;
  snapshot_id: string;
  table_name: string;
  chunk: number;
  rows: Json<unknown[]>;
}

declare module '../../../platform/db/schema.js' {
  interface Database {
    sandbox_snapshots: SandboxSnapshotsTable;
    sandbox_snapshot_tables: SandboxSnapshotTablesTable;
  }
}

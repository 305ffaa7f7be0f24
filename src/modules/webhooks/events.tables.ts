import type { Json } from '../../platform/db/schema.js';

export interface EventsTable {
  client_id: string;
  id: string;
  type: string;
  data: Json<Record<string, unknown>>;
  created_at: Date;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    events: EventsTable;
  }
}

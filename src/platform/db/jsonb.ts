/**
 * A JSON value as PostgreSQL's jsonb gives it back: jsonb keeps an object's keys sorted, shorter
 * keys first and keys of one length by their UTF-8 bytes (its storage order), not in the order
 * they were written. A value built in code and stored in a jsonb column can be answered as it
 * will read back, without reading it: its objects are rebuilt with their keys inserted in that
 * order (JavaScript's own key order rules then apply to both alike). Only for values that survive
 * JSON as they are (what JSON.parse produced, plain objects, arrays, strings, finite numbers).
 */
export function asStoredJsonb<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => asStoredJsonb(item)) as T;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([key, item]) => ({ key, bytes: Buffer.from(key, 'utf8'), item }));
  entries.sort((a, b) => a.bytes.length - b.bytes.length || Buffer.compare(a.bytes, b.bytes));
  const stored: Record<string, unknown> = {};
  for (const { key, item } of entries) stored[key] = asStoredJsonb(item);
  return stored as T;
}

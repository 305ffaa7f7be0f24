import { describe, expect, it } from 'vitest';
import { idAt, isUuid } from './ids.js';

describe('ids', () => {
  it('are UUIDv7 and strictly increasing within one millisecond', () => {
    const moment = new Date('2026-05-01T00:00:00.000Z');
    const ids = Array.from({ length: 2000 }, () => idAt(moment));
    for (const id of ids) {
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe('7');
    }
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('carry the moment as their timestamp, and keep increasing when time moves on', () => {
    const first = idAt(new Date('2030-01-01T00:00:00.000Z'));
    const later = idAt(new Date('2030-01-01T00:00:00.005Z'));
    expect(later > first).toBe(true);
    expect(Number.parseInt(later.replace(/-/g, '').slice(0, 12), 16)).toBe(new Date('2030-01-01T00:00:00.005Z').getTime());
  });
});

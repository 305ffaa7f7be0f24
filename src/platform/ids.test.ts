import { describe, expect, it } from 'vitest';
import { idAt, isUuid, resetIdSequence } from './ids.js';

const timeOf = (id: string) => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);

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
    expect(timeOf(later)).toBe(new Date('2030-01-01T00:00:00.005Z').getTime());
  });

  it('carry their own moment after an id of a later moment (another client\'s clock runs ahead): never that later time', () => {
    const ahead = idAt(new Date('2031-06-01T00:00:00.000Z'));
    const mine = new Date('2031-05-01T00:00:00.000Z');
    const first = idAt(mine);
    const second = idAt(mine);
    expect(timeOf(first)).toBe(mine.getTime());
    expect(second > first).toBe(true);
    expect(ahead > second).toBe(true);
  });

  it('of one millisecond keep increasing around ids of other moments, and after a restart (a fresh sequence) still sort by their moment', () => {
    const mine = new Date('2032-01-01T00:00:00.000Z');
    const before = idAt(mine);
    idAt(new Date('2032-02-01T00:00:00.000Z'));
    const after = idAt(mine);
    expect(after > before).toBe(true);
    resetIdSequence();
    const restarted = idAt(new Date('2032-01-01T00:00:00.001Z'));
    expect(restarted > after).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { ReadBatcher } from './read-batcher.js';

/** A fetch whose answers the test releases by hand, recording the keys of every call. */
function manualFetch() {
  const calls: { keys: number[]; answer: (values: string[]) => void; fail: (error: Error) => void }[] = [];
  const fetch = (keys: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ keys, answer: resolve, fail: reject });
    });
  return { calls, fetch };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('ReadBatcher with one query in flight', () => {
  it('sends the keys of one turn together, and the keys arriving meanwhile together in the next query', async () => {
    const { calls, fetch } = manualFetch();
    const reader = new ReadBatcher({ fetch, sizeMax: 100, concurrency: 1 });
    const first = [1, 2, 3].map((key) => reader.load(key));
    await turn();
    expect(calls.map((call) => call.keys)).toEqual([[1, 2, 3]]);

    const waiting = [4, 5].map((key) => reader.load(key));
    await turn();
    await turn();
    expect(calls).toHaveLength(1);

    calls[0]?.answer(['one', 'two', 'three']);
    expect(await Promise.all(first)).toEqual(['one', 'two', 'three']);
    await turn();
    expect(calls.map((call) => call.keys)).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    calls[1]?.answer(['four', 'five']);
    expect(await Promise.all(waiting)).toEqual(['four', 'five']);
  });

  it('splits a long queue at sizeMax', async () => {
    const { calls, fetch } = manualFetch();
    const reader = new ReadBatcher({ fetch, sizeMax: 2, concurrency: 1 });
    const loads = [1, 2, 3].map((key) => reader.load(key));
    await turn();
    calls[0]?.answer(['a', 'b']);
    await turn();
    calls[1]?.answer(['c']);
    expect(await Promise.all(loads)).toEqual(['a', 'b', 'c']);
    expect(calls.map((call) => call.keys)).toEqual([[1, 2], [3]]);
  });

  it('fails every request of a query that fails, or that answers the wrong number of values, and goes on', async () => {
    const { calls, fetch } = manualFetch();
    const reader = new ReadBatcher({ fetch, sizeMax: 10, concurrency: 1 });
    const failing = [1, 2].map((key) => reader.load(key));
    await turn();
    calls[0]?.fail(new Error('database gone'));
    for (const load of failing) await expect(load).rejects.toThrow('database gone');

    const short = [3, 4].map((key) => reader.load(key));
    await turn();
    calls[1]?.answer(['only one']);
    for (const load of short) await expect(load).rejects.toThrow('read batch answered 1 values for 2 keys');

    const fine = reader.load(5);
    await turn();
    calls[2]?.answer(['five']);
    expect(await fine).toBe('five');
  });
});

describe('READ_BATCH_CONCURRENCY', () => {
  it('defaults to one query in flight, and refuses what is not a whole number from 1 to 64', () => {
    expect(loadConfig({}).readBatchConcurrency).toBe(1);
    expect(loadConfig({ READ_BATCH_CONCURRENCY: '4' }).readBatchConcurrency).toBe(4);
    expect(() => loadConfig({ READ_BATCH_CONCURRENCY: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ READ_BATCH_CONCURRENCY: 'many' })).toThrow(ConfigError);
  });
});

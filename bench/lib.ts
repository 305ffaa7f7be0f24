import fs from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../src/paths.js';

/** What every scenario reports; printed as one line and written to bench/results/<scenario>.json. */
export interface ScenarioResult {
  scenario: string;
  /** ours / anchor, both in the same unit (higher is better). */
  ratio: number;
  /** Named figures printed after the ratio, in order (value, anchor, p50_ms, p99_ms, …). */
  figures: Record<string, number | string>;
  /** Anything else worth keeping in the JSON (machine, settings, checks). */
  extra?: Record<string, unknown>;
}

export interface Scenario {
  name: string;
  description: string;
  run(): Promise<ScenarioResult>;
}

export function formatResultLine(result: ScenarioResult): string {
  const figures = Object.entries(result.figures)
    .map(([name, value]) => `${name}=${typeof value === 'number' ? round(value) : value}`)
    .join(' ');
  return `${result.scenario}: ratio=${round(result.ratio)} ${figures}`;
}

function round(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(value >= 100 ? 1 : 3);
}

export function writeResult(result: ScenarioResult): void {
  const folder = path.join(packageRoot, 'bench', 'results');
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(
    path.join(folder, `${result.scenario}.json`),
    `${JSON.stringify({ ...result, measuredAt: new Date().toISOString() }, null, 2)}\n`,
  );
}

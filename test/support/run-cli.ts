import { spawn } from 'node:child_process';
import { packageRoot } from '../../src/paths.js';
import { cliArgs } from './cli-command.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the `openbaas` command (this run's build of the sources) in a child process, from the package root, on
 * the embedded database unless `env` says otherwise; resolves with its exit code and output.
 */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(...args), {
      cwd: packageRoot,
      env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The commands that only read or change what a database holds, each with what it says it would
 * do (`nothing to <purpose>`) where there is no database: they refuse to create one (src/cli.ts).
 */
export const commandsNeedingData: ReadonlyArray<readonly [string[], string]> = [
  [['ledger', 'verify'], 'verify'],
  [['clients', 'list'], 'list'],
  [['keys', 'create', '--client', '01900000-0000-7000-8000-000000000000'], 'create a key for'],
  [['keys', 'revoke', 'sk_test_Nope0000Nope'], 'revoke'],
  [['directory', 'status'], 'report on'],
];

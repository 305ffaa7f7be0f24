import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { packageRoot } from '../src/paths.js';
import { startCli } from './support/cli-command.js';
import { commandsNeedingData, runCli } from './support/run-cli.js';
import { migratedDataFolder, temporaryFolder } from './support/temp-folder.js';

// Mistakes in the `openbaas` command line, and what `openbaas migrate` says. The mistakes are refused before any database is opened, so
// one database is enough (the data folder is a throwaway one, in case a command did open it).


let folder: string;

beforeAll(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'openbaas-cli-args-'));
});
afterAll(() => {
  fs.rmSync(folder, { recursive: true, force: true });
});

describe('openbaas command-line mistakes', () => {
  // Until 2026-12-05 each printed "openbaas: TypeError [ERR_PARSE_ARGS_…]" and a stack trace.
  it.each([
    [['clients', 'list', '--foo'], "Unknown option '--foo'"],
    [['directory', 'import', '--fedach'], "Option '--fedach <value>' argument missing"],
    [['keys', 'create', '--client', 'X', '--read-only=yes'], "Option '--read-only' does not take an argument"],
    // Until 2026-12-07 an option of another command, or an extra word, was ignored (found by an audit).
    [['clients', 'list', '--read-only'], "Option '--read-only' is not an option of 'clients list'"],
    [['ledger', 'verify', '--name', 'x'], "Option '--name' is not an option of 'ledger verify'"],
    [['worker', '--port', '8081'], "Option '--port' is not an option of 'worker'"],
    [['migrate', 'now'], "Unexpected argument 'now' after 'migrate'"],
    [['keys', 'revoke', 'sk_test_Ab12Cd34', 'sk_test_Ef56Gh78'], "Unexpected argument 'sk_test_Ef56Gh78' after 'keys revoke sk_test_Ab12Cd34'"],
    // Until 2026-12-08 what a command needs was found once its modules had loaded, and said without the usage (found by an audit).
    [['clients', 'create'], 'clients create needs --name NAME'],
    [['clients', 'create', '--name', ''], 'clients create needs --name NAME'],
    [['keys', 'create', '--read-only'], 'keys create needs --client ID'],
    [['keys', 'revoke'], 'keys revoke needs the key prefix, for example sk_test_Ab12Cd34'],
    [['directory', 'import'], 'directory import needs --fedach FILE, --fedwire FILE and/or --bic FILE'],
  ])('%j: one line naming the problem, then the usage; exit 1', async (args, problem) => {
    const result = await runCli(args, { DATA_DIR: path.join(folder, 'data') });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const [first, blank, ...rest] = result.stderr.split('\n');
    expect(first).toMatch(new RegExp(`^openbaas: ${problem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(blank).toBe('');
    expect(rest.join('\n')).toMatch(/^Usage: openbaas <command> \[options\]\n/);
    expect(result.stderr).not.toMatch(/TypeError|ERR_PARSE_ARGS|\n\s+at /);
    // Refused before anything was opened.
    expect(fs.existsSync(path.join(folder, 'data'))).toBe(false);
  });

  it.each([
    [['clients', 'list', '--foo', '--json'], /^Unknown option '--foo'/],
    // Until 2026-12-07 the whole line, its options too: "Unknown command: nonsense --json" (found by an audit).
    [['nonsense', '--json'], /^Unknown command: nonsense$/],
    [['--json', 'nonsense', 'more'], /^Unknown command: nonsense more$/],
    [['keys', 'create', '--json'], /^keys create needs --client ID$/],
  ])('%j under --json: one JSON line on stderr naming the problem, no usage; exit 1', async (args, problem) => {
    const result = await runCli(args, { DATA_DIR: path.join(folder, 'data') });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0] ?? '') as { error: { name: string; message: string } };
    expect(parsed.error.name).toBe('UsageError');
    expect(parsed.error.message).toMatch(problem);
    expect(fs.existsSync(path.join(folder, 'data'))).toBe(false);
  });

  it('a command that fails under --json says so in JSON, with the error code', async () => {
    const data = migratedDataFolder('cli-json');
    const result = await runCli(['keys', 'revoke', 'sk_test_Nope0000Nope', '--json'], { DATA_DIR: data });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr)).toEqual({ error: { name: 'AppError', code: 'NOT_FOUND', message: 'Active API key not found' } });
  });

  it('--help or -h alone prints the usage and exits 0; nothing at all prints it and exits 1', async () => {
    // Until 2026-12-07's option-order change made `--help` alone exit 1 (found by its re-audit).
    for (const args of [['--help'], ['-h']]) {
      const result = await runCli(args, { DATA_DIR: path.join(folder, 'data') });
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).toMatch(/^Usage: openbaas <command> \[options\]\n\nCommands:\n {2}serve /);
    }
    const nothing = await runCli([], { DATA_DIR: path.join(folder, 'data') });
    expect(nothing.code).toBe(1);
    expect(nothing.stdout).toMatch(/^Usage: openbaas/);
    expect(fs.existsSync(path.join(folder, 'data'))).toBe(false);
  });

  // Until 2026-12-07 every `--help` printed the whole usage.
  it.each([
    [['ledger', 'verify', '--help'], 'Usage: openbaas ledger verify [--json]\n\nRecompute every balance from the ledger entries and check\nevery invariant; exits 1 and names the rows on a violation.\n\n'],
    [['--help', 'keys', 'revoke', 'sk_test_Ab12Cd34'], 'Usage: openbaas keys revoke PREFIX [--json]\n\nRevoke a key by its prefix (sk_test_Ab12Cd34).\n\n'],
    [['serve', '-h'], 'Usage: openbaas serve [--memory] [--port N] [--no-workers]\n\nHTTP API plus background workers.\n\n'],
    [['clients', '--help'], 'Usage: openbaas clients <command> [options]\n\nCommands:\n  clients create --name NAME [--json]          create a client (tenant) and its first API key\n  clients list [--json]                        list clients\n\n'],
  ])('%j prints that command\'s usage (or its group\'s) and exits 0', async (args, start) => {
    const result = await runCli(args, { DATA_DIR: path.join(folder, 'data') });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.startsWith(start), result.stdout).toBe(true);
    expect(result.stdout).toMatch(/Configuration comes from environment variables/);
    expect(fs.existsSync(path.join(folder, 'data'))).toBe(false);
  });

  it.each([[['nonsense', '--help']], [['clients', 'nonsense', '--help']], [['constructor']], [['toString', '--help']]])(
    '%j: an unknown command, with or without --help, in one line and the usage; exit 1',
    async (args) => {
      // Until 2026-12-07 `openbaas constructor` (a name every object has) printed a stack trace.
      const result = await runCli(args, { DATA_DIR: path.join(folder, 'data') });
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(new RegExp(`^openbaas: Unknown command: ${args.filter((arg) => arg !== '--help').join(' ')}\n\nUsage: openbaas <command>`));
      expect(fs.existsSync(path.join(folder, 'data'))).toBe(false);
    },
  );

  it('an unknown command prints its message, with the prefix of the other mistakes, and the usage', async () => {
    // Until 2026-12-07 without the "openbaas:" the other mistakes have (found by an audit).
    const result = await runCli(['nonsense'], { DATA_DIR: path.join(folder, 'data') });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^openbaas: Unknown command: nonsense\n\nUsage: openbaas/);
  });
});

// Until 2026-12-07 these commands created a database where there was none: `ledger verify` run
// from the wrong folder (or with DATA_DIR unset) reported a new, empty database clean (an audit).
describe('a command that reads or changes what a database holds, where there is none', () => {
  it.each(commandsNeedingData)('%j: refused naming the folder, which it does not create; exit 1', async (args, purpose) => {
    const data = path.join(folder, 'no-database', 'data');
    const result = await runCli(args, { DATA_DIR: data });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `openbaas: there is no database in ${data} (DATA_DIR, default ./data), so nothing to ${purpose}: point DATA_DIR (or DATABASE_URL) at the database you mean, or start \`openbaas serve\` once to create one there.\n`,
    );
    expect(fs.existsSync(data)).toBe(false);
  });

  it.each([[['migrate']], [['clients', 'create', '--name', 'X']], [['serve', '--port', '0']]])(
    '%j with DATA_DIR a file (or under one): one line saying the folder cannot be made, no stack; exit 1',
    async (args) => {
      const file = path.join(folder, 'in-the-way');
      fs.writeFileSync(file, '');
      for (const data of [file, path.join(file, 'data')]) {
        const result = await runCli(args, { DATA_DIR: data });
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(`openbaas: The data folder ${data} (DATA_DIR) cannot be made: a file is in its place or in its path's.\n`);
      }
    },
  );

  it('takes options anywhere on the line, before or between the command\'s words (they were an unknown command)', async () => {
    const data = migratedDataFolder('cli-option-order');
    const outputs: string[] = [];
    for (const args of [['clients', 'list', '--json'], ['clients', '--json', 'list'], ['--json', 'clients', 'list']]) {
      const result = await runCli(args, { DATA_DIR: data });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      outputs.push(result.stdout);
    }
    expect(JSON.parse(outputs[0] ?? '')).toEqual([]);
    expect(new Set(outputs).size).toBe(1);
    const refused = await runCli(['clients', '--read-only', 'list'], { DATA_DIR: data });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^openbaas: Option '--read-only' is not an option of 'clients list'/);
  });

  it('a folder holding a database is used as before: ledger verify on a migrated one is clean', async () => {
    const data = migratedDataFolder('cli-verify');
    const verified = await runCli(['ledger', 'verify', '--json'], { DATA_DIR: data });
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
  });
});

// Until 2026-12-06 `--port` was read by JavaScript's Number: `--port 1e1` listened on port 10 and
// `--port ""` on a random port, while PORT=1e1 was refused (found by an audit).
describe('openbaas serve --port', () => {
  it.each([['1e1'], [''], ['0x10'], [' 80'], ['65536']])('--port %j: refused as PORT would be, naming --port, before anything is opened; exit 1', async (value) => {
    // The data folder would be inside a file: a server that started anyway fails at once instead of listening.
    const file = path.join(folder, 'not-a-folder');
    fs.writeFileSync(file, '');
    const result = await runCli(['serve', '--port', value], { DATA_DIR: path.join(file, 'data') });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`openbaas: --port must be a whole number from 0 to 65535, got "${value}"\n`);
  });
});

describe('openbaas serve: the ready line', () => {
  it('the ready line and the new key\'s curl line name the port the system picked', async () => {
    // Until 2026-12-07 they said http://localhost:0 (found by an audit).
    const { child, output, exited } = startCli(['serve', '--memory', '--port', '0'], { LOG_LEVEL: 'info', OPENBAAS_API_KEY: '', DATABASE_URL: '', PUBLIC_BASE_URL: '', HOST: '127.0.0.1' });
    try {
      await vi.waitFor(() => expect(output()).toMatch(/openbaas: ready in \d+\.\d s on /), { timeout: 120_000, interval: 100 });
      const port = Number(/openbaas: ready in \d+\.\d s on http:\/\/localhost:(\d+)\n/.exec(output())?.[1]);
      expect(port, output()).toBeGreaterThan(0);
      expect(output()).toMatch(new RegExp(`curl -H "Authorization: sk_test_[A-Za-z0-9]+" http://localhost:${port}/v1/assets`));
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('with PUBLIC_BASE_URL the ready line names it and where the server listens', async () => {
    // Until 2026-12-07 it named PUBLIC_BASE_URL alone, unless the port was 0.
    const data = migratedDataFolder('cli-public-url');
    const { child, output, exited } = startCli(['serve', '--port', '0'], { DATA_DIR: data, LOG_LEVEL: 'info', DATABASE_URL: '', PUBLIC_BASE_URL: 'https://baas.example.com', HOST: '127.0.0.1' });
    try {
      await vi.waitFor(() => expect(output()).toMatch(/openbaas: ready in \d+\.\d s on /), { timeout: 120_000, interval: 100 });
      const port = Number(/openbaas: ready in \d+\.\d s on https:\/\/baas\.example\.com \(listening on 127\.0\.0\.1:(\d+)\)\n/.exec(output())?.[1]);
      expect(port, output()).toBeGreaterThan(0);
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});

// Until 2026-12-07 `openbaas migrate` printed "Migrations are up to date." also when it had just
// applied every migration (found by an audit).
describe('openbaas migrate', () => {
  it('says how many migrations it applied, from which to which, then that none was pending', async () => {
    const data = temporaryFolder('cli-migrate');
    const files = fs.readdirSync(path.join(packageRoot, 'migrations')).filter((file) => file.endsWith('.sql')).sort();
    const names = files.map((file) => file.replace(/\.sql$/, ''));
    const first = await runCli(['migrate'], { DATA_DIR: data });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(`Applied ${names.length} migrations (${names[0] ?? ''} to ${names.at(-1) ?? ''}); migrations are up to date.\n`);
    const again = await runCli(['migrate', '--json'], { DATA_DIR: data });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ migrated: true, applied: [] });
    const text = await runCli(['migrate'], { DATA_DIR: data });
    expect(text.stdout).toBe('Migrations are up to date: none to apply.\n');
  });
});

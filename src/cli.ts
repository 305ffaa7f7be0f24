#!/usr/bin/env node
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, portMax, portMin, wholeNumber } from './platform/config.js';
import { DataFolderLockedError, DataFolderUnusableError } from './platform/db/lock-file.js';
import { DatabaseNewerError, MigrationChangedError } from './platform/db/migrate.js';
import { assert } from './platform/assert.js';
import { AppError } from './platform/http/errors.js';
import type { Deps } from './platform/deps.js';

// The program's modules are loaded by the command that needs them, not before the command line
// is read: `--help`, a mistake in the command line and a refusal of DATA_DIR answer in a fraction
// of the 1.5 s loading the server takes (until 2026-12-07 every command loaded everything first).
const loadMain = () => import('./main.js');

/** The failures the command explains in one line (no stack): a loaded module adds its own. */
const explained: Array<abstract new (...args: never[]) => Error> = [ConfigError, DataFolderLockedError, DataFolderUnusableError, DatabaseNewerError, MigrationChangedError, AppError];

/** main.js, with the failures opening a database may add (a key of another database, a database that cannot be reached). */
async function program() {
  const [main, keyCheck, database] = await Promise.all([loadMain(), import('./platform/crypto/key-check.js'), import('./platform/db/database.js')]);
  explained.push(keyCheck.EncryptionKeyMismatchError, keyCheck.VaultKeyMismatchError, database.DatabaseConnectError);
  return main;
}

/**
 * What each command reads, how many words name it (with `keys revoke`'s prefix, the positionals it
 * takes) and its lines of the usage. Anything not listed is refused: until 2026-12-07 an option of
 * another command was ignored (`clients list --read-only` listed the clients), and so were extra
 * words (found by an audit).
 */
const commandLines = {
  serve: { options: ['memory', 'port', 'no-workers'], positionals: 1, usage: ['serve [--memory] [--port N] [--no-workers]', 'HTTP API plus background workers'] },
  worker: { options: [], positionals: 1, usage: ['worker', 'background workers only'] },
  migrate: { options: ['json'], positionals: 1, usage: ['migrate [--json]', 'apply pending database migrations'] },
  'clients create': {
    options: ['name', 'json'],
    positionals: 2,
    needs: { oneOf: ['name'], text: '--name NAME' },
    usage: ['clients create --name NAME [--json]', 'create a client (tenant) and its first API key'],
  },
  'clients list': { options: ['json'], positionals: 2, usage: ['clients list [--json]', 'list clients'] },
  'keys create': {
    options: ['client', 'read-only', 'allow-ip', 'json'],
    positionals: 2,
    needs: { oneOf: ['client'], text: '--client ID' },
    usage: ['keys create --client ID [--read-only] [--allow-ip CIDR]... [--json]', 'create another API key for a client (shown once)'],
  },
  'keys revoke': {
    options: ['json'],
    positionals: 3,
    needs: { lastWord: true, text: 'the key prefix, for example sk_test_Ab12Cd34' },
    usage: ['keys revoke PREFIX [--json]', 'revoke a key by its prefix (sk_test_Ab12Cd34)'],
  },
  'directory import': {
    options: ['fedach', 'fedwire', 'bic', 'json'],
    positionals: 2,
    needs: { oneOf: ['fedach', 'fedwire', 'bic'], text: '--fedach FILE, --fedwire FILE and/or --bic FILE' },
    usage: ['directory import [--fedach FILE] [--fedwire FILE] [--bic FILE] [--json]', 'replace the built-in bank directory of each kind given', '(FedACHdir.txt, fpddir.txt, a BIC list as CSV)'],
  },
  'directory status': { options: ['json'], positionals: 2, usage: ['directory status [--json]', 'where each kind of bank directory data came from'] },
  'ledger verify': {
    options: ['json'],
    positionals: 2,
    usage: ['ledger verify [--json]', 'recompute every balance from the ledger entries and check', 'every invariant; exits 1 and names the rows on a violation'],
  },
} satisfies Record<string, CommandLine>;

interface CommandLine {
  options: readonly OptionName[];
  positionals: number;
  /** What the command cannot run without: one of these options with a value, or its last word (`keys revoke`'s prefix). */
  needs?: { oneOf?: readonly OptionName[]; lastWord?: true; text: string };
  usage: readonly [string, ...string[]];
}

type CommandName = keyof typeof commandLines;

/**
 * The command the line's words name: its first word, or its first two (`clients list`). Own keys
 * only: until 2026-12-07 `openbaas constructor` crashed on Object's.
 */
function commandNameOf(positionals: readonly string[]): CommandName | undefined {
  const [command = '', subcommand = ''] = positionals;
  return [command, `${command} ${subcommand}`].find((name): name is CommandName => Object.hasOwn(commandLines, name));
}

/** The usage lines of some commands: each synopsis with its description in a column (below it when the synopsis is too long). */
function commandUsage(names: readonly CommandName[]): string {
  const column = 47;
  const lines: string[] = [];
  for (const name of names) {
    const [synopsis, first = '', ...more] = commandLines[name].usage;
    if (synopsis.length + 3 > column) lines.push(`  ${synopsis}`, `${' '.repeat(column)}${first}`);
    else lines.push(`  ${synopsis.padEnd(column - 3)} ${first}`);
    for (const line of more) lines.push(`${' '.repeat(column)}${line}`);
  }
  return lines.join('\n');
}

const configurationNote = `Configuration comes from environment variables (see README). With no DATABASE_URL the embedded
database in DATA_DIR (default ./data) is used; it is locked by a running server, so use the
/v1/admin HTTP routes (OPENBAAS_ADMIN_KEY) to administer a running embedded server.`;

const usage = `Usage: openbaas <command> [options]

Commands:
${commandUsage(Object.keys(commandLines) as CommandName[])}

${configurationNote}`;

/**
 * `openbaas <command> --help`: the lines of that command, or of the commands its first word names
 * (`openbaas keys --help`); an unknown command is a mistake. Until 2026-12-07 every `--help`
 * printed the whole usage.
 */
function helpFor(positionals: readonly string[]): string {
  const [command = '', subcommand = ''] = positionals;
  const exact = commandNameOf(positionals);
  const group = subcommand === '' ? (Object.keys(commandLines) as CommandName[]).filter((name) => name.startsWith(`${command} `)) : [];
  if (exact !== undefined) {
    const [synopsis, ...description] = commandLines[exact].usage;
    const text = description.join('\n');
    return `Usage: openbaas ${synopsis}\n\n${text.charAt(0).toUpperCase()}${text.slice(1)}.\n\n${configurationNote}`;
  }
  if (group.length > 0) return `Usage: openbaas ${command} <command> [options]\n\nCommands:\n${commandUsage(group)}\n\n${configurationNote}`;
  throw new UsageError(`Unknown command: ${positionals.join(' ')}`);
}

function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);
}

/**
 * Whether the data folder holds a database, or may: a folder this user may not search (another
 * user's, 0700) cannot tell, and opening it then refuses it in one line naming the permission.
 * Until 2026-12-08 such a folder was said to hold no database (found by an audit).
 */
function mayHoldDatabase(dataDir: string): boolean {
  try {
    return fs.statSync(path.join(dataDir, 'PG_VERSION'), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}

/**
 * Opens the database for a command. A command that only reads or changes what a database holds
 * (`purpose` says what it would do) refuses an embedded data folder holding none, before opening
 * it: until 2026-12-07 it created one, so `ledger verify` run from the wrong folder (or with
 * DATA_DIR unset) reported an empty, new database clean (found by an audit); openDeps refuses a
 * PostgreSQL database no migration was applied to in the same way. Commands that set a database
 * up (`migrate`, `clients create`, `directory import`) create it as the server does.
 */
async function withDeps<T>(work: (deps: Deps) => Promise<T>, purpose?: string): Promise<T> {
  const config = loadConfig(process.env, { runWorkers: false });
  if (purpose !== undefined && config.databaseUrl === undefined && !mayHoldDatabase(config.dataDir)) {
    throw new ConfigError(
      `there is no database in ${config.dataDir} (DATA_DIR, default ./data), so nothing to ${purpose}: ` +
        'point DATA_DIR (or DATABASE_URL) at the database you mean, or start `openbaas serve` once to create one there.',
    );
  }
  const deps = await (await program()).openDeps(config, { purpose });
  try {
    return await work(deps);
  } finally {
    await deps.database.close();
  }
}

/** A mistake in the command line (an unknown option, an option without its value): one line and the usage. */
class UsageError extends Error {
  override name = 'UsageError';
}

const options = {
  memory: { type: 'boolean' },
  port: { type: 'string' },
  'no-workers': { type: 'boolean' },
  name: { type: 'string' },
  client: { type: 'string' },
  'read-only': { type: 'boolean' },
  'allow-ip': { type: 'string', multiple: true },
  json: { type: 'boolean' },
  fedach: { type: 'string' },
  fedwire: { type: 'string' },
  bic: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type OptionName = keyof typeof options;

/**
 * Refuses an unknown command, an option the command does not read, a word after its name it does
 * not take, or a command without what it needs (until 2026-12-08 the last was found once the
 * command's modules had loaded, and said in one line without the usage; found by an audit).
 */
function checkCommandLine(positionals: readonly string[], values: Readonly<Record<string, unknown>>): void {
  const given = Object.keys(values);
  const name = commandNameOf(positionals);
  // The command's words only, with the prefix of every other mistake (until 2026-12-07 the whole
  // line, options too, and without it), before any module is loaded (found by audits).
  if (name === undefined) throw new UsageError(`Unknown command: ${positionals.join(' ')}`);
  const line: CommandLine = commandLines[name];
  const foreign = given.find((option) => option !== 'help' && !line.options.includes(option as OptionName));
  if (foreign !== undefined) throw new UsageError(`Option '--${foreign}' is not an option of '${name}'`);
  const extra = positionals[line.positionals];
  if (extra !== undefined) throw new UsageError(`Unexpected argument '${extra}' after '${positionals.slice(0, line.positionals).join(' ')}'`);
  const { needs } = line;
  if (!needs) return;
  const met = needs.lastWord ? Boolean(positionals[line.positionals - 1]) : (needs.oneOf ?? []).some((option) => Boolean(values[option]));
  if (!met) throw new UsageError(`${name} needs ${needs.text}`);
}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options });
  } catch (error) {
    // parseArgs throws a TypeError whose code starts with ERR_PARSE_ARGS_ for an unknown option,
    // an option missing its value or a value given to a flag; its message names the option.
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) throw new UsageError((error as Error).message);
    throw error;
  }
}

async function main(argv: string[]): Promise<number> {
  // The command is read from the words that are not options, so options may come anywhere
  // (`clients --json list`; until 2026-12-07 that was an unknown command; found by an audit).
  const { values, positionals } = parseCommandLine(argv);
  const [command, subcommand] = positionals;
  const json = values.json ?? false;
  if (values.help && command) {
    process.stdout.write(`${helpFor(positionals)}\n`);
    return 0;
  }
  if (values.help || !command) {
    process.stdout.write(`${usage}\n`);
    // Asked for (`--help` or `-h` alone), the usage is an answer; without a command, a mistake.
    return values.help ? 0 : 1;
  }
  checkCommandLine(positionals, values);
  switch (command) {
    case 'serve': {
      // The PORT variable's rule: until 2026-12-06 `--port 1e1` listened on port 10 and `--port ""`
      // on a random port, read by Number (found by an audit).
      const port = values.port === undefined ? undefined : wholeNumber('--port', values.port, portMin, portMax);
      const config = loadConfig(process.env, { memory: values.memory ?? false, runWorkers: !values['no-workers'], ...(port === undefined ? {} : { port }) });
      await (await program()).serve(config);
      return -1;
    }
    case 'worker':
      await (await program()).runWorkersOnly(loadConfig(process.env));
      return -1;
    case 'migrate': {
      // Says what it applied (until 2026-12-07 it printed "up to date" also after applying all of them; found by an audit).
      let applied: readonly string[] = [];
      const config = loadConfig(process.env, { runWorkers: false });
      const deps = await (await program()).openDeps(config, { onMigrated: (versions) => (applied = versions) });
      await deps.database.close();
      const first = applied[0];
      const last = applied.at(-1);
      const text = first === undefined ? 'Migrations are up to date: none to apply.' : `Applied ${applied.length} migration${applied.length === 1 ? '' : 's'} (${first === last ? first : `${first} to ${last ?? ''}`}); migrations are up to date.`;
      print(json, { migrated: true, applied }, text);
      return 0;
    }
    case 'clients': {
      const tenants = await import('./modules/tenants/tenants.service.js');
      if (subcommand === 'create') {
        const name = values.name;
        assert(name, 'checkCommandLine asks for --name');
        const result = await withDeps((deps) => tenants.createClientWithKey(deps, name));
        print(json, result, `Client ${result.client.id} (${result.client.name})\nAPI key (shown once): ${result.apiKey.key}`);
        return 0;
      }
      if (subcommand === 'list') {
        const clients = await withDeps((deps) => tenants.listClients(deps), 'list');
        print(json, clients, clients.map((client) => `${client.id}  ${client.name}  ${client.createdAt}`).join('\n') || 'No clients.');
        return 0;
      }
      break;
    }
    case 'keys': {
      const tenants = await import('./modules/tenants/tenants.service.js');
      if (subcommand === 'create') {
        const clientId = values.client;
        assert(clientId, 'checkCommandLine asks for --client');
        const apiKey = await withDeps((deps) =>
          tenants.createApiKey(deps, clientId, { readOnly: values['read-only'] ?? false, allowedCidrs: values['allow-ip'] ?? [], cidrField: '--allow-ip' }),
          'create a key for',
        );
        print(json, apiKey, `API key (shown once): ${apiKey.key}${apiKey.readOnly ? ' (read-only)' : ''}`);
        return 0;
      }
      if (subcommand === 'revoke') {
        const prefix = positionals[2];
        assert(prefix, 'checkCommandLine asks for the prefix');
        const revoked = await withDeps((deps) => tenants.revokeApiKey(deps, prefix), 'revoke');
        print(json, revoked, `Revoked ${revoked.prefix} at ${revoked.revokedAt}.`);
        return 0;
      }
      break;
    }
    case 'directory': {
      const { DirectoryFileError, directorySources, readDirectoryFiles, writeDirectoryFiles } = await import('./modules/bank-directory/index.js');
      explained.push(DirectoryFileError);
      if (subcommand === 'import') {
        const files = { fedach: values.fedach, fedwire: values.fedwire, bic: values.bic };
        const read = await readDirectoryFiles(files);
        const imported = await withDeps((deps) => writeDirectoryFiles(deps.db, read, deps.clock.now()));
        print(json, imported, imported.map((entry) => `Imported ${entry.recordCount} ${entry.kind} records from ${entry.fileName}.`).join('\n'));
        return 0;
      }
      if (subcommand === 'status') {
        const sources = await withDeps((deps) => directorySources(deps.db), 'report on');
        const lines = sources.map(
          (source) =>
            `${source.kind.padEnd(15)} ${source.origin.padEnd(9)} ${String(source.recordCount).padStart(7)} records  ` +
            `${source.fileName ?? 'built-in'}  ${source.loadedAt.toISOString()}`,
        );
        print(json, sources, lines.join('\n') || 'The bank directory is empty; the server loads the built-in directory when it starts.');
        return 0;
      }
      break;
    }
    case 'ledger':
      if (subcommand === 'verify') {
        const { ledgerVerifyCommand } = await import('./modules/ledger/index.js');
        return withDeps((deps) => ledgerVerifyCommand(deps.db, (text) => process.stdout.write(text), json), 'verify');
      }
      break;
    default:
      break;
  }
  // Only a command of commandLines that the switch does not run gets here (a bug).
  throw new Error(`no code runs the command '${positionals.join(' ')}'`);
}

/**
 * A failure under `--json`: one JSON line on stderr, `{ "error": { "name", "code"?, "message" } }`
 * (and the stack of an unexpected one), so a script reading the command's JSON can read its
 * failure too (until 2026-12-06 it was plain text; found by an audit). Exit status 1 as always.
 */
function jsonFailure(error: unknown, expected: boolean): string {
  const failure = error instanceof Error ? error : new Error(String(error));
  const code = error instanceof AppError ? error.code : undefined;
  return `${JSON.stringify({ error: { name: failure.name, ...(code === undefined ? {} : { code }), message: failure.message, ...(expected ? {} : { stack: failure.stack }) } })}\n`;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    const expected = explained.some((kind) => error instanceof kind);
    if (process.argv.slice(2).includes('--json')) {
      process.stderr.write(jsonFailure(error, expected || error instanceof UsageError));
    } else if (error instanceof UsageError) {
      process.stderr.write(`openbaas: ${error.message}\n\n${usage}\n`);
    } else if (expected) {
      process.stderr.write(`openbaas: ${(error as Error).message}\n`);
    } else {
      process.stderr.write(`openbaas: ${(error as Error).stack ?? String(error)}\n`);
    }
    process.exit(1);
  },
);

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export class DataFolderLockedError extends Error {
  override name = 'DataFolderLockedError';
}

/** DATA_DIR names no folder that can be made (a file is in the way) or used by this user (another user's, not writable). */
export class DataFolderUnusableError extends Error {
  override name = 'DataFolderUnusableError';
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM means the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A process killed but not yet reaped by its parent (a zombie, state Z) still answers signal 0,
  // for as long as its parent takes: it holds nothing (until 2026-12-05 a restart right after a
  // kill -9 was refused; found by an audit). Linux only; elsewhere it counts as alive.
  return procField(pid, 'stat')?.replace(/^.*\) /s, '').startsWith('Z') !== true;
}

/** /proc/<pid>/<name> on Linux; undefined where there is none or it cannot be read. */
function procField(pid: number, name: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** The owner's command line as Linux shows it, for the refusal's message ("" where unknown). */
function commandOf(pid: number): string {
  const command = procField(pid, 'cmdline')?.split('\0').filter((part) => part !== '').join(' ');
  return command ? `: ${command.length > 200 ? `${command.slice(0, 200)}…` : command}` : '';
}

/** The user this process runs as, for the messages ("" where the platform has none). */
function ourUser(): string {
  return typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
}

/**
 * A data folder this user may not use (a folder or file another user owns, a folder it may not
 * write in, a read-only file system): one line naming DATA_DIR and the cause, not Node's error
 * with a stack (until 2026-12-07; found by an audit). Other failures are thrown as they are.
 */
function unusableFolder(dataDir: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return error;
  const errorPath = (error as NodeJS.ErrnoException).path;
  const owner = errorPath === undefined ? undefined : ownerOf(errorPath);
  const ownedByOther = owner !== undefined && typeof process.getuid === 'function' && owner.uid !== process.getuid();
  return new DataFolderUnusableError(
    `The data folder ${dataDir} (DATA_DIR) cannot be used by this user${ourUser()}: ${(error as Error).message}` +
      (ownedByOther ? ` (owned by uid ${owner.uid})` : '') +
      '. The folder and its files must belong to the user that runs OpenBaaS, who must be able to write in it; or choose another DATA_DIR.',
  );
}

/**
 * The nearest of `file` and its parents that this user may stat, for the owner in the message: a
 * file inside a folder this user may not search (another user's, 0700 as OpenBaaS makes it) cannot
 * be stat'ed itself, and until 2026-12-07 that second EACCES was printed with its stack instead of
 * the one line (found by an audit).
 */
function ownerOf(file: string): fs.Stats | undefined {
  for (let at = path.resolve(file); ; at = path.dirname(at)) {
    try {
      return fs.statSync(at, { throwIfNoEntry: false });
    } catch {
      if (path.dirname(at) === at) return undefined;
    }
  }
}

/**
 * The database files of an existing data folder (made by another user, say) that this user may
 * not read and write: refused in one line before PGlite opens them (until 2026-12-07 PGlite failed
 * with "failed to initialize properly" and a stack, not naming the cause; found by an audit).
 */
function checkDatabaseFiles(dataDir: string): void {
  // Read only: PG_VERSION and postgresql.conf; read and written: pg_control and the folders.
  const { R_OK, W_OK, X_OK } = fs.constants;
  for (const [name, access] of [
    ['PG_VERSION', R_OK],
    ['postgresql.conf', R_OK],
    [path.join('global', 'pg_control'), R_OK | W_OK],
    ['base', R_OK | W_OK | X_OK],
    ['global', R_OK | W_OK | X_OK],
    ['pg_wal', R_OK | W_OK | X_OK],
  ] as const) {
    const file = path.join(dataDir, name);
    if (fs.existsSync(file)) fs.accessSync(file, access);
  }
}

/**
 * The data folder holds the database's files and the encryption key: made 0700, and an existing
 * one loses any write access of its group and all access of others (0750 at most, what PostgreSQL
 * itself accepts for its data directory). The files PGlite writes follow the process's umask, so
 * under a umask of 0 they were world-writable in a world-readable folder (found by an audit,
 * 2026-12-02); a folder others cannot enter makes the files' own modes moot.
 */
function keepDataFolderPrivate(dataDir: string): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    // A file where the folder (or one of its parents) should be: one line saying so, not Node's
    // EEXIST with a stack trace (until 2026-12-07; found by an audit).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new DataFolderUnusableError(`The data folder ${dataDir} (DATA_DIR) cannot be made: a file is in its place or in its path's.`);
    throw error;
  }
  const mode = fs.statSync(dataDir).mode & 0o777;
  if ((mode & 0o027) !== 0) fs.chmodSync(dataDir, mode & 0o750);
}

/**
 * The lock files this process holds (by their real path). A lock file holding our own pid is ours
 * only if it is one of these: otherwise an earlier process with the same pid left it, which is
 * the rule in a container, where the server is PID 1 on every start (until 2026-12-07 such a lock
 * was refused as "already open in this process" for ever after a kill -9 or an OOM kill; found by
 * an audit).
 */
const lockedByThisProcess = new Set<string>();

/**
 * PGlite is a single-process database: two processes on one data folder would corrupt it. The
 * lock file holds the owner's pid; a lock left by a process that no longer runs is taken over.
 */
export function acquireDataFolderLock(dataDir: string): () => void {
  try {
    keepDataFolderPrivate(dataDir);
    checkDatabaseFiles(dataDir);
    return lockDataFolder(dataDir);
  } catch (error) {
    throw unusableFolder(dataDir, error);
  }
}

/**
 * Creates `target` holding our pid, whole, or answers false when it exists: the pid is written to
 * a file of this process's own first, then hard-linked to `target` (link fails if it exists), so
 * no other process ever reads a lock file still empty.
 */
function createHoldingOurPid(target: string): boolean {
  const own = `${target}.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    fs.writeFileSync(own, String(process.pid), { flag: 'wx' });
  } catch (error) {
    // A folder this user may not write in: the refusal names the lock file, not this one.
    const failure = error as NodeJS.ErrnoException;
    failure.message = failure.message.replace(own, target);
    failure.path = target;
    throw failure;
  }
  try {
    fs.linkSync(own, target);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A file system without hard links: made in place, as before 2026-12-07.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return createInPlace(target);
    throw error;
  } finally {
    fs.rmSync(own, { force: true });
  }
}

function createInPlace(target: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(target, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    fs.writeSync(fd, String(process.pid));
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/** The pid in a lock file (NaN for an empty or garbled one); undefined when the file is gone. */
function pidIn(file: string): number | undefined {
  try {
    return Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Whether a lock holding `pid` was left by a process that is gone (or by an earlier process with our pid). */
function isStale(pid: number, lockPath: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return !lockedByThisProcess.has(lockPath);
  return !processIsAlive(pid);
}

/** Waits a few milliseconds without returning to the event loop (the lock is taken synchronously). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Our own files `<lock>.<pid>.<hex>` (and the takeover's) left by a process killed in the moment
 * it wrote one (a kill -9 at the lock): removed when they are a minute old and their pid is gone
 * (until 2026-12-07 they stayed for good; found by an audit). Their pid is checked too, and their
 * age is what makes it safe where the pid means another process (another container's).
 */
function removeLeftovers(lockPath: string): void {
  const folder = path.dirname(lockPath);
  const leftover = new RegExp(`^${path.basename(lockPath).replace('.', '\\.')}(?:\\.takeover)?\\.(\\d+)\\.[0-9a-f]{12}$`);
  try {
    for (const name of fs.readdirSync(folder)) {
      const pid = Number(leftover.exec(name)?.[1]);
      if (!pid || pid === process.pid || processIsAlive(pid)) continue;
      const file = path.join(folder, name);
      if (Date.now() - fs.statSync(file).mtimeMs > 60_000) fs.rmSync(file, { force: true });
    }
  } catch {
    // Tidying only: a file gone meanwhile or one this user may not remove is left.
  }
}

/**
 * Takes the lock. A stale lock is removed only by the process holding `openbaas.lock.takeover`
 * (made as the lock is, so one process at a time), which checks again that the lock is stale
 * before removing it: until 2026-12-07 two processes starting at once on a stale lock could both
 * read it stale, and the second removed the lock the first had just made, so both opened the
 * database (found by an audit). A takeover file left by a process that died in the few system
 * calls it is held for is removed in turn.
 */
function lockDataFolder(dataDir: string): () => void {
  const lockPath = path.join(fs.realpathSync(dataDir), 'openbaas.lock');
  const takeoverPath = `${lockPath}.takeover`;
  for (let attempt = 0; attempt < 200; attempt++) {
    if (createHoldingOurPid(lockPath)) {
      lockedByThisProcess.add(lockPath);
      removeLeftovers(lockPath);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        lockedByThisProcess.delete(lockPath);
        try {
          if (fs.readFileSync(lockPath, 'utf8').trim() === String(process.pid)) fs.unlinkSync(lockPath);
        } catch {
          // already gone: nothing to release
        }
      };
    }
    const ownerPid = pidIn(lockPath);
    if (ownerPid === undefined) continue; // released meanwhile: try again
    if (!isStale(ownerPid, lockPath)) {
      if (ownerPid === process.pid) throw new DataFolderLockedError(`The data folder ${dataDir} is already open in this process.`);
      throw new DataFolderLockedError(
        `The data folder ${dataDir} is in use by another OpenBaaS process (pid ${ownerPid}${commandOf(ownerPid)}). ` +
          'Stop that process first, or use another DATA_DIR (or DATABASE_URL for PostgreSQL, which several processes can share). ' +
          `If that pid is not OpenBaaS (the one that locked the folder died and its pid was reused), delete ${path.join(dataDir, 'openbaas.lock')}.`,
      );
    }
    // Stale lock from a process that died (or from an earlier process that had our pid).
    if (!createHoldingOurPid(takeoverPath)) {
      const takerPid = pidIn(takeoverPath);
      if (takerPid !== undefined && isStale(takerPid, takeoverPath)) fs.rmSync(takeoverPath, { force: true });
      else pause(2);
      continue;
    }
    try {
      const now = pidIn(lockPath);
      if (now !== undefined && isStale(now, lockPath)) fs.rmSync(lockPath, { force: true });
    } finally {
      fs.rmSync(takeoverPath, { force: true });
    }
  }
  throw new DataFolderLockedError(`Could not lock the data folder ${dataDir}.`);
}

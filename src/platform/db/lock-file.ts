import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
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

/** A file's text; undefined where there is none or it cannot be read (a /proc file off Linux, a lock file removed meanwhile). */
function readIfPresent(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** /proc/<pid>/<name> on Linux; undefined where there is none or it cannot be read. */
function procField(pid: number, name: string): string | undefined {
  return readIfPresent(`/proc/${pid}/${name}`);
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
 * Who holds a lock, beside its pid: the host, the PID namespace and the boot. A pid says whether
 * its process runs only when the reader shares all three: two containers on one volume are both
 * PID 1 (until 2026-12-07 the second took the first's lock as its own left by a kill -9, both
 * opened the database and the writes of one were lost; found by an audit), a command run outside
 * the container reads pid 1 as init, and after a reboot the pid is someone else's.
 */
function identityLine(): string {
  let pidNamespace = '-';
  try {
    pidNamespace = fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    // not Linux: the host name and the pid alone, as before
  }
  const boot = readIfPresent('/proc/sys/kernel/random/boot_id')?.trim() || '-';
  return `host=${os.hostname()} pidns=${pidNamespace} boot=${boot}`;
}


const ourIdentity = identityLine();

/**
 * A lock held from elsewhere (another container, host or boot) cannot be judged by its pid: its
 * holder sets the file's modification time every `refreshMs` while it holds it (on its main
 * thread: a PGlite call can keep the event loop busy, seconds at most), and it is stale only when
 * not refreshed for `foreignStaleMs`. A holder frozen for longer (SIGSTOP, a debugger) may lose
 * the lock to a process elsewhere.
 */
const refreshMs = 5_000;
const foreignStaleMs = 30_000;
/** `openbaas.lock.takeover` is held for a few system calls: older than this, its holder is gone whatever its pid says. */
const takeoverStaleMs = 10_000;
/** How long a start keeps trying before it gives up (beyond a wait for a foreign lock). */
const tryForMs = 2 * takeoverStaleMs;

/**
 * The contents of the lock files this process holds (by their real path). A lock file holding our
 * own pid and identity is ours only if it is one of these: otherwise an earlier process with the
 * same pid left it (until 2026-12-07 such a lock was refused as "already open in this process" for
 * ever after a kill -9 or an OOM kill; found by an audit).
 */
const lockedByThisProcess = new Map<string, string>();

/**
 * PGlite is a single-process database: two processes on one data folder would corrupt it. The
 * lock file holds the owner's pid and identity; a lock left by a process that no longer runs is
 * taken over.
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

/** A file of this process's own beside `target` (`<target>.<pid>.<hex>`), for a write or a rename. */
function ownName(target: string): string {
  return `${target}.${process.pid}.${randomBytes(6).toString('hex')}`;
}

/**
 * Creates `target` holding our pid, identity and a random tag, whole, and answers that content, or
 * undefined when `target` exists: the content is written to a file of this process's own first,
 * then hard-linked to `target` (link fails if it exists), so no other process ever reads a lock
 * file still empty. The tag makes the content this one lock's, so a process removes only the very
 * file it judged.
 */
function createHoldingOurPid(target: string): string | undefined {
  const content = `${process.pid}\n${ourIdentity}\ntag=${randomBytes(8).toString('hex')}\n`;
  const own = ownName(target);
  try {
    fs.writeFileSync(own, content, { flag: 'wx' });
  } catch (error) {
    // A folder this user may not write in: the refusal names the lock file, not this one.
    const failure = error as NodeJS.ErrnoException;
    failure.message = failure.message.replace(own, target);
    failure.path = target;
    throw failure;
  }
  try {
    fs.linkSync(own, target);
    return content;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return undefined;
    // A file system without hard links: made in place, as before 2026-12-07.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return createInPlace(target, content);
    throw error;
  } finally {
    fs.rmSync(own, { force: true });
  }
}

function createInPlace(target: string, content: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(target, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  try {
    fs.writeSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
  return content;
}

/** A lock file as read: its content, pid (NaN for an empty or garbled one), identity ("" in a lock of a build before 2026-12-07) and modification time. */
interface LockFile {
  content: string;
  pid: number;
  identity: string;
  modifiedMs: number;
}

/** The lock file `file`; undefined when it is gone. */
function readLock(file: string): LockFile | undefined {
  try {
    const content = fs.readFileSync(file, 'utf8');
    const modifiedMs = fs.statSync(file).mtimeMs;
    const [pidLine = '', identity = ''] = content.split('\n');
    return { content, pid: Number.parseInt(pidLine.trim(), 10), identity: identity.trim(), modifiedMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Whether the pid of `lock` can be checked here: written by a process of this host, PID namespace and boot, or by a build that wrote no identity. */
function sameIdentity(lock: LockFile): boolean {
  return lock.identity === '' || lock.identity === ourIdentity;
}

/**
 * 'stale' for a lock left by a process that is gone (or by an earlier process with our pid),
 * 'held' for one whose process runs, 'foreign' for one held from elsewhere and refreshed within
 * `foreignStaleMs` (maybe held: see waitForForeignLock).
 */
function judge(lock: LockFile, lockPath: string): 'stale' | 'held' | 'foreign' {
  if (!Number.isInteger(lock.pid) || lock.pid <= 0) return 'stale';
  if (!sameIdentity(lock)) return Date.now() - lock.modifiedMs > foreignStaleMs ? 'stale' : 'foreign';
  if (lock.pid === process.pid) return lockedByThisProcess.get(lockPath) === lock.content ? 'held' : 'stale';
  return processIsAlive(lock.pid) ? 'held' : 'stale';
}

/** Waits a few milliseconds without returning to the event loop (the lock is taken synchronously). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Removes `file` only if it still holds `content` (the stale file this process judged): it is
 * renamed to a name of our own first, so what is checked is what was removed, and a file another
 * process made meanwhile is put back. Until 2026-12-07 a stale takeover file was removed blindly,
 * so processes that had read the same dead pid each removed the one another had just made, held
 * the takeover together and removed each other's new lock (found by an audit).
 */
function removeIfStill(file: string, content: string): void {
  const own = ownName(file);
  try {
    fs.renameSync(file, own);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (readIfPresent(own) === content) {
    fs.rmSync(own, { force: true });
    return;
  }
  try {
    fs.linkSync(own, file);
  } catch {
    // Another file took its place meanwhile (it was gone for a few instructions): that one stays.
  } finally {
    fs.rmSync(own, { force: true });
  }
}

/** What the refusal says of a lock's holder: its pid and command here, or where it runs. */
function holderOf(lock: LockFile): string {
  if (sameIdentity(lock)) return `pid ${lock.pid}${commandOf(lock.pid)}`;
  const host = /host=(\S+)/.exec(lock.identity)?.[1] ?? '?';
  return `pid ${lock.pid} on host ${host}, in another container (PID namespace) or on another machine`;
}

/**
 * A lock held from elsewhere and refreshed lately: waits (once, saying so) until it is refreshed
 * (held: 'held'), replaced or removed ('changed'), or not refreshed for `foreignStaleMs` ('stale').
 * A container restarted after a kill -9 finds its earlier self's lock this way; a second container
 * on the same volume finds the first's, refreshed.
 */
function waitForForeignLock(dataDir: string, lockPath: string, lock: LockFile): 'held' | 'changed' | 'stale' {
  process.stderr.write(
    `openbaas: the data folder ${dataDir} is locked by ${holderOf(lock)}; waiting up to ${foreignStaleMs / 1000} s to see whether that process still runs…\n`,
  );
  const since = Date.now();
  for (;;) {
    pause(250);
    const now = readLock(lockPath);
    if (now === undefined || now.content !== lock.content) return 'changed';
    if (now.modifiedMs !== lock.modifiedMs) return 'held';
    if (Date.now() - now.modifiedMs > foreignStaleMs || Date.now() - since > foreignStaleMs) return 'stale';
  }
}

/**
 * Tidies the folder once this process holds the lock. Our own files `<lock>.<pid>.<hex>` (and the
 * takeover files') left by a process killed in the moment it wrote one (a kill -9 at the lock):
 * removed when they are a minute old and their pid is gone (until 2026-12-07 they stayed for good;
 * found by an audit); their pid is checked too, and their age is what makes it safe where the pid
 * means another process (another container's). The takeover files (a taker killed holding one, a
 * process too slow to use its own, and the single `openbaas.lock.takeover` of a build before
 * 2026-12-08): removed, as each names a lock that is gone and none can be used again.
 */
function removeLeftovers(lockPath: string): void {
  const folder = path.dirname(lockPath);
  const lockName = path.basename(lockPath).replace('.', '\\.');
  const takeover = '\\.takeover(?:\\.[0-9a-f]{16}\\.\\d+)?';
  const takeoverFile = new RegExp(`^${lockName}${takeover}$`);
  const leftover = new RegExp(`^${lockName}(?:${takeover})?\\.(\\d+)\\.[0-9a-f]{12}$`);
  try {
    for (const name of fs.readdirSync(folder)) {
      const file = path.join(folder, name);
      if (takeoverFile.test(name)) {
        fs.rmSync(file, { force: true });
        continue;
      }
      const pid = Number(leftover.exec(name)?.[1]);
      if (!pid || pid === process.pid || processIsAlive(pid)) continue;
      if (Date.now() - fs.statSync(file).mtimeMs > 60_000) fs.rmSync(file, { force: true });
    }
  } catch {
    // Tidying only: a file gone meanwhile or one this user may not remove is left.
  }
}

/**
 * Keeps the lock's modification time fresh while this process holds the lock (see refreshMs); it
 * stops when the lock no longer holds our content. The timer does not keep the process alive.
 */
function keepFresh(lockPath: string, content: string): () => void {
  const timer = setInterval(() => {
    try {
      if (readIfPresent(lockPath) !== content) {
        clearInterval(timer);
        return;
      }
      const now = new Date();
      fs.utimesSync(lockPath, now, now);
    } catch {
      // Next time.
    }
  }, refreshMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Takes the lock. A stale lock is removed only by the process holding `openbaas.lock.takeover`
 * (made as the lock is, so one process at a time), which checks again that the lock is stale
 * before removing it: until 2026-12-07 two processes starting at once on a stale lock could both
 * read it stale, and the second removed the lock the first had just made, so both opened the
 * database (found by an audit). A takeover file left by a process that died in the few system
 * calls it is held for, or older than `takeoverStaleMs`, is removed in turn; stale files are
 * removed only while they still hold what was judged (removeIfStill).
 */
function lockDataFolder(dataDir: string): () => void {
  const lockPath = path.join(fs.realpathSync(dataDir), 'openbaas.lock');
  const shownLock = path.join(dataDir, 'openbaas.lock');
  let waited = false;
  let deadline = Date.now() + tryForMs;
  let lastTakeover: LockFile | undefined;
  const takeoverSeenSince = new Map<string, number>();
  while (Date.now() < deadline) {
    const content = createHoldingOurPid(lockPath);
    if (content !== undefined) {
      lockedByThisProcess.set(lockPath, content);
      removeLeftovers(lockPath);
      const stopRefreshing = keepFresh(lockPath, content);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        stopRefreshing();
        lockedByThisProcess.delete(lockPath);
        // Only the lock this process made: one another process took over meanwhile is its own.
        removeIfStill(lockPath, content);
      };
    }
    const lock = readLock(lockPath);
    if (lock === undefined) continue; // released meanwhile: try again
    let verdict = judge(lock, lockPath);
    if (verdict === 'foreign') {
      if (waited) verdict = 'held';
      else {
        waited = true;
        const seen = waitForForeignLock(dataDir, lockPath, lock);
        deadline = Date.now() + tryForMs;
        if (seen === 'changed') continue;
        verdict = seen;
      }
    }
    if (verdict === 'held') {
      if (lock.pid === process.pid && sameIdentity(lock)) throw new DataFolderLockedError(`The data folder ${dataDir} is already open in this process.`);
      if (!sameIdentity(lock)) {
        throw new DataFolderLockedError(
          `The data folder ${dataDir} is in use by another OpenBaaS process (${holderOf(lock)}), which keeps its lock ${shownLock} fresh. ` +
            'Stop that process first (one data folder serves one process: two containers on one volume cannot share it), or use another DATA_DIR (or DATABASE_URL for PostgreSQL, which several processes can share).',
        );
      }
      throw new DataFolderLockedError(
        `The data folder ${dataDir} is in use by another OpenBaaS process (${holderOf(lock)}). ` +
          'Stop that process first, or use another DATA_DIR (or DATABASE_URL for PostgreSQL, which several processes can share). ' +
          `If that pid is not OpenBaaS (the one that locked the folder died and its pid was reused), delete ${shownLock}.`,
      );
    }
    // A stale lock: taken over by the holder of its takeover file only (takeoverFileOf). A taker
    // that died holding one leaves it: the next attempt's file is tried, never that one removed.
    let ourTakeover: string | undefined;
    let taker: LockFile | undefined;
    let takeoverPath = '';
    for (let attempt = 1; attempt <= takeoverAttemptsMax; attempt++) {
      takeoverPath = takeoverFileOf(lockPath, lock.content, attempt);
      ourTakeover = createHoldingOurPid(takeoverPath);
      if (ourTakeover !== undefined) break;
      taker = readLock(takeoverPath);
      if (taker === undefined || !takeoverIsStale(taker, takeoverPath, takeoverSeenSince)) break;
    }
    if (ourTakeover === undefined) {
      // Another process is taking the lock over (or its file went meanwhile): look again shortly.
      if (taker !== undefined) lastTakeover = taker;
      pause(2);
      continue;
    }
    try {
      // Still the lock judged stale, now that no other process may replace it (only the holder of
      // its takeover file may): the very lock judged above, not refreshed since (one from
      // elsewhere judged by waiting), or another judged stale again.
      const now = readLock(lockPath);
      const unchanged = now !== undefined && now.content === lock.content && now.modifiedMs === lock.modifiedMs;
      if (now !== undefined && (unchanged || (now.content === lock.content && judge(now, lockPath) === 'stale'))) removeIfStill(lockPath, now.content);
    } finally {
      fs.rmSync(takeoverPath, { force: true });
    }
  }
  throw new DataFolderLockedError(
    `Could not lock the data folder ${dataDir}: the takeover files of its stale lock ${shownLock} ` +
      `(openbaas.lock.takeover.*, held for a moment by a process that takes over a stale lock) stayed in place${lastTakeover === undefined ? '' : ` (${holderOf(lastTakeover)})`}. ` +
      `If no OpenBaaS process is starting on this folder, delete ${shownLock} and those files.`,
  );
}

/** Attempts at taking over one stale lock, each with its takeover file, before giving up (each stale one is older than takeoverStaleMs or its holder dead). */
const takeoverAttemptsMax = 64;

/**
 * The takeover file of a stale lock (`openbaas.lock.takeover.<generation>.<attempt>`): its name is
 * that lock's own (a hash of its content, which a random tag makes unique), so exactly one process
 * can make it, and none ever removes another's: a taker that died holding it is passed by the next
 * attempt's file. Until 2026-12-08 one file served every takeover, and a stale one was removed (as
 * carefully as a rename allows): between the rename and the putting back of a file made meanwhile
 * a third process could make one, so two processes held the takeover and one removed the lock the
 * other had just made (with pauses injected before the links, 10 of 40 races of 8 processes ended
 * with two or three holding the lock; none of 200 since).
 */
export function takeoverFileOf(lockPath: string, staleContent: string, attempt: number): string {
  const generation = createHash('sha256').update(staleContent).digest('hex').slice(0, 16);
  return `${lockPath}.takeover.${generation}.${attempt}`;
}

/** Whether a takeover file's holder is gone: old by its time, or by how long this process has seen it (a clock ahead of ours), or left by a dead pid. */
function takeoverIsStale(taker: LockFile, takeoverPath: string, seenSince: Map<string, number>): boolean {
  const seenKey = `${takeoverPath}\n${taker.content}`;
  if (!seenSince.has(seenKey)) seenSince.set(seenKey, Date.now());
  return (
    Date.now() - taker.modifiedMs > takeoverStaleMs ||
    Date.now() - (seenSince.get(seenKey) ?? Date.now()) > takeoverStaleMs ||
    (sameIdentity(taker) && judge(taker, takeoverPath) === 'stale')
  );
}


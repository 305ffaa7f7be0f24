import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/**
 * Where the CPU goes during a measurement, read from Linux's /proc: the whole machine's busy and
 * idle time (/proc/stat) and each process's own time (/proc/<pid>/stat). The bench runs the
 * server, PostgreSQL and the load generator on the same cores, so the ratio alone does not say
 * whether a change made our work cheaper or only moved it; these figures do.
 *
 * Processes that exit during the measurement take their time with them, except children the
 * bench waited for (pgbench), whose time is counted in the bench's own children's time. The
 * whole-machine figures count everything.
 */

/** Clock ticks per second of /proc's counters. */
let ticksPerSecond: number | undefined;
function ticksPerSecondOf(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

type Kind = 'server' | 'postgres' | 'load' | 'other';

interface ProcessTicks {
  kind: Kind;
  ticks: number;
}

export interface CpuSnapshot {
  processes: Map<number, ProcessTicks>;
  /** Ticks of the bench's waited-for children (pgbench). */
  loadChildren: number;
  machineBusy: number;
  machineIdle: number;
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid: number | 'self'): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function kindOf(pid: number, serverPid: number | undefined): Kind {
  if (pid === serverPid) return 'server';
  if (pid === process.pid) return 'load';
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres') ? 'postgres' : 'other';
  } catch {
    return 'other';
  }
}

/** Reads the counters now; undefined where /proc is not available (not Linux). */
export function cpuSnapshot(serverPid?: number): CpuSnapshot | undefined {
  if (!fs.existsSync('/proc/stat')) return undefined;
  const processes = new Map<number, ProcessTicks>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const fields = statFields(pid);
      // utime and stime are the 12th and 13th fields after the name.
      processes.set(pid, { kind: kindOf(pid, serverPid), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the process exited meanwhile
    }
  }
  const self = statFields('self');
  const machine = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = machine;
  return {
    processes,
    loadChildren: Number(self[13]) + Number(self[14]),
    machineBusy: user + nice + system + irq + softirq + steal,
    machineIdle: idle + iowait,
  };
}

/** CPU per unit of work (a transfer, a request, a pgbench transaction), in microseconds. */
export interface CpuPerUnit {
  /** The whole machine's busy time: everything that ran, including the load generator. */
  machineUs: number;
  serverUs: number;
  postgresUs: number;
  /** The bench process (autocannon runs in it) and its waited-for children (pgbench). */
  loadUs: number;
  /** Share of the machine's CPU time left idle, in percent. */
  idlePercent: number;
}

export function cpuPerUnit(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined, units: number): CpuPerUnit | undefined {
  if (!before || !after || units <= 0) return undefined;
  const sums: Record<Kind, number> = { server: 0, postgres: 0, load: 0, other: 0 };
  for (const [pid, { kind, ticks }] of after.processes) {
    sums[kind] += ticks - (before.processes.get(pid)?.ticks ?? 0);
  }
  sums.load += after.loadChildren - before.loadChildren;
  const microseconds = (ticks: number) => (ticks * 1_000_000) / ticksPerSecondOf() / units;
  const busy = after.machineBusy - before.machineBusy;
  const idle = after.machineIdle - before.machineIdle;
  return {
    machineUs: microseconds(busy),
    serverUs: microseconds(sums.server),
    postgresUs: microseconds(sums.postgres),
    loadUs: microseconds(sums.load),
    idlePercent: busy + idle > 0 ? (100 * idle) / (busy + idle) : Number.NaN,
  };
}

/**
 * Where the CPU went, per unit of work, as printed figures: the whole machine's busy time, then
 * the server's, PostgreSQL's and the load generator's shares, and the idle share. `prefix` names
 * an anchor's: the machine and idle figures, and the server's share when the anchor has a server
 * process (the bare Fastify of `balance`; pgbench's backends exit before they can be read).
 */
export function cpuFigures(cpu: CpuPerUnit | undefined, prefix = ''): Record<string, number> {
  if (!cpu) return {};
  if (prefix) {
    return { [`${prefix}cpu_us`]: cpu.machineUs, ...(cpu.serverUs > 0 ? { [`${prefix}cpu_server_us`]: cpu.serverUs } : {}), [`${prefix}idle_pct`]: cpu.idlePercent };
  }
  return { cpu_us: cpu.machineUs, cpu_server_us: cpu.serverUs, cpu_postgres_us: cpu.postgresUs, cpu_load_us: cpu.loadUs, idle_pct: cpu.idlePercent };
}

/**
 * One figure for several measurements: each measurement's CPU per unit weighted by its units,
 * and the idle share weighted by its seconds. Undefined when any part lacks figures.
 */
export function combineCpu(parts: readonly { cpu: CpuPerUnit | undefined; units: number; seconds: number }[]): CpuPerUnit | undefined {
  const units = parts.reduce((sum, part) => sum + part.units, 0);
  const seconds = parts.reduce((sum, part) => sum + part.seconds, 0);
  if (parts.length === 0 || units <= 0 || seconds <= 0 || parts.some((part) => !part.cpu)) return undefined;
  const perUnit = (field: 'machineUs' | 'serverUs' | 'postgresUs' | 'loadUs') =>
    parts.reduce((sum, part) => sum + (part.cpu?.[field] ?? 0) * part.units, 0) / units;
  return {
    machineUs: perUnit('machineUs'),
    serverUs: perUnit('serverUs'),
    postgresUs: perUnit('postgresUs'),
    loadUs: perUnit('loadUs'),
    idlePercent: parts.reduce((sum, part) => sum + (part.cpu?.idlePercent ?? 0) * part.seconds, 0) / seconds,
  };
}

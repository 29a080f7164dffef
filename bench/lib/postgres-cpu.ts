/**
 * CPU time used by the local PostgreSQL backends connected to `database` (Linux /proc; a backend's
 * title names its database), in µs, per backend. Other databases' work on a shared server is left
 * out. Undefined when /proc is not readable: a bench then prints no database CPU.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export function postgresBackendsCpu(database: string): Map<number, number> | undefined {
  const backends = new Map<number, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    if (name !== 'postgres') continue;
    let title: string;
    try {
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    // "postgres: 15/main: <user> <database> <client> <state>"
    if (title.split(' ')[3] !== database) continue;
    // Fields after the name: state is field 3; utime 14, stime 15.
    const fields = stat.slice(close + 2).split(' ');
    backends.set(Number(pid), ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / TICKS_PER_SECOND);
  }
  return backends;
}

/**
 * The CPU the database's backends used between two `postgresBackendsCpu` reads, in µs: what each
 * backend there at both reads added, and all of a backend that started since. A backend that ended
 * in between is not counted (a bench's pool keeps its connections while it loads).
 */
export function postgresCpuSince(before: Map<number, number> | undefined, database: string): number | undefined {
  const after = postgresBackendsCpu(database);
  if (before === undefined || after === undefined || after.size === 0) return undefined;
  let used = 0;
  for (const [pid, micros] of after) used += micros - (before.get(pid) ?? 0);
  return used;
}

import { readFileSync, readlinkSync } from 'node:fs';

/**
 * The CPU time of one thread of this process, read from Linux's /proc (no native addon): a thread learns
 * its id with `currentThreadId()`, and any thread of the process can then read its CPU time. This is what
 * lets the main thread hold the script thread to its CPU limit even while the thread is inside one long
 * native call that QuickJS's interrupt handler never interrupts. Elsewhere (no /proc) both answer null.
 */

/** This thread's kernel thread id (Linux), or null. */
export function currentThreadId(): number | null {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) && id > 0 ? id : null;
  } catch {
    return null;
  }
}

const TICK_MS = 10; // USER_HZ is 100 on every Linux ABI Node runs on.

/** CPU time (user + system, ms) the thread `tid` of this process has used; null if it is gone or unknown. */
export function threadCpuMs(tid: number | null): number | null {
  if (tid === null) return null;
  try {
    // schedstat: nanoseconds on the CPU (exact); present when the kernel has CONFIG_SCHED_INFO.
    const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ', 1)[0]);
    if (Number.isFinite(ns)) return ns / 1e6;
  } catch {
    // fall through to stat
  }
  try {
    // stat: utime and stime in clock ticks (fields 14 and 15; the name in parentheses may hold spaces).
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * TICK_MS : null;
  } catch {
    return null;
  }
}

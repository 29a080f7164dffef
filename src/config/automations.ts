import { int, type Env } from './env.js';

/** Automation rules' limits (docs/automations.md). */
export interface AutomationsConfig {
  /** AUTOMATION_RULES_PER_BASE — rules one base may have; creating one more answers 403; default 100. */
  rulesPerBase: number;
  /** AUTOMATION_RUNS_PER_MINUTE — runs one base may start per minute; more triggers are logged and dropped; default 1000 (the original's per-base limit). */
  runsPerMinute: number;
  /** AUTOMATION_MAX_DEPTH — automations triggering automations: the chain is cut past this many links; default 3. */
  maxDepth: number;
  /** AUTOMATION_PERIODIC_MAX_ROWS — rows one period of a periodic rule with conditions acts on; default 1000. */
  periodicMaxRows: number;
  /** AUTOMATION_RETRY_SCHEDULE — back-off of failed e-mail and webhook actions; default 30s,5m,30m,2h. */
  retrySchedule: readonly number[];
  /** AUTOMATION_SCRIPT_TIMEOUT_MS — CPU time one `run_script` run may use; default 1000. */
  scriptTimeoutMs: number;
  /** AUTOMATION_SCRIPT_MEMORY_MB — heap of one `run_script` run; default 32. */
  scriptMemoryMb: number;
  /** AUTOMATION_SCRIPT_MS_PER_MINUTE — script CPU time one base may use per minute (per instance); scripts past it fail with the reason; default 10000. */
  scriptMsPerMinute: number;
}

/** `retrySchedule` is AUTOMATION_RETRY_SCHEDULE, parsed by the caller's duration-list reader. */
export function loadAutomationsConfig(env: Env, retrySchedule: number[]): AutomationsConfig {
  return Object.freeze({
    rulesPerBase: int(env, 'AUTOMATION_RULES_PER_BASE', 100, 1, 100_000),
    runsPerMinute: int(env, 'AUTOMATION_RUNS_PER_MINUTE', 1000, 1, 1_000_000),
    maxDepth: int(env, 'AUTOMATION_MAX_DEPTH', 3, 1, 20),
    periodicMaxRows: int(env, 'AUTOMATION_PERIODIC_MAX_ROWS', 1000, 1, 1_000_000),
    retrySchedule: Object.freeze(retrySchedule),
    scriptTimeoutMs: int(env, 'AUTOMATION_SCRIPT_TIMEOUT_MS', 1000, 10, 60_000),
    scriptMemoryMb: int(env, 'AUTOMATION_SCRIPT_MEMORY_MB', 32, 1, 1024),
    scriptMsPerMinute: int(env, 'AUTOMATION_SCRIPT_MS_PER_MINUTE', 10_000, 10, 3_600_000),
  });
}

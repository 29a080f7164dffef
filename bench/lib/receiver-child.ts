import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Cases from './webhook-cases.js';

/**
 * The webhook receiver of bench/webhooks.bench.ts in a child process (so it does not share the server's
 * event loop): its port, and `ask(cmd)` for its records. Used by the webhook probe and profile scripts.
 */
export async function startReceiverChild(): Promise<{ port: number; ask: <T>(cmd: string) => Promise<T>; child: ReturnType<typeof fork> }> {
  const benchFile = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'webhooks.bench.ts');
  const child = fork(benchFile, ['receiver'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const ask = <T>(cmd: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (m) => resolve(m as T));
      child.send({ cmd });
    });
  return { port, ask, child };
}

/** The webhook cases of this checkout, or of BENCH_CHECKOUT (another checkout, for before/after runs). */
export async function webhookCases(): Promise<typeof Cases> {
  const checkout = process.env.BENCH_CHECKOUT;
  return (await import(checkout ? path.join(path.resolve(checkout), 'bench/lib/webhook-cases.ts') : './webhook-cases.js')) as typeof Cases;
}

/** A forked bench child's answers, one at a time: `command` sent (if any), the next message awaited. */
import type { ChildProcess } from 'node:child_process';

/** Resolves with the child's next message; rejects on `{ error }` or when the child exits first. */
export function ask<Answer extends object>(worker: ChildProcess, command: object | undefined): Promise<Exclude<Answer, { error: string }>> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited (${code})`));
    worker.once('exit', onExit);
    worker.once('message', (answer: Answer) => {
      worker.off('exit', onExit);
      if ('error' in answer) reject(new Error(String(answer.error)));
      else resolve(answer as Exclude<Answer, { error: string }>);
    });
    if (command) worker.send(command);
  });
}

const controller = new AbortController();

/**
 * Aborted when the process begins to stop (SIGTERM/SIGINT in `basegate serve`). Long waits that
 * are safe to cut short listen to it — an outbound webhook attempt is aborted and retried later —
 * so a stop does not wait for them. Never aborted in tests that build apps in-process.
 */
export const processStopping: AbortSignal = controller.signal;

export function beginProcessStop(): void {
  if (!controller.signal.aborted) controller.abort(new DOMException('the server is stopping', 'AbortError'));
}

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../e2e/browser.js';
import { ROOT, baseEnv } from './cli-support.js';

/**
 * docs/tutorial.md stays true (#29 item 4): its marked code blocks are run, in order, as a reader would —
 *   ```bash tutorial-server   started in basegate's folder, left running (a first terminal);
 *   ```bash tutorial          run one after the other in one shell, in an empty folder (a second terminal);
 *   ```python tutorial-file F written to F in that folder before the shell starts.
 * Only the addresses change: 127.0.0.1:8000 and port 8765 become free ports of this machine.
 */
const TUTORIAL = path.join(ROOT, 'docs/tutorial.md');
/** Debian's python3 with the SDK's dependencies (npm run pretest installs them); the SDK is the vendored copy. */
const PYTHON = process.env.TEST_PYTHON ?? '/usr/bin/python3';
const SDK = path.join(ROOT, 'test/compat/python-sdk');

interface Block {
  kind: string;
  file?: string;
  code: string;
}

function tutorialBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```\w+ (tutorial(?:-server|-file)?)(?: (\S+))?\n([\s\S]*?)^```$/gm)].map((m) => ({ kind: m[1]!, file: m[2], code: m[3]! }));
}

/** Runs a shell in a process group of its own, so that it and what it leaves running can be stopped together. */
function shell(script: string, cwd: string, env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; exit: Promise<number | null> } {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env, detached: true });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, output: () => output, exit };
}

const groups: ChildProcess[] = [];
afterAll(() => {
  for (const child of groups) {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  }
});

describe('docs/tutorial.md', () => {
  const blocks = tutorialBlocks(readFileSync(TUTORIAL, 'utf8'));

  it('has a server block, shell steps and the Python script', () => {
    expect(blocks.filter((b) => b.kind === 'tutorial-server')).toHaveLength(1);
    expect(blocks.filter((b) => b.kind === 'tutorial').length).toBeGreaterThanOrEqual(5);
    expect(blocks.find((b) => b.kind === 'tutorial-file')?.file).toBe('rows.py');
  });

  it('runs from npm start to a webhook receiving the change made by the Python SDK script', async () => {
    const [serverPort, receiverPort] = [await freePort(), await freePort()];
    const localize = (code: string) => code.replaceAll('127.0.0.1:8000', `127.0.0.1:${serverPort}`).replace(/\b8765\b/g, String(receiverPort));

    // The first terminal: npm start in basegate's folder, on a fresh data directory.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'basegate-tutorial-data-'));
    const server = shell(blocks.find((b) => b.kind === 'tutorial-server')!.code, ROOT, { ...baseEnv(dataDir), PORT: String(serverPort) });
    groups.push(server.child);
    await expect.poll(server.output, { timeout: 150_000, interval: 250 }).toMatch(/Server listening at/);
    await expect.poll(server.output, { timeout: 10_000 }).toContain(`Console        http://127.0.0.1:${serverPort}/`);

    // The second terminal: an empty folder, python3 and the SDK on the path.
    const work = mkdtempSync(path.join(tmpdir(), 'basegate-tutorial-'));
    const bin = path.join(work, '.bin');
    mkdirSync(bin);
    symlinkSync(PYTHON, path.join(bin, 'python3'));
    for (const block of blocks.filter((b) => b.kind === 'tutorial-file')) writeFileSync(path.join(work, block.file!), localize(block.code));
    const script = blocks.filter((b) => b.kind === 'tutorial').map((b) => localize(b.code)).join('\n');
    const reader = shell(script, work, { ...baseEnv(dataDir), PATH: `${bin}:${process.env.PATH}`, PYTHONPATH: SDK });
    groups.push(reader.child);
    const code = await reader.exit;
    expect(code, reader.output()).toBe(0);

    expect(reader.output()).toContain('row: Hello from Python');
    const deliveries = readFileSync(path.join(work, 'received.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { event: string; data: Record<string, unknown> });
    expect(deliveries).toContainEqual({ event: 'update', data: expect.objectContaining({ op_type: 'insert_row', table_name: 'Table1', row_name: 'Hello from Python', op_app: 'tutorial' }) });

    process.kill(-server.child.pid!, 'SIGTERM');
    await server.exit;
  }, 240_000);
});

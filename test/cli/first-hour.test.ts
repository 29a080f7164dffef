import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, ROOT, baseEnv, login, run, serve } from './cli-support.js';

/** The first hour (#29 item 4): where the console is, readable logs at a terminal, a forgotten password. */
describe('basegate CLI: the first hour', () => {
  it('prints once where the console is and how to sign in; logs are JSON when stdout is no terminal', async () => {
    const env = { ...baseEnv(mkdtempSync(path.join(tmpdir(), 'basegate-cli-'))), ADMIN_EMAIL: 'root@example.org', ADMIN_PASSWORD: 'configured-pass' };
    const server = await serve(env);
    await expect.poll(() => server.output()).toContain('Forgot it?');
    const output = server.output();
    expect(output).toContain(`Console        ${server.url}/`);
    expect(output).toContain(`API reference  ${server.url}/api/docs/`);
    expect(output).toContain('Sign in as     root@example.org with the password in ADMIN_PASSWORD');
    expect(output).toContain('basegate reset-password root@example.org');
    expect(output.match(/Console {8}/g)).toHaveLength(1);
    expect(output).not.toContain('configured-pass');
    expect(output.split('\n').some((line) => line.startsWith('{"level":30'))).toBe(true);
    expect(await server.stop('SIGTERM')).toBe(0);

    // A forgotten password: a new one is generated, printed once, and signs in; the old one does not.
    const reset = await run(['reset-password', 'root@example.org'], env);
    expect(reset.code).toBe(0);
    const password = /New password for root@example\.org: (\S+)/.exec(reset.stdout)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{16}$/);
    const chosen = await run(['reset-password', 'nobody@example.org'], env);
    expect(chosen.code).toBe(1);
    expect(chosen.stderr).toContain('User nobody@example.org not found.');
    const again = await serve(env);
    expect((await login(again.url, 'root@example.org', password!)).status).toBe(200);
    expect((await login(again.url, 'root@example.org', 'configured-pass')).status).toBe(400);
    expect(await again.stop('SIGTERM')).toBe(0);
  }, 120_000);

  it('logs human-readable lines (pino-pretty) when stdout is a terminal', async () => {
    const env = { ...baseEnv(mkdtempSync(path.join(tmpdir(), 'basegate-cli-'))), PORT: '0', ADMIN_PASSWORD: 'configured-pass', NO_COLOR: '1' };
    // `script` runs the server on a pseudo-terminal, as a person starting it by hand would.
    const command = [process.execPath, ...CLI, 'serve'].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    try {
      await expect.poll(() => output, { timeout: 30_000 }).toMatch(/INFO.*Server listening at/);
      expect(output).not.toMatch(/^\{"level"/m);
    } finally {
      const closed = new Promise((done) => child.on('close', done));
      child.kill('SIGTERM');
      await closed;
    }
  }, 60_000);
});

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, login, run, serve } from './cli-support.js';

describe('basegate CLI', () => {
  it('migrates, creates a user, serves with a first-start admin, and stops gracefully', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'basegate-cli-'));
    const env = baseEnv(dataDir);

    const migrate = await run(['migrate'], env);
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toMatch(/Applied: 0001_foundation/);
    expect((await run(['migrate'], env)).stdout).toMatch(/Nothing to migrate/);

    const server = await serve(env);
    const printed = /Created admin admin@example\.com with password: (\S+)/.exec(server.output());
    expect(printed).not.toBeNull();
    const res = await login(server.url, 'admin@example.com', printed![1]!);
    expect(res.status).toBe(200);
    const { token } = (await res.json()) as { token: string };
    expect(server.output()).not.toContain(token);
    expect(await server.stop('SIGTERM')).toBe(0);

    const created = await run(['create-user', 'bob@example.com', '--password', 'bob-password', '--name', 'Bob'], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/Created user bob@example\.com/);

    // A restart keeps the generated SECRET_KEY, so the admin's token stays valid, and creates no second admin.
    const again = await serve(env);
    expect(again.output()).not.toMatch(/Created admin/);
    const user = await fetch(`${again.url}/api/v2.1/user/`, { headers: { authorization: `Token ${token}` } });
    expect(user.status).toBe(200);
    expect((await login(again.url, 'bob@example.com', 'bob-password')).status).toBe(200);
    expect(await again.stop('SIGINT')).toBe(0);
  }, 120_000); // five CLI runs: slow on a loaded machine

  it('uses ADMIN_EMAIL and ADMIN_PASSWORD on first start without printing the password', async () => {
    const env = { ...baseEnv(mkdtempSync(path.join(tmpdir(), 'basegate-cli-'))), ADMIN_EMAIL: 'root@example.org', ADMIN_PASSWORD: 'configured-pass' };
    const server = await serve(env);
    expect(server.output()).toMatch(/Created admin root@example\.org with the password from ADMIN_PASSWORD/);
    expect(server.output()).not.toContain('configured-pass');
    expect((await login(server.url, 'root@example.org', 'configured-pass')).status).toBe(200);
    expect(await server.stop('SIGTERM')).toBe(0);
  }, 30_000);

  it('stops with a message naming a bad variable', async () => {
    const bad = await run(['serve'], { ...baseEnv(mkdtempSync(path.join(tmpdir(), 'basegate-cli-'))), PORT: 'eighty' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Invalid configuration: PORT must be a whole number/);
  });

  it('refuses unknown commands, incomplete create-user, and role splitting on SQLite', async () => {
    const env = baseEnv(mkdtempSync(path.join(tmpdir(), 'basegate-cli-')));
    expect((await run(['frobnicate'], env)).code).toBe(2);
    expect((await run(['create-user', 'x@example.com'], env)).code).toBe(2);
    const role = await run(['serve', '--role', 'worker'], env);
    expect(role.code).toBe(2);
    expect(role.stderr).toMatch(/--role needs PostgreSQL/);
  });

  it('create-user reads the password from stdin or BASEGATE_PASSWORD, never printing it', async () => {
    const env = baseEnv(mkdtempSync(path.join(tmpdir(), 'basegate-cli-')));
    const fromStdin = await run(['create-user', 'carol@example.com', '--password-stdin'], env, 'stdin-secret-1\nignored\n');
    expect(fromStdin.code).toBe(0);
    expect(fromStdin.stdout + fromStdin.stderr).not.toContain('stdin-secret-1');
    const fromEnv = await run(['create-user', 'dave@example.com'], { ...env, BASEGATE_PASSWORD: 'env-secret-22' });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout + fromEnv.stderr).not.toContain('env-secret-22');
    // Two sources at once are refused rather than guessed between.
    const both = await run(['create-user', 'erin@example.com', '--password', 'flag-secret-3'], { ...env, BASEGATE_PASSWORD: 'env-secret-33' });
    expect(both.code).toBe(2);
    const short = await run(['create-user', 'frank@example.com', '--password-stdin'], env, 'short\n');
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/password invalid/);

    const server = await serve(env);
    expect((await login(server.url, 'carol@example.com', 'stdin-secret-1')).status).toBe(200);
    expect((await login(server.url, 'dave@example.com', 'env-secret-22')).status).toBe(200);
    expect((await login(server.url, 'erin@example.com', 'flag-secret-3')).status).toBe(400);
    expect((await login(server.url, 'frank@example.com', 'short')).status).toBe(400);
    // Shutdown is covered by the first test; under a loaded machine its exit code here proved flaky.
    await server.stop('SIGTERM');
  }, 60_000);
});

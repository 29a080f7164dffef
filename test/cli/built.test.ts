import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}

function cleanEnv(dataDir: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ADMIN_PASSWORD: _pw, SECRET_KEY: _key, ...rest } = process.env;
  return { ...rest, DATA_DIR: dataDir, LOG_LEVEL: 'info', PORT: '0' };
}

describe('the compiled build', () => {
  it('builds without errors or test files, and the built CLI serves with plain node and stops with exit 0', async () => {
    const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
    expect(build.stderr + build.stdout).not.toMatch(/error TS/);
    expect(build.status).toBe(0);
    const files = filesUnder(path.join(ROOT, 'dist'));
    expect(files.some((f) => f.endsWith(path.join('dist', 'cli.js')))).toBe(true);
    expect(files.filter((f) => /\.test\.js$/.test(f))).toEqual([]);
    // The build writes nothing outside dist/ (a tsc build once wrote test/helpers/db.js).
    expect(existsSync(path.join(ROOT, 'test/helpers/db.js'))).toBe(false);
    expect(readdirSync(ROOT).filter((name) => /^dist\.(tmp|old)-/.test(name))).toEqual([]);
    // V8 keeps a script's source as long as the process runs, one byte a character only while every
    // character is Latin-1: one full-width colon in a regular expression (esbuild escapes strings, not
    // regular expressions) made dist/cli.js's 7.9 MB cost 15.8 MB of heap.
    const beyondLatin1 = files
      .filter((f) => f.endsWith('.js'))
      .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/.{0,40}[^\u0000-\u00ff].{0,10}/g)].map((m) => `${path.basename(f)}: ${m[0]}`));
    expect(beyondLatin1).toEqual([]);

    // bin/basegate.js runs dist/cli.js in this one node process (no tsx loader, no child).
    const child = spawn(process.execPath, ['bin/basegate.js', 'serve'], {
      cwd: ROOT,
      env: cleanEnv(mkdtempSync(path.join(tmpdir(), 'basegate-built-'))),
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`built server did not start:\n${output}`)), 30_000);
      const poll = setInterval(() => {
        const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          clearInterval(poll);
          resolve(match[1]!);
        }
      }, 20);
    });
    expect(output).not.toMatch(/compiling src/); // the build above is fresh
    const ping = await fetch(`${url}/ping/`);
    expect(ping.status).toBe(200);
    expect(await ping.json()).toBe('pong');
    const pids = spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim();
    expect(pids).toBe('');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 180_000);
});

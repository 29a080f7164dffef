/** Running the `basegate` CLI as a child process, as `npm start` and the bin do. */
import { spawn } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
/** What `npm start` and the `basegate` bin run: the bundle, built first when src/ is newer. */
export const CLI = [path.join(ROOT, 'bin/basegate.js')];

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function baseEnv(dataDir: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _db, REDIS_URL: _redis, ADMIN_PASSWORD: _pw, SECRET_KEY: _key, BASEGATE_PASSWORD: _cliPw, ...rest } = process.env;
  return { ...rest, DATA_DIR: dataDir, LOG_LEVEL: 'info' };
}

export function run(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, env });
    if (input !== undefined) child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Start `serve` on a free port, wait for the listening line, return the URL and a stopper. */
export function serve(env: NodeJS.ProcessEnv): Promise<{ url: string; output: () => string; stop: (signal: NodeJS.Signals) => Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI, 'serve'], { cwd: ROOT, env: { ...env, PORT: '0' } });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000);
    const onData = (d: Buffer) => {
      output += d;
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({
          url: match[1]!,
          output: () => output,
          stop: (signal) =>
            new Promise((done) => {
              child.on('close', (code) => done(code));
              child.kill(signal);
            }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
}

export async function login(url: string, username: string, password: string): Promise<Response> {
  return fetch(`${url}/api2/auth-token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
}


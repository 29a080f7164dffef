import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Role } from './config/index.js';
import { createContainer } from './container.js';
import { backupSqlite, migrateToLatest, sqliteFile } from './db/index.js';
import { AppError, badRequest } from './shared/errors.js';
import { startServer, stopOnSignals } from './server.js';
import { setHeapGrowth } from './platform/heap-growth.js';
import { resetPassword } from './modules/accounts/index.js';
import { startupBanner } from './startup-banner.js';
import { VERSION } from './version.js';

const USAGE = `Usage: basegate [command]

Commands:
  serve [--role api|worker|scheduler|all]   run the server (default)
  migrate                                   apply pending database migrations
  backup <file>                             SQLite: copy the database to a new file while the server runs
                                            (PostgreSQL: use pg_dump; see docs/operations.md)
  create-user <email> [--password-stdin | --password <p>] [--admin] [--name <n>]
      the password comes from stdin (first line) with --password-stdin, else from
      BASEGATE_PASSWORD, else from --password (visible to other users in the process list)
  reset-password <email> [--password-stdin | --password <p>]
      sets a forgotten password (the same sources as create-user); with none of them a
      random password is generated and printed once. The user is signed out everywhere.
  audit verify                              walk the audit log's hash chain; exit 1 naming the first
                                            edited or deleted row
`;

/** Longest password line read from stdin, and how long we wait for it. */
const STDIN_MAX_BYTES = 4096;
const STDIN_TIMEOUT_MS = 60_000;

const ROLES: readonly Role[] = ['api', 'worker', 'scheduler'];

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      role: { type: 'string', default: 'all' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean', default: false },
      admin: { type: 'boolean', default: false },
      name: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const command = positionals[0] ?? 'serve';
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const config = loadConfig();

  switch (command) {
    case 'serve': {
      const role = values.role ?? 'all';
      if (role !== 'all' && !(ROLES as readonly string[]).includes(role)) {
        process.stderr.write(`Unknown role "${role}".\n${USAGE}`);
        return 2;
      }
      const isSqlite = !config.databaseUrl || config.databaseUrl.startsWith('sqlite:');
      if (role !== 'all' && isSqlite) {
        process.stderr.write('--role needs PostgreSQL (DATABASE_URL): SQLite runs every role in one process.\n');
        return 2;
      }
      setHeapGrowth(config.heapGrowingPercent);
      const server = await startServer(config, role === 'all' ? ROLES : [role as Role]);
      stopOnSignals(server);
      if (role === 'all' || role === 'api') process.stdout.write(startupBanner(config, server.app.server.address(), VERSION));
      return -1; // keep running
    }
    case 'migrate': {
      const c = createContainer(config);
      try {
        const applied = await migrateToLatest(c.db);
        process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Nothing to migrate.\n');
      } finally {
        await c.close();
      }
      return 0;
    }
    case 'backup': {
      const target = positionals[1];
      if (!target) {
        process.stderr.write(`backup needs the file to write.\n${USAGE}`);
        return 2;
      }
      if (config.databaseUrl && !config.databaseUrl.startsWith('sqlite:')) {
        process.stderr.write('backup copies a SQLite database; for PostgreSQL use pg_dump (docs/operations.md).\n');
        return 2;
      }
      try {
        const { bytes } = backupSqlite(sqliteFile(config.databaseUrl, config.dataDir), target);
        process.stdout.write(`Backed up to ${target} (${bytes} bytes).\n`);
        return 0;
      } catch (error) {
        process.stderr.write(`Backup failed: ${(error as Error).message}\n`);
        return 1;
      }
    }
    case 'create-user': {
      const email = positionals[1];
      const sources = [values['password-stdin'], process.env.BASEGATE_PASSWORD !== undefined, values.password !== undefined];
      if (!email || sources.filter(Boolean).length !== 1) {
        process.stderr.write(`create-user needs an e-mail and exactly one of --password-stdin, BASEGATE_PASSWORD, --password.\n${USAGE}`);
        return 2;
      }
      const password = values['password-stdin'] ? await readPasswordLine() : (process.env.BASEGATE_PASSWORD ?? values.password!);
      const c = createContainer(config);
      try {
        await migrateToLatest(c.db);
        const user = await c.accounts.createUser({ email, password, name: values.name, isStaff: values.admin });
        process.stdout.write(`Created ${user.isStaff ? 'admin' : 'user'} ${user.email} (${user.virtualId}).\n`);
      } finally {
        await c.close();
      }
      return 0;
    }
    case 'reset-password': {
      const email = positionals[1];
      const sources = [values['password-stdin'], process.env.BASEGATE_PASSWORD !== undefined, values.password !== undefined];
      if (!email || sources.filter(Boolean).length > 1) {
        process.stderr.write(`reset-password needs an e-mail and at most one of --password-stdin, BASEGATE_PASSWORD, --password.\n${USAGE}`);
        return 2;
      }
      const given = values['password-stdin'] ? await readPasswordLine() : (process.env.BASEGATE_PASSWORD ?? values.password);
      const c = createContainer(config);
      try {
        await migrateToLatest(c.db);
        const { user, password } = await resetPassword(c.accounts, email, given);
        process.stdout.write(given === undefined ? `New password for ${user.email}: ${password}\nIt is shown only this once.\n` : `Password of ${user.email} changed.\n`);
      } finally {
        await c.close();
      }
      return 0;
    }
    case 'audit': {
      if (positionals[1] !== 'verify') {
        process.stderr.write(`audit needs a subcommand: verify.\n${USAGE}`);
        return 2;
      }
      const c = createContainer(config);
      try {
        await migrateToLatest(c.db);
        // Rows appended but not yet chained are sealed first (their digests carry any edit made before).
        await c.audit.seal();
        const result = await c.audit.verify();
        if (result.ok) {
          process.stdout.write(`Audit log intact: ${result.rows} rows verified.\n`);
          return 0;
        }
        const where = result.broken!.seq === null ? `pending row ${result.broken!.id}` : `row ${result.broken!.seq}`;
        process.stderr.write(`Audit log broken at ${where}: ${result.broken!.reason}.\n`);
        return 1;
      } finally {
        await c.close();
      }
    }
    default:
      process.stderr.write(`Unknown command "${command}".\n${USAGE}`);
      return 2;
  }
}

/** The first line of stdin, without its line ending; bounded in size and time. */
function readPasswordLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const finish = (error: Error | null) => {
      clearTimeout(timer);
      process.stdin.off('data', onData).off('end', onEnd).off('error', finish);
      process.stdin.pause();
      if (error) return reject(error);
      const text = data.toString('utf8');
      const line = text.split(/\r?\n/, 1)[0] ?? '';
      resolve(line);
    };
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      if (data.includes(0x0a)) return finish(null);
      if (data.length > STDIN_MAX_BYTES) finish(badRequest(`The password on stdin is longer than ${STDIN_MAX_BYTES} bytes.`));
    };
    const onEnd = () => finish(null);
    const timer = setTimeout(() => finish(badRequest('No password line on stdin.')), STDIN_TIMEOUT_MS);
    process.stdin.on('data', onData).on('end', onEnd).on('error', finish);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
    else if (error instanceof AppError) process.stderr.write(`${error.message}\n`);
    else process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

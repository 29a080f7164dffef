import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Role } from './config/index.js';
import { createContainer } from './container.js';
import { migrateToLatest } from './db/index.js';
import { AppError } from './shared/errors.js';
import { startServer, stopOnSignals } from './server.js';

const USAGE = `Usage: basegate [command]

Commands:
  serve [--role api|worker|scheduler|all]   run the server (default)
  migrate                                   apply pending database migrations
  create-user <email> --password <p> [--admin] [--name <n>]
`;

const ROLES: readonly Role[] = ['api', 'worker', 'scheduler'];

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      role: { type: 'string', default: 'all' },
      password: { type: 'string' },
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
      const server = await startServer(config, role === 'all' ? ROLES : [role as Role]);
      stopOnSignals(server);
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
    case 'create-user': {
      const email = positionals[1];
      if (!email || !values.password) {
        process.stderr.write(USAGE);
        return 2;
      }
      const c = createContainer(config);
      try {
        await migrateToLatest(c.db);
        const user = await c.accounts.createUser({ email, password: values.password, name: values.name, isStaff: values.admin });
        process.stdout.write(`Created ${user.isStaff ? 'admin' : 'user'} ${user.email} (${user.virtualId}).\n`);
      } finally {
        await c.close();
      }
      return 0;
    }
    default:
      process.stderr.write(`Unknown command "${command}".\n${USAGE}`);
      return 2;
  }
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

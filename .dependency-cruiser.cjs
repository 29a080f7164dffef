// Import rules checked in CI by `npm run check:imports` (dependency-cruiser), type imports included.
// The run-time rule lives in .dependency-cruiser.run-time.cjs, which sees only the imports left after
// compilation. Architecture and the direction of imports: docs/architecture.md.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular-between-modules',
      comment:
        'Folders (each module under src/modules, db, plugins, shared, platform, workers, config) must not ' +
        'import each other in a circle, type imports included. The one exception, the database schema ' +
        '(src/db/database.ts) importing the modules\' *.table.ts files, is taken out of this graph by ' +
        'options.exclude below.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'db-imports-no-module',
      comment: 'The database layer sits below the modules: only the schema imports their table types.',
      severity: 'error',
      from: { path: '^src/db/', pathNot: '^src/db/database\\.ts$' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'schema-imports-only-table-types',
      comment: 'The database schema assembles the modules\' *.table.ts files and imports nothing else of theirs.',
      severity: 'error',
      from: { path: '^src/db/database\\.ts$' },
      to: { path: '^src/modules/', pathNot: '\\.table\\.ts$' },
    },
    {
      name: 'modules-below-plugins-and-workers',
      comment:
        'Modules (and everything below them) never import the Fastify plugins or the worker loops; what a ' +
        'route needs from a request lives in a module. Known exception, to be moved: the webhooks module ' +
        'builds its delivery loop from src/workers/webhook-deliverer.ts (which imports no module).',
      severity: 'error',
      from: { path: '^src/(modules|db|shared|platform|config)/', pathNot: '^src/modules/webhooks/webhooks\\.module\\.ts$' },
      to: { path: '^src/(plugins|workers)/' },
    },
    {
      name: 'base-layers-import-no-module',
      comment: 'shared, config and platform sit below the database and the modules.',
      severity: 'error',
      from: { path: '^src/(shared|platform|config)/' },
      to: { path: '^src/(modules|db|plugins|workers)/' },
    },
    {
      name: 'no-import-of-the-composition-root',
      comment: 'app.ts, container.ts, server.ts and cli.ts wire everything; nothing below imports them.',
      severity: 'error',
      from: { path: '^src/(modules|db|plugins|shared|platform|workers|config)/' },
      to: { path: '^src/(app|container|server|cli|bootstrap)\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Table files hold only row interfaces (they import nothing but kysely types); leaving them out
    // removes exactly the allowed schema → module edges from the folder graph.
    exclude: { path: '\\.table\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

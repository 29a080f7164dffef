// Run-time import rule, checked by `npm run check:imports` next to .dependency-cruiser.cjs. With
// tsPreCompilationDeps off, dependency-cruiser sees the imports the compiled JavaScript keeps
// (type-only imports are gone), so a circle here is one that loads at run time.
const base = require('./.dependency-cruiser.cjs');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular-at-run-time',
      comment: 'No two files may load each other at run time, inside a module or across modules.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: { ...withoutExclude(base.options), tsPreCompilationDeps: false },
};

/** The type-level config leaves the table files out; at run time they are empty anyway, so cruise everything. */
function withoutExclude({ exclude, ...options }) {
  return options;
}

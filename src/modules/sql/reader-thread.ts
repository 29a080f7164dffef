/**
 * The code of one SQL thread (CommonJS, run with `eval`, so it needs no build step of its own): it
 * parses statements and, on SQLite, runs compiled SELECTs on its own read-only connection (WAL lets
 * readers run beside the writer), or on a copy of a database in memory sent with the query. The main thread stays free while a statement is parsed or queried.
 */
export const READER_THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Parser } = require(workerData.parserPath);
const parser = new Parser();
let db = null;
const statements = new Map();
// The statements call this once per row (interruptible.ts): a terminated thread stops at the next row.
function tick(database) {
  database.function(workerData.tickFunction, { deterministic: false, varargs: true }, () => 1);
}
function connection() {
  if (db === null) {
    const Database = require(workerData.sqlitePath);
    db = new Database(workerData.sqliteFile, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    tick(db);
  }
  return db;
}
function prepare(sql) {
  let statement = statements.get(sql);
  if (!statement) {
    statement = connection().prepare(sql);
    if (statements.size >= 200) statements.delete(statements.keys().next().value);
    statements.set(sql, statement);
  }
  return statement;
}
// A database in memory arrives as a copy with each query: opened read-only for that query alone.
function snapshotQuery(job) {
  const Database = require(workerData.sqlitePath);
  const bytes = Buffer.from(job.snapshot.buffer, job.snapshot.byteOffset, job.snapshot.byteLength);
  const copy = new Database(bytes, { readonly: true });
  try {
    tick(copy);
    return copy.prepare(job.sql).all(job.parameters);
  } finally {
    copy.close();
  }
}
// Keep in step with countCost in cost-limits.ts (this code runs on its own and cannot import it).
function isExpr(value) {
  return value !== null && typeof value === 'object' && (value.type === 'binary_expr' || value.type === 'unary_expr');
}
function countCost(ast) {
  let terms = 0;
  let inValues = 0;
  const stack = [ast];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) { for (const item of value) stack.push(item); continue; }
    if (value === null || typeof value !== 'object') continue;
    if (value.type === 'binary_expr' || value.type === 'unary_expr') {
      const op = String(value.operator ?? '').toUpperCase();
      // A term is an operand of AND/OR that is not itself an expression, or any other operator.
      if (op === 'AND' || op === 'OR') terms += Number(!isExpr(value.left)) + Number(!isExpr(value.right));
      else terms++;
      const right = value.right;
      if ((op === 'IN' || op === 'NOT IN') && right && right.type === 'expr_list' && Array.isArray(right.value)) inValues += right.value.length;
    }
    for (const key in value) if (key !== 'loc') stack.push(value[key]);
  }
  return { terms, inValues };
}
// The tree goes back as JSON text: structured cloning recurses natively and cannot survive a deep
// tree, JSON.stringify throws a catchable RangeError. Over the limits only the counts go back.
function parse(job) {
  const ast = parser.astify(job.text, job.options);
  const cost = countCost(ast);
  const within = cost.terms <= job.maxTerms && cost.inValues <= job.maxInValues;
  return { cost, json: within ? JSON.stringify(ast) : null };
}
parentPort.on('message', (job) => {
  try {
    const result = job.kind === 'parse' ? parse(job) : job.snapshot ? snapshotQuery(job) : prepare(job.sql).all(job.parameters);
    parentPort.postMessage({ id: job.id, ok: true, result });
  } catch (error) {
    const e = error || {};
    parentPort.postMessage({ id: job.id, ok: false, error: { name: e.name, message: String(e.message), code: e.code, location: e.location } });
  }
});
`;

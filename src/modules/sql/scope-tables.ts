import { scopeRefusal, type TokenScope } from '../access/index.js';
import { isNode } from './parser.js';
import { identifier } from './references.js';
import { resolveTable, type SqlTable } from './schema.js';

/**
 * Why a table-scoped token may not run this statement (a table it names, in FROM, a JOIN, INTO or
 * UPDATE, is outside the scope), or null. Subqueries are refused by the planner anyway. A table is
 * in scope when its name or its id is listed.
 */
export function sqlScopeRefusal(scope: TokenScope | undefined, ast: Record<string, unknown>, tables: SqlTable[]): string | null {
  if (!scope?.tables) return null;
  // Tables only: operations and networks were judged with the request (plugins/base-auth.ts).
  const tablesOnly: TokenScope = { tables: scope.tables };
  for (const clause of [ast.from, ast.table]) {
    if (!Array.isArray(clause)) continue;
    for (const entry of clause) {
      const name = isNode(entry) ? identifier(entry.table) : undefined;
      if (name === undefined) continue;
      const table = resolveTable(tables, name);
      if (scopeRefusal(tablesOnly, { tables: [table.id] }) === null) continue;
      const refusal = scopeRefusal(tablesOnly, { tables: [table.name] });
      if (refusal) return refusal;
    }
  }
  return null;
}

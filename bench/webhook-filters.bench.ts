/**
 * Cost of deciding which webhooks want a change (issue 31): 20 filtered webhooks (table, columns,
 * a two-condition row filter) against 20 unfiltered ones, per change, in memory — the work the
 * webhook consumer adds per event (`SubscriptionCache.wants`). Run: npx tsx bench/webhook-filters.bench.ts
 */
import type { ChangeEvent } from '../src/modules/events/index.js';
import { SubscriptionCache } from '../src/modules/webhooks/subscription-cache.js';
import { parseSubscription } from '../src/modules/subscriptions/index.js';

const table = {
  _id: '0000',
  name: 'Table1',
  columns: [
    { key: '0000', name: 'Name', type: 'text', data: null },
    { key: 'sc01', name: 'Score', type: 'number', data: {} },
    { key: 'st01', name: 'Status', type: 'single-select', data: { options: [{ id: 'o1', name: 'Open' }, { id: 'o2', name: 'Done' }] } },
  ],
};
const filtered = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  updated_at: 1,
  subscription: JSON.stringify(
    parseSubscription(
      {
        tables: ['Table1'],
        columns: ['Score', 'Status'],
        filters: [
          { column_name: 'Score', filter_predicate: 'greater', filter_term: i },
          { column_name: 'Status', filter_predicate: 'is', filter_term: 'Open' },
        ],
      },
      [table],
    ),
  ),
}));
const unfiltered = filtered.map((hook) => ({ ...hook, subscription: null }));
const events: ChangeEvent[] = Array.from({ length: 1000 }, (_, i) => ({
  id: i + 1,
  baseId: 1,
  baseUuid: 'b',
  tableId: '0000',
  tableName: 'Table1',
  rowId: `r${i}`,
  rowName: `r${i}`,
  opType: 'modify_row',
  opUser: 'u@auth.local',
  opApp: null,
  opTime: 1_767_607_200_000,
  rowData: [{ column_key: 'sc01', column_name: 'Score', column_type: 'number', column_data: {}, value: i % 40, old_value: (i % 40) - 1 }],
  row: { _id: `r${i}`, '0000': `r${i}`, sc01: i % 40, st01: i % 2 ? 'Open' : 'Done' },
}));

function run(hooks: Array<{ id: number; updated_at: number; subscription: string | null }>, rounds: number): { nsPerChange: number; wanted: number } {
  const cache = new SubscriptionCache();
  let wanted = 0;
  const start = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) for (const event of events) for (const hook of hooks) if (cache.wants(hook, event)) wanted++;
  const ns = Number(process.hrtime.bigint() - start);
  return { nsPerChange: ns / (rounds * events.length), wanted: wanted / rounds };
}

run(filtered, 3);
run(unfiltered, 3);
const a = run(unfiltered, 20);
const b = run(filtered, 20);
console.log(`20 unfiltered webhooks: ${(a.nsPerChange / 1000).toFixed(2)} µs per change (${a.wanted} deliveries per 1,000 changes)`);
console.log(`20 filtered webhooks:   ${(b.nsPerChange / 1000).toFixed(2)} µs per change (${b.wanted} deliveries per 1,000 changes)`);
console.log(`load average: ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`);

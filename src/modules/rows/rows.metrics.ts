import { Gauge, type Registry } from 'prom-client';
import type { BaseData } from './base-data.js';

/**
 * The rows module's memory in /metrics: each in-memory cache, bounded in bytes (whole-base bodies,
 * listing pages, presented row fragments, metadata), and the row indexes this database has.
 */
export function registerRowsMetrics(registry: Registry, data: BaseData): void {
  new Gauge({
    name: 'basegate_read_cache_bytes',
    help: 'Bytes kept by the read caches: whole-base bodies (snapshot), listing pages (page), presented row fragments (fragments), where listing pages end (positions), parsed metadata for reads (metadata, estimated), metadata text for one-statement appends (known_metadata)',
    labelNames: ['cache'],
    registers: [registry],
    collect() {
      this.set({ cache: 'snapshot' }, data.snapshots.stats.bytes);
      this.set({ cache: 'page' }, data.snapshots.pageStats.bytes);
      this.set({ cache: 'fragments' }, data.rows.fragments.stats.bytes);
      this.set({ cache: 'positions' }, data.rows.positions.stats.bytes);
      this.set({ cache: 'metadata' }, data.rows.metadataStats.bytes);
      this.set({ cache: 'known_metadata' }, data.writer.knownMetadataStats.bytes);
    },
  });
  new Gauge({
    name: 'basegate_row_indexes',
    help: 'Expression indexes on base_rows for big tables (rows/row-indexes.ts) known to this process',
    registers: [registry],
    collect() {
      this.set(data.indexes.count());
    },
  });
  new Gauge({
    name: 'basegate_group_sets',
    help: 'Group sets (per-group counts and sums kept with the rows for SQL grouped statements, rows/group-sets.ts) known to this process',
    registers: [registry],
    collect() {
      this.set(data.groupSets.count());
    },
  });
  new Gauge({
    name: 'basegate_group_set_builds',
    help: 'Group set builds by this process since it started, by outcome (refused: too many groups)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      for (const [outcome, n] of Object.entries(data.groupSets.stats)) this.set({ outcome }, n);
    },
  });
  new Gauge({
    name: 'basegate_row_index_builds',
    help: 'Row index builds by this process since it started, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      for (const [outcome, n] of Object.entries(data.indexes.stats)) this.set({ outcome }, n);
    },
  });
  new Gauge({
    name: 'basegate_listing_thread_reads',
    help: 'Listing statements of big SQLite tables this process ran on a reader thread instead of the event loop (rows/thread-reads.ts)',
    registers: [registry],
    collect() {
      this.set(data.rows.threadReadCount);
    },
  });
}

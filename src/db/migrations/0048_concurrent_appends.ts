import type { Kysely } from 'kysely';
import { isPostgres, sql } from './helpers.js';

/**
 * Issue 34 item 4, PostgreSQL only: appends of one base that commit concurrently (PG_CONCURRENT_APPENDS,
 * docs/architecture.md "Concurrent appends of one base").
 *
 * - `base_revision_stripes`: an append adds 1 to one of 16 stripe rows of its base instead of bumping
 *   `base_metadata.revision` (whose row lock and trigger notify would put every commit in series). A
 *   base's revision is `base_metadata.revision` plus the sum of its stripes.
 * - `basegate_event_draw(n)`: a block of `n` consecutive event ids, drawn under a short session
 *   advisory lock (4471100; let go on any error, a cancel included), which also takes a transaction lock named by the block's first id (key
 *   space 0x7B in the top byte) before letting the short lock go.
 * - `basegate_event_horizon()`: the highest id H such that every event with id <= H has committed or
 *   never will: min(L, M - 1), L the sequence's last value, M the lowest first id among the block locks
 *   held in this database; while a serialized writer holds EVENTS_COMMIT_LOCK (4471002) exclusively
 *   (its ids come from the sequence without a block lock), the highest committed id read before, and
 *   still below every block in flight (the lock's key is shared by every schema of the database).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`CREATE TABLE base_revision_stripes (
    base_id bigint NOT NULL REFERENCES base_metadata (base_id) ON DELETE CASCADE,
    stripe smallint NOT NULL,
    n bigint NOT NULL,
    PRIMARY KEY (base_id, stripe)
  )`.execute(db);
  await sql`
    CREATE FUNCTION basegate_event_draw(n bigint) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE first bigint;
    BEGIN
      PERFORM pg_advisory_lock(4471100);
      BEGIN
        first := nextval('events_id_seq');
        IF n > 1 THEN PERFORM setval('events_id_seq', first + n - 1); END IF;
        PERFORM pg_advisory_xact_lock_shared((x'7B00000000000000'::bigint) | first);
      EXCEPTION
        WHEN query_canceled THEN PERFORM pg_advisory_unlock(4471100); RAISE;
        WHEN OTHERS THEN PERFORM pg_advisory_unlock(4471100); RAISE;
      END;
      PERFORM pg_advisory_unlock(4471100);
      RETURN first;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION basegate_event_horizon() RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE committed bigint; l bigint; called boolean; m bigint; serialized boolean;
    BEGIN
      SELECT coalesce(max(id), 0) INTO committed FROM events;
      PERFORM pg_advisory_lock(4471100);
      BEGIN
        SELECT last_value, is_called INTO l, called FROM events_id_seq;
        IF NOT called THEN l := 0; END IF;
        SELECT min(CASE WHEN (classid::bigint >> 24) = x'7B'::bigint THEN ((classid::bigint & x'00FFFFFF'::bigint) << 32) | objid::bigint END),
               bool_or(classid = 0 AND objid = 4471002 AND mode = 'ExclusiveLock' AND granted)
          INTO m, serialized
          FROM pg_locks
         WHERE locktype = 'advisory' AND objsubid = 1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
      EXCEPTION
        WHEN query_canceled THEN PERFORM pg_advisory_unlock(4471100); RAISE;
        WHEN OTHERS THEN PERFORM pg_advisory_unlock(4471100); RAISE;
      END;
      PERFORM pg_advisory_unlock(4471100);
      -- A serialized writer holds the commit lock: its ids (drawn without a block lock) are above every
      -- committed one. The lock may be another schema's in the same database (the key is shared), whose
      -- holding does not keep this schema's appends out: their in-flight blocks still bound the horizon.
      IF serialized THEN RETURN least(committed, coalesce(m - 1, committed)); END IF;
      RETURN least(l, coalesce(m - 1, l));
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`DROP FUNCTION IF EXISTS basegate_event_horizon()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS basegate_event_draw(bigint)`.execute(db);
  await sql`DROP TABLE IF EXISTS base_revision_stripes`.execute(db);
}

import type { DatabaseConnection, QueryResult, Transaction } from 'kysely';
import { connectionKysely, type Database } from '../../db/index.js';

/** Thrown by a query sent to a `NoDatabase` transaction. */
export class NeedsDatabase extends Error {
  constructor() {
    super('this work needs the database');
  }
}

/**
 * A PostgreSQL transaction without a database: every query through it throws NeedsDatabase and is
 * counted. A write that needs no reads runs its work in one, its writes deferred into one statement
 * (BaseWriter); `used` tells afterwards whether the work asked the database anything (then it is
 * redone in a real transaction, whatever the work did with the error).
 */
export class NoDatabase {
  used = false;

  run<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const refuse = (): never => {
      this.used = true;
      throw new NeedsDatabase();
    };
    const connection: DatabaseConnection = {
      executeQuery: async <R>(): Promise<QueryResult<R>> => refuse(),
      streamQuery: <R>(): AsyncIterableIterator<QueryResult<R>> => refuse(),
    };
    return connectionKysely<Database>(connection).transaction().execute(work);
  }
}

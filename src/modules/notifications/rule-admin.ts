import type { Db } from '../../db/index.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { parsePositiveId } from '../../shared/ids.js';
import { parsePage } from '../../shared/pagination.js';
import { countRulesIn, deleteInvalidRulesIn, deleteLiveRuleIn, listAllRulesIn, type RuleListingOf, type RuleTableName } from './rule-store.js';

/** Admin lists: `per_page` is capped at this many rules. */
export const ADMIN_MAX_PER_PAGE = 100;

export interface RuleAdminMessages {
  /** The 400 for a rule id that is not a positive whole number. */
  badId: string;
  /** The 404 for a rule that does not exist. */
  notFound: (rid: string) => string;
}

/**
 * The system admin's operations on rules, alike for notification and automation rules (they differ
 * only in the table, the record shape and the error texts): a page of all (or only invalid) rules,
 * delete one, delete every invalid one.
 */
export class RuleAdmin<T extends RuleTableName, R> {
  constructor(
    private readonly db: Db,
    private readonly table: T,
    private readonly present: (row: RuleListingOf<T>) => R,
    private readonly messages: RuleAdminMessages,
  ) {}

  async list(query: { page?: unknown; per_page?: unknown }, onlyInvalid: boolean): Promise<{ rules: R[]; count: number }> {
    const page = parsePage(query, { page: 1, perPage: 25 }, ADMIN_MAX_PER_PAGE);
    const [rows, count] = await Promise.all([
      listAllRulesIn(this.db, this.table, onlyInvalid, page.offset, page.perPage),
      countRulesIn(this.db, this.table, onlyInvalid),
    ]);
    return { rules: rows.map(this.present), count };
  }

  async delete(rid: string): Promise<void> {
    const id = parsePositiveId(rid);
    if (id === null) throw badRequest(this.messages.badId);
    if (!(await deleteLiveRuleIn(this.db, this.table, id))) throw notFound(this.messages.notFound(rid));
  }

  deleteInvalid(): Promise<number> {
    return deleteInvalidRulesIn(this.db, this.table);
  }
}

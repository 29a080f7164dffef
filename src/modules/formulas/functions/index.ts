import { DATE_FUNCTIONS } from './date.js';
import { LOGIC_FUNCTIONS } from './logic.js';
import { MATH_FUNCTIONS } from './math.js';
import { TEXT_FUNCTIONS } from './text.js';
import type { FunctionDef } from './types.js';

export type { FunctionDef } from './types.js';
export { common } from './logic.js';

/** The function library by category (names are matched case-insensitively: `dateDif` = `datedif`). */
export const CATEGORIES = { math: MATH_FUNCTIONS, text: TEXT_FUNCTIONS, date: DATE_FUNCTIONS, logic: LOGIC_FUNCTIONS } as const;

export const FUNCTIONS: ReadonlyMap<string, FunctionDef> = new Map(Object.values(CATEGORIES).flatMap((c) => Object.entries(c)));

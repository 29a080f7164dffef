/**
 * The formula language: one parser, type inference and function library shared by formula columns,
 * link-formula columns and the SQL endpoint. See docs/formulas.md.
 */
export { compileFormula, binaryType, type ColumnRef, type CompiledFormula } from './compile.js';
export { evaluate, compare, type CellReader } from './evaluate.js';
export { FormulaSyntaxError, MAX_FORMULA_LENGTH, parseFormula, type Node } from './syntax.js';
export { FormulaDate, toCell, toText, toNumber, toBool, toDate, isBlank, type EvalContext, type ResultType, type Value } from './values.js';
export { cellToValue, referenceType } from './cells.js';
export { CATEGORIES, FUNCTIONS } from './functions/index.js';
export { rfc3339, partsIn, zonedMs } from './calendar.js';
export { FormulaColumnError, FormulaPlan, formulaColumnData, renameReference, type PlanColumn, type PlanContext, type PlanRow, type PlanTable } from './table-plan.js';
export { LINK_FORMULAS, SUMMARY_METHODS, linkFormulaCell, linkFormulaColumnData, otherTableId, readSpec, type LinkFormulaSpec, type LinkedCells } from './link-formula.js';
export { isVolatileFormula } from './volatile.js';
export { evaluateBatch, storeFormulaCells, type FormulaBatch, type FormulaCells } from './batch.js';
export { FormulaThreads, THREAD_MIN_CELLS, type FormulaThreadsOptions } from './formula-threads.js';

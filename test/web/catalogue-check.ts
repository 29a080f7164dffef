import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** Attributes (and our components' text props: Loading what, ConfirmButton question…) a person reads or hears. */
const SPOKEN_ATTRIBUTES = new Set(['aria-label', 'aria-description', 'aria-roledescription', 'aria-valuetext', 'title', 'placeholder', 'alt', 'label', 'what', 'button', 'question']);
/** Browser dialogs: their messages must come from the catalogue too. */
const DIALOGS = new Set(['confirm', 'alert', 'prompt']);

export interface Literal {
  file: string;
  line: number;
  text: string;
}

/** Words: at least two letters in a row. Punctuation, numbers, "×", "·" or "→" alone need no translation. */
const hasWords = (text: string) => /\p{L}{2,}/u.test(text);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'i18n' ? [] : sourceFiles(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** String literals an expression can evaluate to, through `a ? 'x' : 'y'`, `a && 'x'`, `a ?? 'x'` and parentheses. */
function literalsOf(node: ts.Expression): ts.StringLiteralLike[] {
  if (ts.isStringLiteralLike(node)) return [node];
  if (ts.isParenthesizedExpression(node)) return literalsOf(node.expression);
  if (ts.isConditionalExpression(node)) return [...literalsOf(node.whenTrue), ...literalsOf(node.whenFalse)];
  if (ts.isBinaryExpression(node) && [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(node.operatorToken.kind)) {
    return [...literalsOf(node.left), ...literalsOf(node.right)];
  }
  if (ts.isTemplateExpression(node)) return [];
  return [];
}

/** Template literals: their fixed parts are text too (`${count} rows`). */
function templateText(node: ts.Expression): string | undefined {
  if (ts.isParenthesizedExpression(node)) return templateText(node.expression);
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ');
  return undefined;
}

/**
 * Every user-visible English text written in the console's source (web/src, outside i18n/):
 * JSX text, string (or template) children, spoken attributes and dialog messages. The console
 * must take all of them from the catalogue (`t('key')`) so that a translation is one file.
 */
export function literalTexts(webSrc: string): Literal[] {
  const found: Literal[] = [];
  for (const file of sourceFiles(webSrc)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const report = (node: ts.Node, text: string) => {
      if (!hasWords(text)) return;
      found.push({ file: path.relative(webSrc, file), line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: text.trim().replace(/\s+/g, ' ') });
    };
    const reportExpression = (expression: ts.Expression) => {
      for (const literal of literalsOf(expression)) report(literal, literal.text);
      const template = templateText(expression);
      if (template !== undefined) report(expression, template);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isJsxText(node)) report(node, node.text);
      else if (ts.isJsxExpression(node) && node.expression && (ts.isJsxElement(node.parent) || ts.isJsxFragment(node.parent))) reportExpression(node.expression);
      else if (ts.isJsxAttribute(node) && SPOKEN_ATTRIBUTES.has(node.name.getText()) && node.initializer) {
        if (ts.isStringLiteral(node.initializer)) report(node.initializer, node.initializer.text);
        else if (ts.isJsxExpression(node.initializer) && node.initializer.expression) reportExpression(node.initializer.expression);
      } else if (ts.isCallExpression(node)) {
        const callee = node.expression;
        const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
        if (DIALOGS.has(name) && node.arguments[0]) reportExpression(node.arguments[0]);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

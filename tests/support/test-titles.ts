/**
 * The test titles a Vitest file declares, read from its syntax tree without running it: every `it`/`test` call
 * with the chain of `describe` titles around it. A `${...}` in a template-literal title is kept as `<>`, so a
 * title built from a constant can be named as `<N>` in a traceability pointer.
 */
import fs from "node:fs";
import ts from "typescript";

export type DeclaredTest = { describes: string[]; title: string };

const SUITE = new Set(["describe", "suite"]);
const TEST = new Set(["it", "test"]);

/** `describe`, `describe.each(...)`, `it.skip`, `test.concurrent.each(...)` ... -> the base name. */
function baseName(expr: ts.Expression): string | null {
  if (ts.isIdentifier(expr)) return expr.text;
  if (ts.isPropertyAccessExpression(expr)) return baseName(expr.expression);
  if (ts.isCallExpression(expr)) return baseName(expr.expression); // describe.each(table)(title, fn)
  if (ts.isTaggedTemplateExpression(expr)) return baseName(expr.tag); // it.each`table`(title, fn)
  return null;
}

function titleOf(node: ts.Expression | undefined): string | null {
  if (!node) return null;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((s) => "<>" + s.literal.text).join("");
  return null;
}

export function declaredTests(file: string): DeclaredTest[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: DeclaredTest[] = [];
  const visit = (node: ts.Node, describes: string[]) => {
    if (ts.isCallExpression(node)) {
      const name = baseName(node.expression);
      const title = titleOf(node.arguments[0]);
      if (name && title !== null && SUITE.has(name)) {
        node.arguments.slice(1).forEach((a) => visit(a, [...describes, title]));
        return;
      }
      if (name && title !== null && TEST.has(name)) {
        found.push({ describes, title });
        return;
      }
    }
    ts.forEachChild(node, (child) => visit(child, describes));
  };
  visit(source, []);
  return found;
}

/** A pointer's `<N>`, `<P>` ... stand for a title's `${...}`. */
export function normaliseTitle(s: string): string {
  return s.replace(/<[A-Za-z_][\w ]*>/g, "<>").replace(/\s+/g, " ").trim();
}

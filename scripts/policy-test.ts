/**
 * `npm run policy:test -- <file>`: checks a policy file without a database. Parses it (a `servers:` section too:
 * literal secrets are refused there), compiles it strictly against the built-in tool catalog, runs its test cases
 * and prints one line per case and a summary.
 *
 * Exit status: 0 when every case passes; 1 when a case fails or the policy has a problem (a Cedar error, a
 * condition the schema refuses); 2 when the file cannot be read or is not a policy file (YAML or schema errors).
 */
import { readFileSync } from "node:fs";
import { compilePolicyFile, parsePolicyFile, type FileProblem } from "../lib/policy/file";
import { oneLine, runPolicyTests } from "../lib/policy/test-cases";
import { policyTools } from "../lib/tools/catalog";

function where(file: string, p: FileProblem): string {
  return p.line !== undefined ? `${file}:${p.line}:${p.column ?? 1}` : file;
}

async function main(argv: string[]): Promise<number> {
  const files = argv.filter((a) => a !== "--");
  if (files.length !== 1) {
    console.error("usage: npm run policy:test -- <policy file>");
    return 2;
  }
  const file = files[0];
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    console.error(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? "error"})`);
    return 2;
  }
  const parsed = parsePolicyFile(text);
  if (!parsed.ok) {
    for (const p of parsed.problems) console.error(`${where(file, p)}: ${oneLine(p.message, 300)}`);
    console.error(`${file}: not a policy file (${parsed.problems.length} problem${parsed.problems.length === 1 ? "" : "s"})`);
    return 2;
  }
  const compiled = compilePolicyFile(parsed.file, policyTools());
  if (!compiled.ok) {
    for (const p of compiled.problems) console.error(`${where(file, p)}: ${oneLine(p.message, 300)}`);
    console.error(`${file}: the policy does not compile (${compiled.problems.length} problem${compiled.problems.length === 1 ? "" : "s"}); no test case ran`);
    return 1;
  }
  const outcomes = await runPolicyTests(compiled.policy, parsed.file.document.tests);
  if (parsed.file.servers?.length) {
    console.log(`${parsed.file.servers.length} upstream server${parsed.file.servers.length === 1 ? "" : "s"} read (no secrets); their tools and summaries are checked when the file is imported`);
  }
  for (const o of outcomes) {
    const pos = parsed.file.locate.test(o.index);
    console.log(`${o.passed ? "PASS" : "FAIL"}  ${oneLine(o.name, 120)}: ${o.reason}${o.passed || !pos ? "" : ` (${file}:${pos.line})`}`);
  }
  const failed = outcomes.filter((o) => !o.passed).length;
  console.log(`${outcomes.length} test case${outcomes.length === 1 ? "" : "s"}: ${outcomes.length - failed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`policy:test failed: ${(e as Error).message}`);
    process.exit(1);
  },
);

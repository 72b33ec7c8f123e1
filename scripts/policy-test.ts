/**
 * `npm run policy:test -- <file>`: checks a policy file without a database. Parses it (a `servers:` section too:
 * literal secrets are refused there), lists the tools of the servers it names from the servers themselves (each
 * started or reached for the purpose and closed again; `${env:NAME}` references read from this environment),
 * compiles it strictly against the built-in tools and those, runs its test cases and prints one line per case and a
 * summary. `--no-servers` skips listing the servers' tools (policies and cases naming them then fail).
 *
 * Exit status: 0 when every case passes; 1 when a case fails or the policy has a problem (a Cedar error, a
 * condition the schema refuses); 2 when the file cannot be read or is not a policy file (YAML or schema errors).
 */
import { readFileSync } from "node:fs";
import { closeUpstreams } from "../lib/gateway/connections";
import { compilePolicyFile, parsePolicyFile, type FileProblem } from "../lib/policy/file";
import { toolsOfNewServers } from "../lib/policy/file-servers";
import { oneLine, runPolicyTests } from "../lib/policy/test-cases";
import { policyToolOf, policyTools } from "../lib/tools/catalog";

function where(file: string, p: FileProblem): string {
  return p.line !== undefined ? `${file}:${p.line}:${p.column ?? 1}` : file;
}

async function main(argv: string[]): Promise<number> {
  const listServers = !argv.includes("--no-servers");
  const files = argv.filter((a) => a !== "--" && a !== "--no-servers");
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
  const servers = parsed.file.servers ?? [];
  const news = listServers && servers.length ? await toolsOfNewServers(servers, new Set()) : null;
  const defs = new Map((news?.defs ?? []).map((d) => [d.name, d]));
  for (const [i, spec] of servers.entries()) {
    if (!news || news.unlisted.some((u) => u.server === i)) continue;
    const n = news.listed.filter((t) => t.server === spec.name).length;
    console.log(`server ${spec.name}: ${n} tool${n === 1 ? "" : "s"} listed`);
  }
  for (const u of news?.unlisted ?? []) console.error(`${where(file, { message: "", ...parsed.file.locate.at(["servers", u.server]) })}: ${oneLine(u.message, 300)}`);
  const compiled = compilePolicyFile(parsed.file, [...policyTools().filter((t) => !defs.has(t.name)), ...(news?.defs ?? []).map(policyToolOf)]);
  if (!compiled.ok) {
    for (const p of compiled.problems) console.error(`${where(file, p)}: ${oneLine(p.message, 300)}`);
    console.error(`${file}: the policy does not compile (${compiled.problems.length} problem${compiled.problems.length === 1 ? "" : "s"}); no test case ran`);
    return 1;
  }
  const outcomes = await runPolicyTests(compiled.policy, parsed.file.document.tests, { tools: defs });
  if (servers.length && !news) {
    console.log(`${servers.length} upstream server${servers.length === 1 ? "" : "s"} read (no secrets); their tools were not listed (--no-servers)`);
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
  async (code) => {
    await closeUpstreams();
    process.exit(code);
  },
  (e) => {
    console.error(`policy:test failed: ${(e as Error).message}`);
    process.exit(1);
  },
);

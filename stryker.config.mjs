// @ts-check
/**
 * Mutation testing of the approval core: `npm run test:mutation` (scripts/mutation.mjs), not part of `npm test`.
 *
 * Mutates lib/execution, lib/approvals, lib/tasks and lib/policy (tests excluded) and runs, for each mutant, only
 * the Vitest tests that cover it (coverageAnalysis perTest, related mode). The suite runs on the embedded
 * database: each Stryker worker starts its own in-memory PGlite through the global setup of vitest.config.ts.
 *
 * Environment (set by scripts/mutation.mjs; all optional when running `npx stryker run` directly):
 *   MUTATION_MUTATE       comma-separated folders or files to mutate (default: the four folders above); a file
 *                         may carry Stryker's line range, lib/policy/evaluate.ts:60-80
 *   MUTATION_REPORT_DIR   where the HTML and JSON reports go (default reports/mutation)
 *   MUTATION_CONCURRENCY  Stryker workers (default 1: the suite itself is CPU-heavy)
 *   MUTATION_TEST_FILES   comma-separated test files (globs) to run instead of every related test: a quick, partial
 *                         measure for one folder while you work on it (its score is a lower bound)
 *   MUTATION_STATIC=1     also test static mutants (module-level code; each one reruns every test, so off by default)
 */
export const MUTATED_FOLDERS = ["lib/execution", "lib/approvals", "lib/tasks", "lib/policy"];

const targets = (process.env.MUTATION_MUTATE ?? MUTATED_FOLDERS.join(","))
  .split(",")
  .map((d) => d.trim().replace(/\/+$/, ""))
  .filter(Boolean);
const reportDir = process.env.MUTATION_REPORT_DIR ?? "reports/mutation";

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.stryker.config.ts", pool: "forks", related: true },
  coverageAnalysis: "perTest",
  mutate: [...targets.map((t) => (/\.ts(:[\d:-]+)?$/.test(t) ? t : `${t}/**/*.ts`)), "!**/*.test.ts"],
  ...(process.env.MUTATION_TEST_FILES ? { testFiles: process.env.MUTATION_TEST_FILES.split(",").map((f) => f.trim()).filter(Boolean) } : {}),
  ignoreStatic: process.env.MUTATION_STATIC !== "1",
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 1),
  // Tests race processes and wait on the database; a busy machine slows them, a mutant looping forever does not end.
  timeoutFactor: 2.5,
  timeoutMS: 20_000,
  dryRunTimeoutMinutes: 30,
  // The event recorder writes each tested mutant as it completes, so a run stopped at a time limit still counts.
  reporters: ["progress", "clear-text", "html", "json", "event-recorder"],
  eventReporter: { baseDir: `${reportDir}/events` },
  htmlReporter: { fileName: `${reportDir}/index.html` },
  jsonReporter: { fileName: `${reportDir}/mutation.json` },
  incremental: process.env.MUTATION_INCREMENTAL === "1",
  incrementalFile: `${reportDir}/incremental.json`,
  clearTextReporter: { allowEmojis: false, logTests: false, reportMutants: false, reportTests: false },
  tempDirName: ".stryker-tmp",
  // The sandbox needs the sources, the tests and the generated Prisma client, not build output or browsers' results.
  ignorePatterns: [".next", ".data", ".cache", "test-results", "playwright-report", "test-reports", "reports", "e2e", "docs"],
  thresholds: { high: 90, low: 85, break: null },
};

/**
 * The Vitest configuration StrykerJS runs (stryker.config.mjs): the unit and integration suite of vitest.config.ts,
 * on the embedded database. Each Stryker worker is its own process with its own Vitest instance, so the global
 * setup starts one in-memory PGlite per worker and no two workers share a database.
 */
import fs from "node:fs";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { configDefaults, defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config";

/**
 * Smallest test files first: Stryker stops a mutant at its first failing test, and the small files are the fast,
 * focused ones (pure policy, one rule per file), so most mutants are killed before the long scenario files start.
 */
class SmallFilesFirst extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const size = (f: TestSpecification) => fs.statSync(f.moduleId).size;
    return [...files].sort((a, b) => size(a) - size(b));
  }
}

export default mergeConfig(
  base,
  defineConfig({
    test: {
      // A mutant is active only in the test process, never in the OS processes a test starts, so the claim race
      // across processes cannot detect one, and with the instrumented (slower) code it fails on a busy machine.
      // It stays in `npm test`; mutation runs leave it out.
      exclude: [...configDefaults.exclude, "tests/claim-race.test.ts"],
      sequence: { sequencer: SmallFilesFirst },
      // The suite prints proof lines; Stryker reads results, not logs.
      silent: true,
    },
  }),
);

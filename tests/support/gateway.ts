/** Helpers for the gateway tests: policy for upstream tools, polling for a state with a bounded deadline. */
import { currentDocument, saveDocument } from "../../lib/policy/store";

/** Adds Cedar text to the current policy document (the demo policy stays as it is). */
export async function addPolicies(cedar: string, now = new Date()): Promise<void> {
  const doc = await currentDocument();
  const r = await saveDocument({ ...doc.body, policies: `${doc.body.policies}\n\n${cedar}` }, "test", now, { check: async () => [] });
  if (!r.ok) throw new Error(`policy did not save: ${r.problems.map((p) => p.message).join("; ")}`);
}

/** Polls `probe` until it returns a value other than undefined/false, or fails after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

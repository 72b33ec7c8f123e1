/**
 * Path arguments that are lists (server-filesystem's read_multiple_files takes `paths: string[]`): policy judges
 * every path as the operating system resolves it, through `<argument>_within`, the set of each path and every
 * folder it lies in. A form rule's folder prefix reads that set, so one rule covers a single path and a list of
 * them, and no spelling of a protected path (`./`, `..`, doubled slashes, a symbolic link, a list that hides it
 * among others) gets another decision.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compilePolicy } from "../policy/compile";
import { PolicyDocument } from "../policy/document";
import { evaluate, type Rule } from "../policy/evaluate";
import { formCondition } from "../policy/form-rules";
import type { PolicyTool } from "../policy/schema";
import { ToolInputError, type ToolDef } from "../tools/types";
import { MAX_PATHS_PER_ARGUMENT, pathAndFolders, upstreamToolDef } from "./source";

const T0 = new Date("2100-11-30T10:00:00.000Z");
let base: string;
let root: string;

const READ_MANY = {
  description: "Read several files",
  inputSchema: { type: "object", properties: { paths: { type: "array", items: { type: "string" }, minItems: 1 } }, required: ["paths"] },
  annotations: { readOnlyHint: true },
};
const READ_ONE = {
  description: "Read a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  annotations: { readOnlyHint: true },
};

function def(tool: string, snapshot: typeof READ_MANY | typeof READ_ONE): ToolDef<Record<string, unknown>> {
  const server = { id: "srv-1", name: "files", enabled: true, pathArgs: ["path", "paths"], root };
  const d = upstreamToolDef(server, { name: tool, accepted: snapshot, acceptedDigest: "sha256:x", status: "accepted", summaryTemplate: null });
  if (!d) throw new Error("no tool");
  return d;
}

const policyTool = (d: ToolDef<Record<string, unknown>>): PolicyTool => ({
  name: d.name,
  inputSchema: d.inputSchema as Record<string, unknown>,
  resourceEntity: d.policyResource.entity,
  resourceShape: d.policyResource.shape,
});

function rule(tool: string, field: string, operator: string, value: string): Rule {
  return {
    id: `r-${tool}`,
    ruleKey: `secret-${tool.replace(/_/g, "-")}`,
    version: 1,
    tool,
    field,
    operator,
    value,
    effect: "requestable",
    approverGroup: "sre",
    approvalsRequired: 1,
    requestDeadlineSec: 3600,
    approvalValiditySec: 600,
    requireJustification: false,
    reason: "Reading secret/ needs an SRE.",
  };
}

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "cs-path-lists-"));
  root = await fs.realpath(base);
  await fs.mkdir(path.join(root, "secret", "deep"), { recursive: true });
  await fs.mkdir(path.join(root, "open"));
  await fs.writeFile(path.join(root, "secret", "key.txt"), "k");
  await fs.writeFile(path.join(root, "open", "a.txt"), "a");
  await fs.symlink(path.join(root, "secret"), path.join(root, "open", "door"));
  await fs.symlink(path.join(root, "secret", "key.txt"), path.join(root, "open", "key-link.txt"));
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("path arguments that are lists", () => {
  it("pathAndFolders names a path and every folder it lies in", () => {
    expect(pathAndFolders("a/b/c.txt")).toEqual(["a", "a/b", "a/b/c.txt"]);
    expect(pathAndFolders("a")).toEqual(["a"]);
    expect(pathAndFolders(".")).toEqual(["."]);
  });

  it("the resource holds the resolved paths, in the call's order, and every folder they lie in", async () => {
    const many = def("read_multiple_files", READ_MANY);
    expect(many.policyResource.shape).toMatchObject({
      paths: { type: "StringSet", optional: false, folders: "paths_within" },
      paths_within: { type: "StringSet", optional: false },
    });
    const r = await many.resource({ paths: ["open/a.txt", "./open/../secret//deep/../key.txt", "open/door/deep"] });
    expect(r.type).toBe("upstream-path");
    expect(r.properties.paths).toEqual(["open/a.txt", "secret/key.txt", "secret/deep"]);
    expect(r.properties.paths_within).toEqual(["open", "open/a.txt", "secret", "secret/deep", "secret/key.txt"]);
    expect(r.id).toBe('["open/a.txt","secret/key.txt","secret/deep"]');
    expect(many.summary({ paths: [] }, r)).toBe("files: read_multiple_files on open/a.txt, secret/key.txt, secret/deep");
    const one = def("read_text_file", READ_ONE);
    expect(one.policyResource.shape).toMatchObject({ path: { type: "String" }, path_within: { type: "StringSet" } });
    expect((await one.resource({ path: "open/key-link.txt" })).properties).toMatchObject({ path: "secret/key.txt", path_within: ["secret", "secret/key.txt"] });
  });

  it("a list that leaves the root, is too long or holds a non-path is refused as invalid input", async () => {
    const many = def("read_multiple_files", READ_MANY);
    await expect(many.resource({ paths: ["open/a.txt", "../../etc/passwd"] })).rejects.toThrow(ToolInputError);
    await expect(many.resource({ paths: Array.from({ length: MAX_PATHS_PER_ARGUMENT + 1 }, () => "open/a.txt") })).rejects.toThrow(/at most 256/);
    await expect(many.resource({ paths: ["open/a.txt", 7] })).rejects.toThrow(ToolInputError);
  });

  it("a form rule's folder prefix reads the folders of a list; eq asks whether the list holds the value; other comparisons cannot be written", () => {
    const many = policyTool(def("read_multiple_files", READ_MANY));
    expect(formCondition({ field: "paths", operator: "prefix", value: "secret/" }, many)).toBe('resource.paths_within.contains("secret")');
    expect(formCondition({ field: "paths", operator: "eq", value: "secret/key.txt" }, many)).toBe('resource.paths.contains("secret/key.txt")');
    expect(formCondition({ field: "paths", operator: "prefix", value: "sec" }, many)).toBeNull();
    expect(formCondition({ field: "paths", operator: "gt", value: "3" }, many)).toBeNull();
    expect(formCondition({ field: "paths_within", operator: "eq", value: "secret" }, many)).toBe('resource.paths_within.contains("secret")');
  });

  it("every spelling of a protected path, alone or hidden in a list, gets the same decision from one folder rule per tool", async () => {
    const many = def("read_multiple_files", READ_MANY);
    const one = def("read_text_file", READ_ONE);
    const tools = [policyTool(many), policyTool(one)];
    const policies = `@id("reads")\npermit (principal, action in [Action::"files__read_multiple_files", Action::"files__read_text_file"], resource);\n`;
    const compiled = compilePolicy(
      {
        rules: [rule(many.name, "paths", "prefix", "secret/"), rule(one.name, "path", "prefix", "secret/")],
        document: { id: "d", version: 1, body: PolicyDocument.parse({ policies }) },
        tools,
      },
      { strict: true },
    );
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
    const decide = async (d: ToolDef<Record<string, unknown>>, args: Record<string, unknown>) =>
      evaluate(
        {
          subject: { agentId: "a", agentName: "reader", user: { id: "u", email: "u@countersign.test", name: "u", role: "requester", groups: [] } },
          action: { name: d.name },
          resource: await d.resource(args),
          context: { args, history: {} },
        },
        compiled.policy,
        T0,
      ).decision;
    const protectedSpellings = ["secret/key.txt", "./secret/key.txt", "secret//key.txt", "open/../secret/key.txt", `${root}/secret/key.txt`, "open/door/key.txt", "open/key-link.txt", "secret", "secret/", "secret/.", "open/door"];
    for (const p of protectedSpellings) {
      expect(await decide(one, { path: p }), p).toBe("requestable");
      expect(await decide(many, { paths: [p] }), p).toBe("requestable");
      expect(await decide(many, { paths: ["open/a.txt", p, "open"] }), `hidden: ${p}`).toBe("requestable");
    }
    for (const p of ["open/a.txt", "open", ".", "secrets-not/x.txt", "open/door-not"]) {
      expect(await decide(one, { path: p }), p).toBe("allow");
      expect(await decide(many, { paths: [p, "open/a.txt"] }), p).toBe("allow");
    }
  });
});

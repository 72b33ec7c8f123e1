/**
 * The policy file's `servers:` section (lib/policy/file-servers.ts), beyond lib/policy/file.test.ts and
 * tests/policy-file.test.ts: what is refused where, what a server is written as (only the parts it has, in a stable
 * order), what an import would change, and that export never writes a secret entered in the console.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { recordSnapshots, setSummaryTemplate } from "../gateway/discover";
import { connectionOf, saveUpstream } from "../gateway/servers";
import { resetDb, userId } from "../../tests/support/db";
import { edited } from "../../tests/support/edit";
import { T0 } from "../../tests/support/proof";
import { describeDiff, diffPolicy, exportPolicyFile, formatPolicyFile, importPolicyFile, parsePolicyFile, type PolicyFile } from "./file";
import { applySummariesOfDiscovered } from "./file-servers";

const EXAMPLE = readFileSync(path.resolve(import.meta.dirname, "../../policy/countersign.policy.yaml"), "utf8");
const withServers = (section: string) => edited(EXAMPLE, "format: countersign.policy/v1\n", `format: countersign.policy/v1\n${section}`);
const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

function parsed(text: string): PolicyFile {
  const r = parsePolicyFile(text);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.file;
}

function problemsOf(text: string) {
  const r = parsePolicyFile(text);
  expect(r.ok).toBe(false);
  return r.ok ? [] : r.problems;
}

/** A listed tool's snapshot that takes a path. */
const snapshot = (description: string) => ({ description, inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }, annotations: {} });

/** The servers section as formatPolicyFile writes it (from `servers:` up to `rules:`). */
const serversWritten = (file: PolicyFile) => {
  const text = formatPolicyFile(file);
  return text.slice(text.indexOf("servers:\n"), text.indexOf("rules:\n"));
};

describe("the servers section refuses, at its line and column", () => {
  it("a key it does not know, so a misspelt or invented secret field is never dropped silently", () => {
    const token = withServers("servers:\n  - name: wiki\n    transport: streamable-http\n    url: https://wiki.example.test/mcp\n    token: ${env:WIKI_TOKEN}\n");
    expect(problemsOf(token)).toEqual([{ line: lineOf(token, "token: ${env:WIKI_TOKEN}"), column: 5, message: "servers[0].token: there is no key token here" }]);
    // A bearer credential has no value beside it: a literal there is refused, not ignored.
    const both = withServers("servers:\n  - name: wiki\n    transport: streamable-http\n    url: https://wiki.example.test/mcp\n    credentials:\n      bearer: ${env:WIKI_TOKEN}\n      value: hunter2\n");
    expect(problemsOf(both)).toEqual([{ line: lineOf(both, "value: hunter2"), column: 7, message: "servers[0].credentials.value: there is no key value here" }]);
  });

  it("a password in the URL however the URL spells it; an @ after the host is no password and is kept", () => {
    // Each of these is https://bot:pw@wiki.example.test/mcp to a URL parser (and to the gateway when it connects).
    for (const url of ["HTTPS://bot:pw@wiki.example.test/mcp", "https:bot:pw@wiki.example.test/mcp", "https:/bot:pw@wiki.example.test/mcp", "https://bot@wiki.example.test/mcp", "https://:pw@wiki.example.test/mcp"]) {
      const text = withServers(`servers:\n  - name: wiki\n    transport: streamable-http\n    url: ${url}\n`);
      expect(problemsOf(text), url).toEqual([
        { line: lineOf(text, `url: ${url}`), column: 10, message: "servers[0].url: credentials in the URL are refused: use credentials with ${env:NAME}" },
      ]);
    }
    for (const url of ["https://wiki.example.test/mcp?next=https://bot@other.example.test/", "https://wiki.example.test?next=bot@other.example.test"]) {
      const file = parsed(withServers(`servers:\n  - name: wiki\n    transport: streamable-http\n    url: ${url}\n`));
      expect(file.servers).toEqual([{ name: "wiki", transport: "streamable-http", enabled: true, url, pathArgs: [], summaries: {} }]);
    }
  });

  it("credentials on a stdio server (they belong to a URL's server)", () => {
    const text = withServers("servers:\n  - name: files\n    transport: stdio\n    command: npx\n    credentials:\n      bearer: ${env:FILES_TOKEN}\n");
    expect(problemsOf(text)).toEqual([{ line: lineOf(text, "bearer: ${env:FILES_TOKEN}"), column: 7, message: "servers[0].credentials: a stdio server has no credentials" }]);
  });

  it("an environment on a URL's server, at the environment given; a literal in it at its variable's name, in a credential at the value", () => {
    const text = withServers("servers:\n  - name: wiki\n    transport: streamable-http\n    url: https://wiki.example.test/mcp\n    env:\n      WIKI_TOKEN: ${env:WIKI_TOKEN}\n");
    expect(problemsOf(text)).toEqual([{ line: lineOf(text, "WIKI_TOKEN: ${env:WIKI_TOKEN}"), column: 7, message: "servers[0].env: a streamable-http server has no env" }]);
    const literal = withServers("servers:\n  - name: files\n    transport: stdio\n    command: npx\n    env:\n      FILES_TOKEN: hunter2\n");
    expect(problemsOf(literal)).toEqual([{ line: lineOf(literal, "FILES_TOKEN: hunter2"), column: 7, message: expect.stringMatching(/^servers\[0\]\.env\.FILES_TOKEN: /) }]);
    // A credential's literal is pointed at where it is written.
    const bearer = withServers("servers:\n  - name: wiki\n    transport: streamable-http\n    url: https://wiki.example.test/mcp\n    credentials:\n      bearer: hunter2\n");
    expect(problemsOf(bearer)).toEqual([{ line: lineOf(bearer, "bearer: hunter2"), column: 15, message: expect.stringMatching(/^servers\[0\]\.credentials\.bearer: /) }]);
  });
});

describe("the servers section as written and compared", () => {
  it("a server is written with only the parts it has, the servers and each one's summaries in name order", () => {
    const file = parsed(
      withServers(
        [
          "servers:",
          "  - name: files",
          "    transport: stdio",
          "    command: npx",
          "  - name: wiki",
          "    transport: streamable-http",
          "    url: https://wiki.example.test/mcp",
          "    summaries:",
          "      search: search {query}",
          "      create_page: create {title}",
          "",
        ].join("\n"),
      ),
    );
    expect(serversWritten(file)).toBe(
      [
        "servers:",
        "  - name: files",
        "    transport: stdio",
        "    command: npx",
        "  - name: wiki",
        "    transport: streamable-http",
        "    url: https://wiki.example.test/mcp",
        "    summaries:",
        "      create_page: create {title}",
        "      search: search {query}",
        "",
      ].join("\n"),
    );
  });

  it("an import's diff names new servers in name order and a changed server's fields in name order", () => {
    const current = parsed(withServers("servers:\n  - name: tickets\n    transport: streamable-http\n    url: https://tickets.example.test/mcp\n"));
    const incoming = parsed(
      withServers(
        [
          "servers:",
          "  - name: wiki",
          "    transport: streamable-http",
          "    url: https://wiki.example.test/mcp",
          "  - name: tickets",
          "    transport: streamable-http",
          "    url: https://tickets.example.test/v2/mcp",
          "    credentials:",
          "      bearer: ${env:TICKETS_TOKEN}",
          "  - name: docs",
          "    transport: streamable-http",
          "    url: https://docs.example.test/mcp",
          "",
        ].join("\n"),
      ),
    );
    const diff = diffPolicy(current, incoming);
    expect(diff.servers).toEqual({ added: ["docs", "wiki"], changed: [{ name: "tickets", fields: ["credentials", "url"] }] });
    expect(describeDiff(diff)).toBe("+ server docs\n+ server wiki\n~ server tickets (credentials, url)");
  });
});

describe("export of the registered servers", () => {
  beforeEach(resetDb);

  it("a header credential entered in the console is written as ${stored}, never its value, and importing it back keeps the value", async () => {
    await saveUpstream({ name: "wiki", transport: "streamable-http", url: "https://wiki.example.test/mcp", credentials: { header: "X-Api-Key", value: "sk_live_entered_in_console" } }, "user:admin", T0);
    const text = await exportPolicyFile();
    expect(text).not.toContain("sk_live_entered_in_console");
    expect(text).toContain("servers:\n  - name: wiki\n    transport: streamable-http\n    url: https://wiki.example.test/mcp\n    credentials:\n      header: X-Api-Key\n      value: ${stored}\n");
    expect(await importPolicyFile(text, await userId("admin@countersign.test"), T0)).toMatchObject({ ok: true, unchanged: true });
    const wiki = await db().upstreamServer.findUniqueOrThrow({ where: { name: "wiki" } });
    expect((await connectionOf(wiki.id))!.headers).toEqual({ "X-Api-Key": "sk_live_entered_in_console" });
  });

  it("the servers are written in name order, whatever order they were registered in", async () => {
    for (const name of ["wiki", "docs", "tickets"]) await saveUpstream({ name, transport: "streamable-http", url: `https://${name}.example.test/mcp` }, "user:admin", T0);
    const text = await exportPolicyFile();
    const names = [...text.slice(text.indexOf("servers:\n"), text.indexOf("rules:\n")).matchAll(/^  - name: (\S+)$/gm)].map((m) => m[1]);
    expect(names).toEqual(["docs", "tickets", "wiki"]);
  });

  it("a stdio server is written whole (args, root, path arguments) with the summaries of only the tools that have one", async () => {
    const files = await saveUpstream(
      { name: "files", transport: "stdio", command: "node", args: ["server.js", "/srv"], root: "/srv", pathArgs: ["path"] },
      "user:admin",
      T0,
    );
    await recordSnapshots(files.id, "files", [{ name: "read_file", snapshot: snapshot("Read a file") }, { name: "write_file", snapshot: snapshot("Write a file") }], T0);
    await setSummaryTemplate("files", "write_file", "write {path}", "user:admin", T0);
    const text = await exportPolicyFile();
    expect(text.slice(text.indexOf("servers:\n"), text.indexOf("rules:\n"))).toBe(
      [
        "servers:",
        "  - name: files",
        "    transport: stdio",
        "    command: node",
        "    args:",
        "      - server.js",
        "      - /srv",
        "    root: /srv",
        "    path_arguments:",
        "      - path",
        "    summaries:",
        "      write_file: write {path}",
        "",
      ].join("\n"),
    );
  });
});

describe("the summaries of a new server's discovered tools", () => {
  beforeEach(resetDb);

  it("are set on that server's tools only: another server's tools and their summaries are left as they are", async () => {
    const wiki = await saveUpstream({ name: "wiki", transport: "streamable-http", url: "https://wiki.example.test/mcp" }, "user:admin", T0);
    await recordSnapshots(wiki.id, "wiki", [{ name: "edit_page", snapshot: snapshot("Edit a page") }], T0);
    await setSummaryTemplate("wiki", "edit_page", "edit {path} in the wiki", "user:admin", T0);
    const files = await saveUpstream({ name: "files", transport: "stdio", command: "node", args: ["server.js"] }, "user:admin", T0);
    await recordSnapshots(files.id, "files", [{ name: "read_file", snapshot: snapshot("Read a file") }, { name: "write_file", snapshot: snapshot("Write a file") }], T0);
    const spec = parsed(withServers("servers:\n  - name: files\n    transport: stdio\n    command: node\n    summaries:\n      write_file: write {path}\n")).servers![0];

    await applySummariesOfDiscovered(spec, "user:admin", T0);
    const templates = await db().upstreamTool.findMany({ select: { name: true, summaryTemplate: true, server: { select: { name: true } } }, orderBy: { name: "asc" } });
    expect(templates.map((t) => [t.server.name, t.name, t.summaryTemplate])).toEqual([
      ["wiki", "edit_page", "edit {path} in the wiki"],
      ["files", "read_file", null],
      ["files", "write_file", "write {path}"],
    ]);
    const audited = await db().auditEvent.findMany({ where: { type: "upstream.summary-template" }, orderBy: { seq: "asc" } });
    expect(audited.map((e) => (e.data as { server: string; tool: string }).tool)).toEqual(["edit_page", "write_file"]);
  });
});

describe("a server's URL that is not an http URL", () => {
  beforeEach(resetDb);

  it("is refused with what is wrong, in the file at its line and column and in the console, never an internal error", async () => {
    const cases = [
      { url: "wiki.example.test/mcp", words: "Invalid URL" },
      { url: "ftp://wiki.example.test/mcp", words: "an http:// or https:// URL" },
    ];
    for (const { url, words } of cases) {
      const text = withServers(`servers:\n  - name: wiki\n    transport: streamable-http\n    url: ${url}\n`);
      expect(problemsOf(text), url).toEqual([{ line: lineOf(text, `url: ${url}`), column: 10, message: `servers[0].url: ${words}` }]);
      await expect(saveUpstream({ name: "wiki", transport: "streamable-http", url }, "system", T0), url).rejects.toThrow(`Invalid upstream server: url: ${words}.`);
    }
    expect(await db().upstreamServer.count()).toBe(0);
  });

  it("a password in the URL is refused in the console too, however the URL spells it, and nothing is stored", async () => {
    for (const url of ["https://bot:pw@wiki.example.test/mcp", "https:bot:pw@wiki.example.test/mcp", "HTTPS://bot@wiki.example.test/mcp"]) {
      await expect(saveUpstream({ name: "wiki", transport: "streamable-http", url }, "system", T0), url).rejects.toThrow(
        "Invalid upstream server: url: a URL without a user name or password: give credentials in their own field.",
      );
    }
    expect(await db().upstreamServer.count()).toBe(0);
    await saveUpstream({ name: "wiki", transport: "streamable-http", url: "https://wiki.example.test/mcp?next=bot@other.example.test" }, "system", T0);
    expect(await db().upstreamServer.count()).toBe(1);
  });
});

/**
 * The approval gateway end to end, through real HTTP and a real browser: @modelcontextprotocol/server-filesystem
 * runs over stdio under Countersign on the demo folder (scripts/start.ts registers it beside the demo shop, in
 * <data dir>/demo-files). An agent writes a file into protected/ through Countersign's /mcp; the call becomes a
 * task; an SRE signs in, opens the request from the inbox, sees the server, the tool, the path and the arguments
 * and approves; the file is written once and the agent's tasks/get reads approved-executed.
 *
 * The file is checked on disk when the spec knows the server's data folder (COUNTERSIGN_DATA_DIR, as
 * scripts/test.sh passes it), and always through the upstream's own read tool.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { ADMIN, DISPOSITION_KEY, OPS_BOT, SASHA, callTool, expectAccessible, gatedCall, mcp, openFromInbox, personIn, ready, taskReaching, unique } from "./support";

const dataDir = process.env.COUNTERSIGN_DATA_DIR ? path.resolve(process.env.COUNTERSIGN_DATA_DIR) : null;

test("an agent's write into protected/ waits for an SRE, then the upstream writes the file once (approved-executed)", async ({ browser, request }, testInfo) => {
  // The demo upstream's tools are offered under the server's namespace.
  const listed = await mcp(request, OPS_BOT, "tools/list");
  const names = (listed.tools as { name: string }[]).map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(["filesystem__read_text_file", "filesystem__write_file"]));

  const file = `protected/e2e-${unique()}.txt`;
  const content = `Release notes written through Countersign (${file}).`;

  // (1) The write is held for an SRE: a working task, and nothing on disk yet.
  const taskId = await gatedCall(request, OPS_BOT, "filesystem__write_file", { path: file, content });
  expect((await mcp(request, OPS_BOT, "tasks/get", { taskId })).status).toBe("working");
  if (dataDir) await expect(fs.stat(path.join(dataDir, "demo-files", file))).rejects.toThrow();

  // (2) An SRE opens it from the inbox: the server, the tool, the resolved path and every argument.
  const { context, page } = await personIn(browser, testInfo, SASHA.email);
  await openFromInbox(page, path.basename(file), taskId);
  await expect(page.getByTestId("request-summary")).toHaveText(`filesystem: write_file on ${file}`);
  await expect(page.getByText("filesystem__write_file", { exact: true })).toBeVisible();
  await expect(page.getByRole("rowheader", { name: "path" })).toBeVisible();
  await expect(page.getByRole("cell", { name: file, exact: true })).toBeVisible();
  await expect(page.getByRole("rowheader", { name: "content" })).toBeVisible();
  await expect(page.getByRole("cell", { name: content, exact: true })).toBeVisible();
  await expect(page.getByTestId("canonical-json")).toHaveText(JSON.stringify({ content, path: file }));
  await expect(page.getByTestId("arguments-digest")).toHaveText(/^sha256:[0-9a-f]{64}$/);
  await expect(page.getByText("Writes under protected/ need an SRE approval.")).toBeVisible();
  // What the upstream tool says it does, in its own words as discovered, beside what it is asked to do.
  await expect(page.getByTestId("tool-description")).toContainText("Create a new file or completely overwrite an existing file with new content.");
  await expect(page.getByTestId("tool-standing")).toHaveCount(0);
  await page.screenshot({ path: testInfo.outputPath("gateway-request.png"), fullPage: true });

  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByTestId("request-outcome")).toContainText("Approved — ");
  await expect(page.getByTestId("request-outcome")).not.toContainText(/failed|unknown/);

  // (3) The agent reads approved-executed; the upstream's own answer is the result.
  const done = await taskReaching(request, OPS_BOT, taskId);
  expect(done.status).toBe("completed");
  expect(done.result.isError, JSON.stringify(done.result)).toBe(false);
  expect(done.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
  expect(JSON.stringify(done.result.content)).toContain("Successfully wrote");

  // The file holds what was approved: on disk, and as the upstream reads it back (reading is allowed at once).
  if (dataDir) expect(await fs.readFile(path.join(dataDir, "demo-files", file), "utf8")).toBe(content);
  const read = await callTool(request, OPS_BOT, "filesystem__read_text_file", { path: file });
  expect(read.resultType).not.toBe("task");
  expect(read.isError).toBe(false);
  expect(read.content[0].text).toBe(content);

  // Once: polling again changes nothing, and the task ran exactly one upstream call.
  const again = await taskReaching(request, OPS_BOT, taskId);
  expect(again.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
  await page.reload();
  await ready(page);
  await expect(page.getByTestId("request-outcome")).toContainText("Approved — ");
  await context.close();

  // The console lists the server, healthy, with its tools; the page has no serious accessibility violations.
  const admin = await personIn(browser, testInfo, ADMIN.email);
  await admin.page.goto("/admin/servers");
  await ready(admin.page);
  const server = admin.page.getByTestId("upstream").filter({ hasText: "filesystem" }).first();
  await expect(server).toContainText("stdio:");
  await expect(server.getByTestId("upstream-tool").filter({ hasText: "filesystem__write_file" })).toBeVisible();
  await expectAccessible(admin.page, testInfo, "admin-servers");
  await admin.context.close();
});

test("an admin sets the summary reviewers read for an upstream tool; an unknown placeholder is refused; the change is audited", async ({ browser, request }, testInfo) => {
  const { context, page } = await personIn(browser, testInfo, ADMIN.email);
  await page.goto("/admin/servers");
  await ready(page);
  const field = page.getByLabel(/^Summary reviewers read for write_file/);
  await expect(field).toBeVisible();

  // A placeholder the tool has no argument for is refused, and nothing is saved.
  await field.fill("write {file}");
  await page.getByRole("button", { name: "Save summary for write_file" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toContainText("The tool has no argument {file}; its arguments are {content}, {path}.");
  await ready(page);
  await expect(page.getByLabel(/^Summary reviewers read for write_file/)).toHaveValue("");

  await page.getByLabel(/^Summary reviewers read for write_file/).fill("write {path} ({content})");
  await page.getByRole("button", { name: "Save summary for write_file" }).click();
  await expect(page.getByRole("main").getByRole("status")).toContainText('Reviewers now read filesystem__write_file as "write {path} ({content})".');
  await ready(page);
  await expect(page.getByLabel(/^Summary reviewers read for write_file/)).toHaveValue("write {path} ({content})");
  await expectAccessible(page, testInfo, "admin-servers-summary");

  // Reviewers read the new summary on the next request; the change is in the audit trail.
  const file = `protected/summary-${unique()}.txt`;
  const taskId = await gatedCall(request, OPS_BOT, "filesystem__write_file", { path: file, content: "v2" });
  const sre = await personIn(browser, testInfo, SASHA.email);
  await openFromInbox(sre.page, path.basename(file), taskId);
  await expect(sre.page.getByTestId("request-summary")).toHaveText(`filesystem: write ${file} (v2)`);
  await sre.context.close();

  await page.goto("/admin/audit?type=upstream.summary-template");
  await ready(page);
  await expect(page.getByTestId("audit-row").filter({ hasText: "write {path} ({content})" }).first()).toBeVisible();

  // Cleared, the generic summary is back.
  await page.goto("/admin/servers");
  await ready(page);
  await page.getByLabel(/^Summary reviewers read for write_file/).fill("");
  await page.getByRole("button", { name: "Save summary for write_file" }).click();
  await expect(page.getByRole("main").getByRole("status")).toContainText("filesystem__write_file uses the generic summary again.");
  await context.close();
});

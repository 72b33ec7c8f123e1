/**
 * One gated call's whole story across three replicas of one deployment, no request served by the replica that
 * served the one before: the agent's first tools/call on A is answered input_required (the rule wants a
 * justification, MRTR); its retry with the answer and the sealed requestState on B submits the approval; the first
 * treasury approval happens in C's pages, the second in A's pages (with a session signed in on B); the agent polls
 * tasks/get round-robin over all three while all three sweepers run. The transfer runs exactly once: one ledger
 * entry, one claim and one result in the audit trail, and the agent reads approved-executed.
 */
import { expect, test, type Browser, type Page } from "@playwright/test";
import { TASKS_AND_FORMS } from "../lib/mcp/raw-request";
import { DISPOSITION_KEY, OPS_BOT, TARA, THEO, ready, signIn, unique } from "../e2e/support";
import { mcpAt, publishedReplicas, until, withDb } from "./replicas";

const ANSWER = { action: "accept", content: { justification: "Quarterly supplier settlement, invoice INV-2207" } };

async function reviewerOn(browser: Browser, signInAt: string, email: string): Promise<{ page: Page; close: () => Promise<void> }> {
  const context = await browser.newContext({ baseURL: signInAt });
  const page = await context.newPage();
  await signIn(page, email);
  return { page, close: () => context.close() };
}

/** Approves on `replicaUrl`; `amount` is typed when this approval completes the high-risk quorum (the last one). */
async function approveAt(page: Page, replicaUrl: string, taskId: string, amount: string | null): Promise<string> {
  await page.goto(`${replicaUrl}/tasks/${taskId}`);
  await expect(page).toHaveURL(new RegExp(`^${replicaUrl}/requests/[0-9a-f-]{36}$`));
  await ready(page);
  if (amount) await page.getByLabel(/High-risk request: type the amount/).fill(amount);
  await page.getByRole("button", { name: "Approve" }).click();
  const result = page.getByTestId("decision-result");
  await expect(result).toBeVisible();
  return (await result.textContent()) ?? "";
}

test("a gated call's story across three replicas: asked on A, answered on B, approved on C and A, polled round-robin; executed exactly once", async ({ browser }) => {
  const replicas = publishedReplicas();
  expect(replicas.map((r) => r.name)).toEqual(["replica-a", "replica-b", "replica-c"]);
  const [A, B, C] = replicas.map((r) => r.url);
  const agentRequests: string[] = [];
  const agent = async (url: string, method: string, params: Record<string, unknown>, caps?: object) => {
    agentRequests.push(url);
    const r = await mcpAt(url, OPS_BOT, method, params, caps);
    expect(r.status, JSON.stringify(r.message)).toBe(200);
    expect(r.message?.error, JSON.stringify(r.message?.error)).toBeUndefined();
    return r.message.result;
  };

  const requests = () => withDb(async (c) => (await c.query(`SELECT count(*)::int AS n FROM "ApprovalRequest"`)).rows[0].n as number);
  const before = await requests();
  const account = `acct-repl-${unique()}`;
  const args = { to: account, amount: 30_500 };

  // A: the rule asks for a justification before anything is submitted.
  const asked = await agent(A, "tools/call", { name: "wire_transfer", arguments: args }, TASKS_AND_FORMS);
  expect(asked).toMatchObject({ resultType: "input_required", requestState: expect.stringMatching(/^v1\./) });
  expect(asked.inputRequests.approval_request.params.requestedSchema.required).toEqual(["justification"]);
  expect(await requests()).toBe(before);

  // B: the retry with the answer and the state A sealed; B opens it with the shared keys and submits.
  const created = await agent(B, "tools/call", { name: "wire_transfer", arguments: args, inputResponses: { approval_request: ANSWER }, requestState: asked.requestState }, TASKS_AND_FORMS);
  expect(created).toMatchObject({ resultType: "task", status: "working" });
  const taskId = String(created.taskId);
  expect((await agent(C, "tasks/get", { taskId })).status).toBe("working");

  // C's pages: Tara's approval, the first of two.
  const tara = await reviewerOn(browser, C, TARA.email);
  expect(await approveAt(tara.page, C, taskId, null)).toMatch(/Your approval is recorded — waiting for another approver/);
  expect((await agent(A, "tasks/get", { taskId })).status).toBe("working");

  // A's pages, with a session Theo signed in to on B: the second approval, which lets the transfer run.
  const theo = await reviewerOn(browser, B, THEO.email);
  expect(await approveAt(theo.page, A, taskId, "30500")).toMatch(/^Approved/);

  // The agent polls round-robin over the three replicas until the task is terminal.
  const order = [B, C, A];
  let polls = 0;
  const done = await until(
    "the task to complete",
    async () => {
      const t = await agent(order[polls++ % order.length], "tasks/get", { taskId });
      return t.status === "working" ? undefined : t;
    },
    60_000,
    250,
  );
  expect(done.status).toBe("completed");
  expect(done.result.isError).toBe(false);
  expect(done.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
  expect(done.result.content[0].text).toContain(account);

  // No sticky sessions: each of the agent's requests went to a different replica than the one before.
  for (let i = 1; i < agentRequests.length; i++) expect(agentRequests[i], `request ${i}`).not.toBe(agentRequests[i - 1]);
  expect(new Set(agentRequests).size).toBe(3);

  // Exactly one execution: one ledger entry, one claim, one result; two approvals recorded.
  await withDb(async (c) => {
    const transfers = await c.query(`SELECT "taskId" FROM "Transfer" WHERE "toAccount" = $1`, [account]);
    expect(transfers.rows).toEqual([{ taskId }]);
    const audit = await c.query(`SELECT type, data FROM "AuditEvent" WHERE "taskId" = $1 ORDER BY seq`, [taskId]);
    const types = audit.rows.map((r) => r.type as string);
    expect(types.filter((t) => t === "execution.claimed")).toHaveLength(1);
    expect(types.filter((t) => t === "execution.completed")).toHaveLength(1);
    expect(types).not.toContain("execution.outcome-unknown");
    expect(types).not.toContain("execution.result-late");
    expect(types.filter((t) => t === "review.approved")).toHaveLength(2);
    // The claim names the replica that made it.
    const claimed = audit.rows.find((r) => r.type === "execution.claimed");
    expect(String(claimed.data.instance)).toMatch(/^replica-[abc]\.[0-9a-f]{8}$/);
    const task = (await c.query(`SELECT status, disposition, "claimedBy" FROM "Task" WHERE id = $1`, [taskId])).rows[0];
    expect(task).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(task.claimedBy.startsWith(`${claimed.data.instance}:`)).toBe(true);
  });
  await tara.close();
  await theo.close();
});

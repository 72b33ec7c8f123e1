/**
 * Treasury: an outgoing wire transfer in USD, recorded in the transfers ledger. The account is an exact
 * identifier (acct- and lowercase ASCII): a capital, a space, IBAN grouping or a look-alike letter is invalid
 * input, never another account. The amount is a JSON number (25000, 25000.00 and 2.5e4 are one amount) turned into
 * whole cents once; a numeric string or a third decimal is invalid input.
 */
import { z } from "zod";
import { db } from "../db/client";
import { formatMoney, toCents } from "./money";
import { pendingSum, plural } from "./facts-words";
import { ToolInputError, type ToolDef, type ToolFacts } from "./types";

const schema = z
  .object({
    to: z.string().regex(/^acct-[a-z0-9-]{1,40}$/, "to looks like acct-991"),
    amount: z.number().positive().max(1_000_000_000),
    memo: z.string().max(140).optional(),
  })
  .strict();
type Args = z.infer<typeof schema>;

function cents(args: Args): number {
  try {
    return toCents(args.amount);
  } catch (e) {
    throw new ToolInputError(`amount: ${(e as Error).message}.`);
  }
}

/** How far back a reviewer is shown what was sent to the same account. */
export const RECENT_TRANSFERS_DAYS = 30;

/** What was sent to the account in the last 30 days, and the other transfers to it waiting for approval. */
async function transferFacts(args: Args, now: Date, pending: { amountMinor: number | null; currency: string | null }[]): Promise<ToolFacts> {
  const since = new Date(now.getTime() - RECENT_TRANSFERS_DAYS * 86_400_000);
  const sent = await db().transfer.aggregate({
    where: { toAccount: args.to, currency: "USD", createdAt: { gte: since, lte: now } },
    _sum: { amountCents: true },
    _count: true,
  });
  const sentCents = Number(sent._sum.amountCents ?? 0n);
  const waiting = pendingSum(pending, "USD");
  const sentWords = sent._count ? `${formatMoney(sentCents, "USD")} in ${plural(sent._count, "transfer")}` : "nothing";
  return {
    facts: [
      { label: `Sent to ${args.to} in the last ${RECENT_TRANSFERS_DAYS} days`, value: sentWords },
      { label: "Other pending transfers to it", value: pending.length ? `${plural(pending.length, "request")}, ${formatMoney(waiting, "USD")}` : "none" },
    ],
    line: `${RECENT_TRANSFERS_DAYS} days to ${args.to}: ${sentWords}${pending.length ? `; ${pending.length} other pending (${formatMoney(waiting, "USD")})` : ""}`,
  };
}

export const wireTransfer: ToolDef<Args> = {
  name: "wire_transfer",
  title: "Send a wire transfer",
  description: "Send a wire transfer in USD to an account. Large transfers need two treasury approvals; very large ones are refused.",
  schema,
  mappingVersion: 1,
  policyResource: {
    entity: "Account",
    shape: { amount_cents: { type: "Long" }, currency: { type: "String" }, amount: { type: "Money", minor: "amount_cents", currency: "currency" } },
  },
  async resource(args) {
    return { type: "account", id: args.to, properties: { amount_cents: cents(args), currency: "USD" } };
  },
  summary(args) {
    return `${formatMoney(cents(args), "USD")} wire transfer to ${args.to}`;
  },
  facts(args, ctx) {
    return transferFacts(args, ctx.now, ctx.pending);
  },
  effect(args) {
    const amount = formatMoney(cents(args), "USD");
    return { does: `sends ${amount} to ${args.to}`, button: `send ${amount}` };
  },
  async run(args, ctx) {
    const amount = cents(args);
    const t = await db().transfer.create({
      data: { toAccount: args.to, amountCents: BigInt(amount), currency: "USD", memo: args.memo ?? null, taskId: ctx.taskId, createdAt: ctx.now },
    });
    return {
      text: `Transfer ${t.id} of ${formatMoney(amount, "USD")} to ${args.to} sent.`,
      structured: { transfer_id: t.id, to: args.to, amount: amount / 100, currency: "USD" },
    };
  },
};

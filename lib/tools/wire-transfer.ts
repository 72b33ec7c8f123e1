/**
 * Treasury: an outgoing wire transfer in USD, recorded in the transfers ledger. The account is an exact
 * identifier (acct- and lowercase ASCII): a capital, a space, IBAN grouping or a look-alike letter is invalid
 * input, never another account. The amount is a JSON number (25000, 25000.00 and 2.5e4 are one amount) turned into
 * whole cents once; a numeric string or a third decimal is invalid input.
 */
import { z } from "zod";
import { db } from "../db/client";
import { formatMoney, toCents } from "./money";
import { ToolInputError, type ToolDef } from "./types";

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

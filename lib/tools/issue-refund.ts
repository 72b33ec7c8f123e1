/**
 * The demo shop's refund: a row in its ledger, never more than the order's refundable remainder. The order is the
 * order as stored (looked up exactly: an id in another case, with other digits or with leading zeros is not that
 * order), and the amount is whole cents computed once from a JSON number (a numeric string is invalid input).
 */
import { z } from "zod";
import { db } from "../db/client";
import { formatMoney, toCents } from "./money";
import { ToolError, ToolInputError, type ToolDef } from "./types";

const schema = z
  .object({
    order_id: z.string().regex(/^O-\d{1,10}$/, "order_id looks like O-2289"),
    amount: z.number().positive().max(1_000_000).optional().describe("Amount in the order's currency; default: the whole refundable remainder"),
    reason: z.string().max(200).optional(),
  })
  .strict();

type Args = z.infer<typeof schema>;

async function load(args: Args) {
  const order = await db().order.findUnique({ where: { id: args.order_id } });
  if (!order) throw new ToolInputError(`Order ${args.order_id} does not exist.`);
  const refundable = order.totalCents - order.refundedCents;
  let cents: number;
  try {
    cents = args.amount === undefined ? refundable : toCents(args.amount);
  } catch (e) {
    throw new ToolInputError(`amount: ${(e as Error).message}.`);
  }
  if (cents <= 0) throw new ToolInputError(`Order ${order.id} has nothing left to refund.`);
  if (cents > refundable) {
    throw new ToolInputError(`Order ${order.id} has ${formatMoney(refundable, order.currency)} left to refund; ${formatMoney(cents, order.currency)} is more than that.`);
  }
  return { order, refundable, cents };
}

export const issueRefund: ToolDef<Args> = {
  name: "issue_refund",
  title: "Issue a refund",
  description:
    "Refund a customer's order in the demo shop. Refunds above the shop's policy limit wait for a support lead's approval.",
  schema,
  mappingVersion: 1,
  policyResource: {
    entity: "Order",
    shape: {
      amount_cents: { type: "Long" },
      currency: { type: "String" },
      refundable_cents: { type: "Long" },
      total_cents: { type: "Long" },
      amount: { type: "Money", minor: "amount_cents", currency: "currency" },
      refundable: { type: "Money", minor: "refundable_cents", currency: "currency" },
      total: { type: "Money", minor: "total_cents", currency: "currency" },
    },
  },
  async resource(args) {
    const { order, refundable, cents } = await load(args);
    return {
      type: "order",
      id: order.id,
      properties: { amount_cents: cents, currency: order.currency, refundable_cents: refundable, total_cents: order.totalCents },
    };
  },
  summary(args, resource) {
    return `${formatMoney(Number(resource.properties.amount_cents), String(resource.properties.currency))} refund on order ${resource.id}`;
  },
  async run(args, ctx) {
    const { order, cents } = await load(args);
    const refund = await db().$transaction(async (tx) => {
      const updated = await tx.order.updateMany({
        where: { id: order.id, refundedCents: { lte: order.totalCents - cents } },
        data: { refundedCents: { increment: cents } },
      });
      if (updated.count !== 1) throw new ToolError(`Refunding ${formatMoney(cents, order.currency)} would exceed what order ${order.id} has left to refund.`);
      return tx.refund.create({
        data: { orderId: order.id, amountCents: cents, currency: order.currency, reason: args.reason ?? null, taskId: ctx.taskId, createdAt: ctx.now },
      });
    });
    return {
      text: `Refund ${refund.id} of ${formatMoney(cents, order.currency)} issued on order ${order.id}.`,
      structured: { refund_id: refund.id, order_id: order.id, amount: cents / 100, currency: order.currency },
    };
  },
};

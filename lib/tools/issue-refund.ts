/**
 * The demo shop's refund: a row in its ledger, never more than the order's refundable remainder. The order is the
 * order as stored (looked up exactly: an id in another case, with other digits or with leading zeros is not that
 * order), and the amount is whole cents computed once from a JSON number (a numeric string is invalid input).
 */
import { z } from "zod";
import { db } from "../db/client";
import { formatMoney, toCents } from "./money";
import { pendingSum, plural } from "./facts-words";
import { ToolError, ToolInputError, type ToolDef, type ToolFacts } from "./types";

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

/**
 * The order as it is now: its total, what is left to refund, the refunds already issued on it and the other
 * pending refund requests; blocked when this refund no longer fits what is left.
 */
async function refundFacts(args: Args, pending: { amountMinor: number | null; currency: string | null }[]): Promise<ToolFacts> {
  const order = await db().order.findUnique({ where: { id: args.order_id }, include: { refunds: { select: { amountCents: true } } } });
  if (!order) return { facts: [], line: `Order ${args.order_id} does not exist`, blocked: `Order ${args.order_id} does not exist.` };
  const money = (c: number) => formatMoney(c, order.currency);
  const left = order.totalCents - order.refundedCents;
  const issued = order.refunds.reduce((n, r) => n + r.amountCents, 0);
  const waiting = pendingSum(pending, order.currency);
  const asked = args.amount === undefined ? left : Math.round(args.amount * 100);
  const facts = [
    { label: "Order total", value: money(order.totalCents) },
    { label: "Left to refund", value: money(left) },
    { label: "Refunds issued", value: order.refunds.length ? `${plural(order.refunds.length, "refund")}, ${money(issued)}` : "none" },
    { label: "Other pending refund requests", value: pending.length ? `${plural(pending.length, "request")}, ${money(waiting)}` : "none" },
  ];
  const line = `Order ${money(order.totalCents)}, ${money(left)} left${order.refunds.length ? `, ${plural(order.refunds.length, "refund")} issued` : ""}${
    pending.length ? `, ${pending.length} other pending` : ""
  }`;
  const effect = {
    does: `refunds ${money(asked)} on order ${order.id}`,
    button: `refund ${money(asked)}`,
  };
  if (left <= 0) return { facts, line, effect, blocked: `Order ${order.id} has nothing left to refund.` };
  if (asked > left) return { facts, line, effect, blocked: `Order ${order.id} has ${money(left)} left to refund; this refund is ${money(asked)}.` };
  if (asked + waiting > left) {
    return { facts, line, effect, caution: `This refund and the other pending ones on order ${order.id} add up to ${money(asked + waiting)}, more than the ${money(left)} left: not all of them can run.` };
  }
  return { facts, line, effect };
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
  facts(args, ctx) {
    return refundFacts(args, ctx.pending);
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

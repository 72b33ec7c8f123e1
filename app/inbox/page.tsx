import type { Metadata } from "next";
import { AllPending } from "@/app/admin/pending/view";
import { AwaitingList } from "@/components/AwaitingList";
import { InboxList } from "@/components/InboxList";
import { InboxTabs } from "@/components/InboxTabs";
import { Notice } from "@/components/Notice";
import { cache } from "react";
import { currentUser, hasRole, requireUser, REVIEW_ROLES, type SessionUser } from "@/lib/auth/session";
import { inboxPage } from "@/lib/inbox/inbox";
import { awaitingOthers } from "@/lib/inbox/queue";
import { parseInboxParams, type InboxParams } from "@/lib/inbox/params";
import { listTools } from "@/lib/tools/catalog";
import { bulkApproveAction, withdrawAction } from "./actions";

export const dynamic = "force-dynamic";

type Search = { searchParams: Promise<Record<string, string | string[] | undefined>> };

/** The tab's title carries the count waiting, "(3) Inbox"; the open page keeps it current (InboxList). */
export async function generateMetadata({ searchParams }: Search): Promise<Metadata> {
  const user = await currentUser();
  if (!user || !hasRole(user, REVIEW_ROLES)) return { title: "Inbox" };
  const raw = await searchParams;
  if (raw.view === "awaiting") return { title: "Awaiting others" };
  const page = await firstPage(user, JSON.stringify(parseInboxParams(raw)));
  return { title: page.total > 0 ? `(${page.total}${page.totalCapped ? "+" : ""}) Inbox` : "Inbox" };
}

/** One inbox query per server request, shared by the metadata and the page. */
const firstPage = cache((user: SessionUser, params: string) => inboxPage(user, JSON.parse(params) as InboxParams, new Date()));

export default async function InboxPage({ searchParams }: Search) {
  const user = await requireUser();
  // Admins do not review: they land on every group's pending requests and whom each waits on.
  if (user.role === "admin") return <AllPending />;
  if (!hasRole(user, REVIEW_ROLES)) {
    return (
      <Notice title="No inbox for this account">
        Approval requests go to reviewers in the approver groups. Your account ({user.role}) does not review requests.
      </Notice>
    );
  }
  const raw = await searchParams;
  if (raw.view === "awaiting") {
    const now = new Date();
    return (
      <>
        <InboxTabs current="awaiting" />
        <AwaitingList items={await awaitingOthers(user, now)} now={now.toISOString()} withdraw={withdrawAction} />
      </>
    );
  }
  const params = parseInboxParams(raw);
  const initial = await firstPage(user, JSON.stringify(params));
  const tools = listTools().map((t) => t.name);
  return (
    <>
      <InboxTabs current="waiting" />
      <InboxList initial={initial} params={params} tools={tools} groups={user.groups} bulkApprove={bulkApproveAction} />
    </>
  );
}

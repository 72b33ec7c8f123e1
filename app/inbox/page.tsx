import type { Metadata } from "next";
import { AllPending } from "@/app/admin/pending/view";
import { InboxList } from "@/components/InboxList";
import { Notice } from "@/components/Notice";
import { cache } from "react";
import { currentUser, hasRole, requireUser, REVIEW_ROLES, type SessionUser } from "@/lib/auth/session";
import { inboxPage } from "@/lib/inbox/inbox";
import { parseInboxParams, type InboxParams } from "@/lib/inbox/params";
import { listTools } from "@/lib/tools/catalog";

export const dynamic = "force-dynamic";

type Search = { searchParams: Promise<Record<string, string | string[] | undefined>> };

/** The tab's title carries the count waiting, "(3) Inbox"; the open page keeps it current (InboxList). */
export async function generateMetadata({ searchParams }: Search): Promise<Metadata> {
  const user = await currentUser();
  if (!user || !hasRole(user, REVIEW_ROLES)) return { title: "Inbox" };
  const page = await firstPage(user, JSON.stringify(parseInboxParams(await searchParams)));
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
  const params = parseInboxParams(await searchParams);
  const initial = await firstPage(user, JSON.stringify(params));
  const tools = listTools().map((t) => t.name);
  return <InboxList initial={initial} params={params} tools={tools} groups={user.groups} />;
}

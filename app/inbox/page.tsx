import type { Metadata } from "next";
import Link from "next/link";
import { InboxList } from "@/components/InboxList";
import { Notice } from "@/components/Notice";
import { hasRole, requireUser, REVIEW_ROLES } from "@/lib/auth/session";
import { inboxPage } from "@/lib/inbox/inbox";
import { parseInboxParams } from "@/lib/inbox/params";
import { listTools } from "@/lib/tools/catalog";

export const metadata: Metadata = { title: "Inbox" };
export const dynamic = "force-dynamic";

export default async function InboxPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await requireUser();
  if (!hasRole(user, REVIEW_ROLES)) {
    return (
      <Notice title="No inbox for this account">
        Approval requests go to reviewers in the approver groups. Your account ({user.role}) does not review requests.
        {user.role === "admin" && (
          <>
            {" "}
            See{" "}
            <Link href="/history" className="underline">
              History
            </Link>{" "}
            or the{" "}
            <Link href="/admin/policy" className="underline">
              admin console
            </Link>
            .
          </>
        )}
      </Notice>
    );
  }
  const params = parseInboxParams(await searchParams);
  const initial = await inboxPage(user, params, new Date());
  const tools = listTools().map((t) => t.name);
  return <InboxList initial={initial} params={params} tools={tools} groups={user.groups} />;
}

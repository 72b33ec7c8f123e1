import type { Metadata } from "next";
import { InboxList } from "@/components/InboxList";
import { Notice } from "@/components/Notice";
import { hasRole, requireUser, REVIEW_ROLES } from "@/lib/auth/session";
import { inboxFor } from "@/lib/inbox/queries";

export const metadata: Metadata = { title: "Inbox" };
export const dynamic = "force-dynamic";

export default async function InboxPage() {
  const user = await requireUser();
  if (!hasRole(user, REVIEW_ROLES)) {
    return (
      <Notice title="No inbox for this account">
        Approval requests go to reviewers in the approver groups. Your account ({user.role}) does not review requests.
      </Notice>
    );
  }
  const now = new Date();
  const items = await inboxFor(user, now);
  return <InboxList initial={{ now: now.toISOString(), items }} />;
}

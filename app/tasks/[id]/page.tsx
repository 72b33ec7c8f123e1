import { redirect } from "next/navigation";
import Link from "next/link";
import { Notice } from "@/components/Notice";
import { hasRole, requireUser, VIEW_ROLES } from "@/lib/auth/session";
import { requestIdForTask } from "@/lib/inbox/queries";

export const dynamic = "force-dynamic";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A link by task id (what an agent prints) to the approval request the task waits on. */
export default async function TaskLink({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireUser();
  const requestId = hasRole(user, VIEW_ROLES) && UUID.test(id) ? await requestIdForTask(id, user) : null;
  if (requestId) redirect(`/requests/${requestId}`);
  return (
    <Notice title="Task not found">
      It does not exist, or its approval request is addressed to a group you are not in.{" "}
      <Link href="/inbox" className="underline">
        Back to the inbox
      </Link>
    </Notice>
  );
}

import Link from "next/link";
import { Notice } from "@/components/Notice";

/** One answer (404, these words) for a task that does not exist and one whose request this reviewer may not see. */
export default function TaskNotFound() {
  return (
    <Notice title="Task not found">
      It does not exist, or its approval request is addressed to a group you are not in.{" "}
      <Link href="/inbox" className="underline">
        Back to the inbox
      </Link>
    </Notice>
  );
}

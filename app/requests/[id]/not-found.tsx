import Link from "next/link";
import { Notice } from "@/components/Notice";

/**
 * One answer (404, these words) for a request that does not exist and one this reviewer may not see, so ids
 * cannot be probed.
 */
export default function RequestNotFound() {
  return (
    <Notice title="Request not found">
      It does not exist, or it is addressed to a group you are not in.{" "}
      <Link href="/inbox" className="underline">
        Back to the inbox
      </Link>
    </Notice>
  );
}

import type { Metadata } from "next";
import Link from "next/link";
import { Notice } from "@/components/Notice";

export const metadata: Metadata = { title: "Page not found" };

/** Any route that does not exist: the app's own page, with the header, answered with 404. */
export default function NotFound() {
  return (
    <Notice title="Page not found">
      There is no page at this address.{" "}
      <Link href="/" className="underline">
        Go to Countersign
      </Link>
    </Notice>
  );
}

import path from "node:path";

/** The embedded database's folder (COUNTERSIGN_DATA_DIR, default .data/ under the project). */
export function dataDir(): string {
  return path.resolve(process.env.COUNTERSIGN_DATA_DIR ?? ".data");
}

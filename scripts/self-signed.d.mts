import type { Buffer } from "node:buffer";

/** A self-signed certificate's key and certificate, as bytes and as the files written. */
export interface SelfSignedCertificate {
  key: Buffer;
  cert: Buffer;
  keyFile: string;
  certFile: string;
}
/** A certificate for `name` in `dir`, `kind` "rsa" (2048 bits) or "ec" (P-256), valid for two days. */
export function selfSignedCertificate(dir: string, kind: "rsa" | "ec", name: string): SelfSignedCertificate;

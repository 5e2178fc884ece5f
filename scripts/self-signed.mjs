// @ts-self-types="./self-signed.d.mts"
/**
 * A fresh self-signed certificate made with `openssl req -x509`, for the scripts that record TLS traffic
 * (scripts/make-tls-fixtures.mjs, scripts/record-captures.ts, bench/capture_vs_tshark.ts).
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A certificate for `name` (its CN and DNS subjectAltName) in `dir`: `kind` "rsa" (2048 bits) or "ec" (P-256), valid
 * for two days. Returns the key and certificate, as bytes and as the files written.
 */
export function selfSignedCertificate(dir, kind, name) {
  const keyFile = join(dir, `${kind}.key`);
  const certFile = join(dir, `${kind}.crt`);
  const algorithm = kind === "rsa" ? ["rsa:2048"] : ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
  execFileSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    ...algorithm,
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "2",
    "-subj",
    `/CN=${name}`,
    "-addext",
    `subjectAltName=DNS:${name}`,
  ], { stdio: "ignore" });
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), keyFile, certFile };
}

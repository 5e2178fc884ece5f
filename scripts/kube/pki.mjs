// @ts-self-types="./pki.d.mts"
// A throwaway PKI for the cluster tests, made with the openssl command (Debian's; on these machines): a CA, a serving
// certificate for 127.0.0.1 and localhost, client certificates (CN = user, O = groups, as kube-apiserver reads them)
// and a service-account key pair. Nothing here is for production: keys are unencrypted, in the directory given.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

function openssl(args, cwd) {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

/** A key (EC P-256) and a certificate signed by the CA in `dir` (or self-signed when `name` is the CA). */
function certificate(dir, name, subject, extensions) {
  // PKCS#8, which every runtime's TLS reads.
  openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", `${name}.key`], dir);
  writeFileSync(join(dir, `${name}.ext`), extensions.join("\n") + "\n");
  if (name === "ca") {
    openssl([
      "req",
      "-x509",
      "-new",
      "-key",
      "ca.key",
      "-subj",
      subject,
      "-days",
      "30",
      "-out",
      "ca.crt",
      "-extensions",
      "v3",
      "-config",
      `${name}.ext`,
    ], dir);
    return;
  }
  openssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`], dir);
  openssl([
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "30",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ], dir);
}

/**
 * Makes the PKI in `dir`; `clients` maps a file name to its user and groups. Returns the files' paths.
 * @param {string} dir
 * @param {{ clients?: Record<string, { user: string, groups?: string[] }> }} [options]
 */
export function makePki(dir, options = {}) {
  mkdirSync(dir, { recursive: true });
  certificate(dir, "ca", "/CN=watchwire-test-ca", [
    "[v3]",
    "basicConstraints = critical, CA:true",
    "keyUsage = critical, keyCertSign, cRLSign, digitalSignature",
    "subjectKeyIdentifier = hash",
  ]);
  certificate(dir, "server", "/CN=kube-apiserver", [
    "basicConstraints = CA:false",
    "keyUsage = critical, digitalSignature, keyEncipherment",
    "extendedKeyUsage = serverAuth",
    "subjectAltName = IP:127.0.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default.svc",
  ]);
  const clients = {};
  for (const [name, { user, groups = [] }] of Object.entries(options.clients ?? {})) {
    const subject = `/CN=${user}` + groups.map((g) => `/O=${g}`).join("");
    certificate(dir, name, subject, [
      "basicConstraints = CA:false",
      "keyUsage = critical, digitalSignature, keyEncipherment",
      "extendedKeyUsage = clientAuth",
    ]);
    clients[name] = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  }
  openssl(["genrsa", "-out", "sa.key", "2048"], dir);
  openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
  return {
    ca: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    serverCert: join(dir, "server.crt"),
    serverKey: join(dir, "server.key"),
    serviceAccountKey: join(dir, "sa.key"),
    serviceAccountPub: join(dir, "sa.pub"),
    clients,
    /** A file's PEM text. */
    read: (/** @type {string} */ path) => readFileSync(path, "utf8"),
  };
}

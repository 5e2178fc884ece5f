/** The files of a test PKI. */
export interface Pki {
  ca: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  clients: Record<string, { cert: string; key: string }>;
  read(path: string): string;
}
/** Makes a CA, a serving certificate for 127.0.0.1 and localhost, client certificates and a service-account key pair. */
export function makePki(
  dir: string,
  options?: { clients?: Record<string, { user: string; groups?: string[] }> },
): Pki;

/**
 * {@linkcode openTlsFetch}: the fetch with a config's TLS in this runtime (undici in Node, Deno's HTTP client, Bun's
 * `tls` option), and {@linkcode requestFailure}: a failed request as a `ClusterAccessError` that says what failed.
 * Internal.
 *
 * @module
 */
import { ClusterAccessError } from "../errors.ts";
import { loadAdapter, type TlsFetch, type TlsSettings } from "./adapters.ts";
import type { RuntimeName } from "./runtime_name.ts";

/** The TLS fetch of `runtime` for `settings`; `web` has none (a caller's fetch is needed). */
export async function openTlsFetch(runtime: RuntimeName, settings: TlsSettings, source?: string): Promise<TlsFetch> {
  switch (runtime) {
    case "node":
      return (await loadAdapter("undici", source)).openTlsFetch(settings);
    case "bun":
      return (await loadAdapter("bun", source)).openTlsFetch(settings);
    case "deno":
      // Deno's own client cannot skip verification nor check another name; undici (through node:tls) can.
      if (settings.insecureSkipTlsVerify || settings.tlsServerName !== undefined) {
        return (await loadAdapter("undici", source)).openTlsFetch(settings);
      }
      return (await loadAdapter("deno", source)).openTlsFetch(settings);
    case "web":
      throw new ClusterAccessError(
        "UNSUPPORTED",
        "this runtime (not Node, Deno or Bun) has no way to set a CA, a client certificate, tls-server-name or " +
          "insecure-skip-tls-verify for fetch: pass connectCluster a fetch that does the cluster's TLS (options.fetch: " +
          "e.g. a Workers mTLS binding's fetch, or a fetch through a proxy)",
        { source },
      );
  }
}

/** The messages of an error and its causes, outermost first. */
function causes(error: unknown): string[] {
  const out: string[] = [];
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 6; depth++) {
    const { message, code, cause } = e as { message?: unknown; code?: unknown; cause?: unknown };
    const text = [typeof code === "string" ? code : "", typeof message === "string" ? message : String(e)]
      .filter((s) => s !== "").join(": ");
    if (text !== "" && !out.includes(text)) out.push(text);
    e = cause;
  }
  return out;
}

const CERTIFICATE_FAULT =
  /certificate|UnknownIssuer|self[- ]signed|CERT_|altname|NotValidForName|unable to verify|unable to get local issuer/i;

/**
 * The error for a fetch that threw: an abort stays as it is; a rejected server certificate is
 * `SERVER_CERTIFICATE_REJECTED` with what to check; anything else `REQUEST_FAILED`. Both name the method and URL.
 */
export function requestFailure(error: unknown, method: string, url: string, source?: string): unknown {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === "AbortError" || name === "TimeoutError" || error instanceof ClusterAccessError) return error;
  const chain = causes(error);
  const why = chain.join(" <- ");
  if (CERTIFICATE_FAULT.test(why)) {
    return new ClusterAccessError(
      "SERVER_CERTIFICATE_REJECTED",
      `${method} ${url}: the server's TLS certificate was rejected (${why}); check that the config's CA ` +
        "(certificate-authority-data) is the one that signed the server's certificate, and that the certificate " +
        "names the server's host (or tls-server-name)",
      { source, cause: error },
    );
  }
  return new ClusterAccessError("REQUEST_FAILED", `${method} ${url}: the request failed (${why})`, {
    source,
    cause: error,
  });
}

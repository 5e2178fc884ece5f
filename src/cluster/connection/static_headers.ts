/**
 * {@linkcode staticHeaders}: the headers of a config that do not change: basic auth and impersonation. Internal.
 *
 * @module
 */
import type { ClusterConfig } from "../cluster_config.ts";
import { ClusterAccessError } from "../errors.ts";

/** Base64 of a string's UTF-8 bytes (btoa alone takes Latin-1 only). */
export function base64Utf8(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * `Authorization: Basic` for `username`/`password`, and `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`
 * for `impersonate`. Throws `CONFIG_INVALID` for groups or a uid without a user (kube-apiserver refuses them) and
 * `IMPERSONATION_UNSUPPORTED` for more than one group: fetch's `Headers` joins repeated fields into one
 * (`a, b`), which kube-apiserver reads as one group named `a, b`.
 */
export function staticHeaders(config: ClusterConfig): [string, string][] {
  const headers: [string, string][] = [];
  if (config.username !== undefined) {
    headers.push(["authorization", `Basic ${base64Utf8(`${config.username}:${config.password ?? ""}`)}`]);
  }
  const as = config.impersonate;
  if (as === undefined) return headers;
  const groups = as.groups ?? [];
  if (as.user === undefined && (groups.length > 0 || as.uid !== undefined)) {
    throw new ClusterAccessError(
      "CONFIG_INVALID",
      "impersonation of groups or a uid needs a user to impersonate (kubeconfig's as)",
      { source: config.source },
    );
  }
  if (groups.length > 1) {
    throw new ClusterAccessError(
      "IMPERSONATION_UNSUPPORTED",
      `cannot impersonate ${groups.length} groups (${groups.join(", ")}): fetch joins repeated Impersonate-Group ` +
        "headers into one, which kube-apiserver reads as a single group; impersonate one group",
      { source: config.source },
    );
  }
  if (as.user !== undefined) headers.push(["impersonate-user", as.user]);
  for (const group of groups) headers.push(["impersonate-group", group]);
  if (as.uid !== undefined) headers.push(["impersonate-uid", as.uid]);
  return headers;
}

/**
 * {@linkcode Credentials}: what each request carries from a config: the headers (basic auth, a bearer token from the
 * config, its token file or its exec plugin, impersonation) and, from an exec plugin, a client certificate. Internal.
 *
 * Precedence, as client-go's: basic auth and a bearer token exclude each other; a token file, when it can be read,
 * wins over a token (which is then its fallback); an exec plugin's token is used only when the config has no token of
 * its own, its client certificate whenever it gives one.
 *
 * @module
 */
import type { ClusterConfig, ExecCredentialPlugin } from "../cluster_config.ts";
import { ClusterAccessError } from "../errors.ts";
import type { Host } from "../host.ts";
import type { ExecCredentialStatus } from "./exec_credential.ts";
import { ExecPlugin } from "./exec_plugin.ts";
import type { RuntimeName } from "./runtime_name.ts";
import { staticHeaders } from "./static_headers.ts";
import { TokenFile } from "./token_file.ts";

/** The credentials of one request. */
export interface RequestCredentials {
  headers: [string, string][];
  /** A client certificate and key (PEM) from the exec plugin, for the request's TLS. */
  clientCertificate?: { cert: string; key: string };
  /**
   * After a 401: renews what can be renewed (a token file read again, the exec plugin run again) and says whether
   * the request is worth sending again; absent if nothing can be renewed.
   */
  renew?: () => Promise<boolean>;
}

/** The credentials of a config. */
export class Credentials {
  readonly #config: ClusterConfig;
  readonly #static: [string, string][];
  readonly #tokenFile: TokenFile | undefined;
  readonly #exec: ExecPlugin | undefined;

  constructor(
    config: ClusterConfig,
    runtime: RuntimeName,
    now: () => number,
    host: () => Promise<Host>,
    tokenFileRereadMs: number,
  ) {
    const hasToken = config.token !== undefined || config.tokenFile !== undefined;
    if (config.username !== undefined && hasToken) {
      throw new ClusterAccessError(
        "CONFIG_INVALID",
        "the config has both basic auth (username/password) and a bearer token (token/tokenFile): keep one",
        { source: config.source },
      );
    }
    this.#config = config;
    this.#static = staticHeaders(config);
    if (config.tokenFile !== undefined) {
      this.#tokenFile = new TokenFile(config.tokenFile, host, now, tokenFileRereadMs, config.source);
    }
    if (config.exec !== undefined) {
      this.#exec = new ExecPlugin(config as ClusterConfig & { exec: ExecCredentialPlugin }, runtime, now);
    }
  }

  /** The credentials for the next request. */
  async current(): Promise<RequestCredentials> {
    const headers = [...this.#static];
    const out: RequestCredentials = { headers };
    let token: string | undefined;
    const tokenFile = this.#tokenFile;
    if (tokenFile !== undefined) {
      try {
        token = await tokenFile.token();
        out.renew = () => tokenFile.refresh(token!);
      } catch (e) {
        if (this.#config.token === undefined) throw e;
        token = this.#config.token;
      }
    } else {
      token = this.#config.token;
    }
    const exec = this.#exec;
    if (exec !== undefined) {
      const credential: ExecCredentialStatus = await exec.credential();
      if (credential.clientCertificateData !== undefined && credential.clientKeyData !== undefined) {
        out.clientCertificate = { cert: credential.clientCertificateData, key: credential.clientKeyData };
      }
      if (token === undefined && this.#config.username === undefined) {
        token = credential.token;
        out.renew = () => exec.refresh(credential);
      } else if (out.clientCertificate !== undefined) {
        out.renew ??= () => exec.refresh(credential);
      }
    }
    if (token !== undefined) headers.unshift(["authorization", `Bearer ${token}`]);
    return out;
  }
}

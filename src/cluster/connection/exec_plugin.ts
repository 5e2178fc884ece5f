/**
 * {@linkcode ExecPlugin}: runs an exec credential plugin and caches what it gives. Internal.
 *
 * The policy, as client-go's: the plugin runs on first use; its credential is kept until its `expirationTimestamp`
 * (the clock given; expired once `now() >= expiration`), or for as long as the connection lives if it has none; it runs
 * again at the first use after that, and after a 401 answered to a request that carried the credential in hand (a 401
 * to an older credential does not run it again). Concurrent uses share one run.
 *
 * @module
 */
import type { ClusterConfig, ExecCredentialPlugin } from "../cluster_config.ts";
import { ClusterAccessError } from "../errors.ts";
import { loadAdapter, type SpawnModule } from "./adapters.ts";
import { checkExecPlugin, type ExecCredentialStatus, execInfo, parseExecCredential } from "./exec_credential.ts";
import type { RuntimeName } from "./runtime_name.ts";

/** The last `max` characters of a plugin's standard error, for a message. */
function tail(bytes: Uint8Array, max = 2000): string {
  const text = new TextDecoder().decode(bytes).trim();
  return text.length <= max ? text : `...${text.slice(-max)}`;
}

/** An exec credential plugin and its credential in hand. */
export class ExecPlugin {
  readonly #plugin: ExecCredentialPlugin;
  readonly #config: ClusterConfig;
  readonly #runtime: RuntimeName;
  readonly #now: () => number;
  #credential: ExecCredentialStatus | undefined;
  #running: Promise<ExecCredentialStatus> | undefined;

  constructor(config: ClusterConfig & { exec: ExecCredentialPlugin }, runtime: RuntimeName, now: () => number) {
    checkExecPlugin(config.exec, config.source);
    this.#plugin = config.exec;
    this.#config = config;
    this.#runtime = runtime;
    this.#now = now;
  }

  /** The credential in hand, or a new one from the plugin if there is none or it expired. */
  credential(): Promise<ExecCredentialStatus> {
    const c = this.#credential;
    if (c !== undefined && (c.expiresAt === undefined || this.#now() < c.expiresAt)) return Promise.resolve(c);
    return this.#run();
  }

  /** After a 401 to a request that carried `used`: runs the plugin again if `used` is still the one in hand. */
  async refresh(used: ExecCredentialStatus): Promise<boolean> {
    if (this.#credential !== used) return true;
    this.#credential = undefined;
    await this.#run();
    return true;
  }

  #run(): Promise<ExecCredentialStatus> {
    this.#running ??= this.#runOnce().then((credential) => {
      this.#credential = credential;
      return credential;
    }).finally(() => this.#running = undefined);
    return this.#running;
  }

  async #runOnce(): Promise<ExecCredentialStatus> {
    const plugin = this.#plugin;
    const source = this.#config.source;
    const spawn = await this.#spawnModule();
    const env: Record<string, string> = {};
    for (const { name, value } of plugin.env ?? []) env[name] = value;
    env.KUBERNETES_EXEC_INFO = execInfo(plugin, this.#config);
    const args = plugin.args ?? [];
    let result;
    try {
      result = await spawn.runCommand(plugin.command, args, env);
    } catch (e) {
      const { code, name } = e as { code?: unknown; name?: unknown };
      if (code === "ENOENT" || name === "NotFound") {
        const hint = plugin.installHint === undefined ? "" : `\n\n${plugin.installHint.trim()}`;
        throw new ClusterAccessError(
          "EXEC_NOT_FOUND",
          `exec plugin: executable ${plugin.command} was not found${hint}`,
          { source, cause: e },
        );
      }
      throw new ClusterAccessError(
        "EXEC_FAILED",
        `exec plugin ${plugin.command} could not be started: ${(e as Error).message ?? String(e)}`,
        { source, cause: e },
      );
    }
    if (result.status !== 0) {
      const how = result.status === null ? `was killed by ${result.signal}` : `exited with status ${result.status}`;
      const stderr = tail(result.stderr);
      throw new ClusterAccessError(
        "EXEC_FAILED",
        `exec plugin ${[plugin.command, ...args].join(" ")} ${how}${stderr === "" ? "" : `: ${stderr}`}`,
        { source },
      );
    }
    return parseExecCredential(new TextDecoder().decode(result.stdout), plugin, source);
  }

  #spawnModule(): Promise<SpawnModule> {
    switch (this.#runtime) {
      case "deno":
        return loadAdapter("spawnDeno", this.#config.source);
      case "node":
      case "bun":
        return loadAdapter("spawnNode", this.#config.source);
      case "web":
        throw new ClusterAccessError(
          "UNSUPPORTED",
          `exec plugin ${this.#plugin.command}: this runtime (not Node, Deno or Bun) cannot run commands; give the ` +
            "config a token instead",
          { source: this.#config.source },
        );
    }
  }
}

// @ts-self-types="./browser.d.mts"
/**
 * A headless browser from Debian's packages (`chromium`, or `firefox-esr`), started on one URL with a profile of its
 * own, for scripts/browser-check.ts, scripts/browser-bench.ts and scripts/read-buffers.mjs. Browsers do not come from
 * npm (their npm packages download them from elsewhere, which this project's machines cannot reach), so none of these
 * is part of `npm test`. Also what their servers need to read what a page POSTs back.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

/** Whether `command` (a name or a path) is a Firefox. */
export function isFirefox(command) {
  return /firefox/i.test(command.split("/").pop() ?? "");
}

/** `--version` of `command`, or an Error saying how to install it. */
export function browserVersion(command) {
  const version = spawnSync(command, ["--version"], { encoding: "utf8" });
  if (version.status !== 0) {
    throw new Error(
      `${command} does not run (${version.error?.message ?? version.stderr}); on Debian: ` +
        `apt-get install ${isFirefox(command) ? "firefox-esr" : "chromium"}`,
    );
  }
  return version.stdout.trim();
}

function chromiumArgs(profile, url, options) {
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    ...(options.forBenchmarks ? ["--js-flags=--expose-gc"] : []),
    ...(options.acceptServerCertificate ? [`--ignore-certificate-errors-spki-list=${spkiHash(options)}`] : []),
    `--user-data-dir=${profile}`,
    url,
  ];
}

/**
 * Writes a fresh Firefox profile's prefs (`user.js`) that keep the first run quiet: no default-browser prompt, no
 * welcome or privacy-notice tab (which would open in place of the page), no telemetry or update checks (this machine
 * reaches no such service); and `more`.
 */
export function writeFirefoxPrefs(profile, more = {}) {
  const prefs = {
    "browser.shell.checkDefaultBrowser": false,
    "browser.aboutwelcome.enabled": false,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": false,
    "toolkit.telemetry.reportingpolicy.firstRun": false,
    "app.update.enabled": false,
    "app.normandy.enabled": false,
    ...more,
  };
  writeFileSync(
    join(profile, "user.js"),
    Object.entries(prefs).map(([name, value]) => `user_pref(${JSON.stringify(name)}, ${JSON.stringify(value)});\n`)
      .join(""),
  );
}

function firefoxArgs(profile, url, options) {
  writeFirefoxPrefs(profile, options.forBenchmarks ? { "privacy.reduceTimerPrecision": false } : {});
  if (options.acceptServerCertificate) writeCertificateOverride(profile, options.acceptServerCertificate);
  return ["--headless", "--no-remote", "--profile", profile, url];
}

/**
 * Chromium's `--ignore-certificate-errors-spki-list` value for `acceptServerCertificate`: the base64 SHA-256 of the
 * certificate's SubjectPublicKeyInfo. Chromium then accepts a chain with that key whatever else it lacks (an unknown
 * CA), and nothing more than it would otherwise.
 */
function spkiHash(options) {
  const spki = new X509Certificate(options.acceptServerCertificate.pem).publicKey.export({
    type: "spki",
    format: "der",
  });
  return createHash("sha256").update(spki).digest("base64");
}

/**
 * Firefox's certificate exception for `accept` (`{ host, port, pem }`) in a new profile: the line its "Add
 * Exception" writes to `cert_override.txt` (the host and port, the SHA-256 OID, the certificate's SHA-256 fingerprint).
 * Firefox then accepts that certificate, and no other, from that host and port, for pages, fetch and WebSockets alike.
 */
function writeCertificateOverride(profile, accept) {
  const fingerprint = new X509Certificate(accept.pem).fingerprint256;
  writeFileSync(
    join(profile, "cert_override.txt"),
    "# PSM Certificate Override Settings file\n# This is a generated file!  Do not edit.\n" +
      `${accept.host}:${accept.port}:\tOID.2.16.840.1.101.3.4.2.1\t${fingerprint}\t\t\n`,
  );
}

/** Starts `command` (chromium or firefox-esr, or a path to either) headless on `url`. */
export function startBrowser(command, url, options = {}) {
  const version = browserVersion(command);
  const profile = mkdtempSync(join(tmpdir(), "watchwire-browser-"));
  const args = isFirefox(command) ? firefoxArgs(profile, url, options) : chromiumArgs(profile, url, options);
  const browser = spawn(command, args, {
    stdio: ["ignore", "ignore", "pipe"],
    detached: true, // its own process group, ended whole by stop()
  });
  let log = "";
  browser.stderr.on("data", (chunk) => (log += chunk));
  const exited = new Promise((_, reject) => {
    browser.on("exit", (code) => reject(new Error(`${command} exited (${code}): ${log}`)));
  });
  exited.catch(() => {});
  return {
    version,
    log: () => log,
    exited,
    async stop() {
      browser.removeAllListeners("exit");
      // Its profile is removed once it and its helper processes have exited (they write there until then).
      if (browser.exitCode === null && browser.signalCode === null) {
        const gone = once(browser, "exit");
        process.kill(-browser.pid, "SIGTERM");
        await gone;
      }
      rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    },
  };
}

/** The text of a request's body: what a page in the browser POSTs back to the script's server. */
export function postedText(req) {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

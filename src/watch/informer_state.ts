/**
 * {@linkcode encodeInformerState} and {@linkcode decodeInformerState}: an informer's state ({@linkcode InformerState}:
 * its resourceVersion and objects) as compact bytes, to keep between runs of a short-lived program (an edge function,
 * a cron job, a CLI) and resume from: `new Informer(source, { resume: await decodeInformerState(bytes) })`.
 *
 * The bytes are `WWIS` and a version byte (1), then one msgpack value `{ resourceVersion, objects }` written by
 * msgpackr with records (each shape of object spelled out once), as the msgpack event streams write events, which
 * come out far smaller than their JSON for Pods (bench/RESULTS.md §9). Each object is kept as its JSON: lossless for
 * everything `JSON.parse` produces (`-0`, lone surrogates, `__proto__` keys), and a metadata-only object (a
 * `KubernetesProtobufObject`) as what `JSON.stringify` gives of it, `kind`, `apiVersion` and `metadata` (its protobuf
 * bytes are not kept: a resumed metadata informer holds plain objects). msgpackr loads on first use (see
 * `src/npm_package.ts`).
 *
 * @module
 */
import { DecodeError } from "../errors.ts";
import type { KubernetesObject } from "../events.ts";
import { fromWire, toWire } from "../codec/msgpack/json_values.ts";
import { msgpackrPackr, newPackr } from "../codec/msgpack/msgpack_event_writer.ts";
import { msgpackrUnpackr, newUnpackr } from "../codec/msgpack/unpackr.ts";
import type { InformerState } from "./informer.ts";

/** `WWIS` and the format version. */
const HEADER = Uint8Array.of(0x57, 0x57, 0x49, 0x53, 0x01);
const VERSION_AT = HEADER.length - 1;

/**
 * An informer's state as bytes (see the module's documentation for the format). Rejects with a `TypeError` if an
 * object is not a JSON value (a cycle, a `BigInt`).
 *
 * @example
 * ```ts
 * import { decodeInformerState, encodeInformerState, type InformerState } from "watchwire";
 *
 * const state: InformerState = {
 *   resourceVersion: "1234",
 *   objects: Array.from({ length: 50 }, (_, i) => ({
 *     kind: "ConfigMap",
 *     metadata: { namespace: "web", name: `cm-${i}`, resourceVersion: String(1000 + i) },
 *   })),
 * };
 * const bytes = await encodeInformerState(state);
 * console.log(bytes.length < JSON.stringify(state).length / 2); // true
 * const back = await decodeInformerState(bytes);
 * console.log(back.resourceVersion, back.objects.length, back.objects[49].metadata?.name); // 1234 50 cm-49
 * ```
 */
export async function encodeInformerState<T = KubernetesObject>(state: InformerState<T>): Promise<Uint8Array> {
  if (typeof state.resourceVersion !== "string") throw new TypeError("the state's resourceVersion is not a string");
  const msgpackr = await msgpackrPackr.load();
  const objects = state.objects.map((object) => {
    try {
      return toWire(object);
    } catch (error) {
      throw new TypeError(`an object of the state is not JSON: ${(error as Error).message}`, { cause: error });
    }
  });
  // Room kept before the value for the header: written in place, no copy.
  const packed = newPackr().pack(
    { resourceVersion: state.resourceVersion, objects },
    msgpackr.RESERVE_START_SPACE | HEADER.length,
  );
  packed.set(HEADER, 0);
  // A plain Uint8Array (msgpackr gives a Node Buffer where there is one) of bytes msgpackr never writes again.
  return new Uint8Array(packed.buffer, packed.byteOffset, packed.length);
}

/**
 * The state {@linkcode encodeInformerState} wrote. A `DecodeError` (`MESSAGE_INVALID`, or `TRUNCATED` for bytes cut
 * short) for anything else.
 *
 * @example
 * ```ts
 * import { decodeInformerState, DecodeError, encodeInformerState, Informer, type ListWatchSource } from "watchwire";
 *
 * const saved = await encodeInformerState({ resourceVersion: "7", objects: [{ metadata: { name: "x", resourceVersion: "7" } }] });
 * const source: ListWatchSource = {
 *   list: () => Promise.reject(new Error("not needed: resumed")),
 *   watch: async () => new ReadableStream({ start: (c) => c.close() }),
 * };
 * const informer = new Informer(source, { resume: await decodeInformerState(saved) });
 * console.log(informer.hasSynced, informer.resourceVersion, informer.store.keys()); // true 7 [ "x" ]
 *
 * try {
 *   await decodeInformerState(new TextEncoder().encode("{}"));
 * } catch (e) {
 *   console.log(e instanceof DecodeError && e.code); // MESSAGE_INVALID
 * }
 * ```
 */
export async function decodeInformerState<T = KubernetesObject>(bytes: Uint8Array): Promise<InformerState<T>> {
  for (let i = 0; i < HEADER.length; i++) {
    if (i >= bytes.length) throw new DecodeError("TRUNCATED", i, "input ended inside the header of an informer state");
    if (bytes[i] !== HEADER[i]) {
      const detail = i === VERSION_AT
        ? `informer state version ${bytes[i]} is not supported (only version ${HEADER[i]})`
        : "not an informer state (it starts WWIS and a version byte)";
      throw new DecodeError("MESSAGE_INVALID", i, detail);
    }
  }
  await msgpackrUnpackr.load();
  let value: unknown;
  try {
    value = fromWire(newUnpackr().unpack(bytes.subarray(HEADER.length)));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const code = /unexpected end|incomplete/i.test(reason) ? "TRUNCATED" : "MESSAGE_INVALID";
    throw new DecodeError(code, HEADER.length, `the informer state is not valid msgpack JSON: ${reason}`, {
      cause: error,
    });
  }
  const state = value as Partial<InformerState<unknown>> | null;
  if (
    typeof state !== "object" || state === null || typeof state.resourceVersion !== "string" ||
    !Array.isArray(state.objects) ||
    !state.objects.every((o) => typeof o === "object" && o !== null && !Array.isArray(o))
  ) {
    throw new DecodeError(
      "MESSAGE_INVALID",
      HEADER.length,
      "not an informer state: { resourceVersion, objects } expected",
    );
  }
  return { resourceVersion: state.resourceVersion, objects: state.objects as T[] };
}

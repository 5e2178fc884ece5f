/**
 * The types of {@linkcode decodeCapture}: its options and what it yields.
 *
 * @module
 */
import type { CaptureConnectionEvent, CaptureConnectionsOptions } from "../capture/capture_connections.ts";
import type { CaptureTime } from "../capture/records.ts";
import type { EtcdEvent } from "../codec/etcd/watch_response.ts";
import type { WatchEvent } from "../events.ts";
import type { DecodeWatchOptions } from "./decode_watch_response.ts";

/**
 * Options of {@linkcode decodeCapture}: the capture's (key log, limits) and the watch decoding's.
 *
 * @example
 * ```ts
 * import { builtinDecoders } from "watchwire/kubernetes";
 * import type { DecodeCaptureOptions } from "watchwire/capture";
 *
 * // A key log (SSLKEYLOGFILE's lines) for TLS, every built-in kind for protobuf watches, 1 MiB events at most.
 * const options: DecodeCaptureOptions = {
 *   keyLog: "CLIENT_RANDOM 00 00\n",
 *   protobuf: { decoders: builtinDecoders },
 *   maxEventBytes: 1 << 20,
 * };
 * console.log(Object.keys(options).length); // 3
 * ```
 */
export interface DecodeCaptureOptions extends CaptureConnectionsOptions, DecodeWatchOptions {
  /**
   * The decoders of a gRPC method's messages by its path (`/pkg.Service/Method`): its requests' and responses' messages
   * come as `grpc` items (etcd's Watch responses are decoded whatever this says, as `etcd` items).
   * `watchwire decode --proto FILE` makes it from the user's `.proto` files.
   */
  grpc?: (path: string) => GrpcMethodDecoders | undefined;
}

/**
 * The decoders of one gRPC method's messages (see {@linkcode DecodeCaptureOptions}`.grpc`): each takes a message's bytes
 * and the offset of its first byte in the body, and returns its value (e.g. its JSON mapping).
 *
 * @example
 * ```ts
 * import type { GrpcMethodDecoders } from "watchwire/capture";
 *
 * // Messages shown by size only.
 * const sizes: GrpcMethodDecoders = { request: (m) => m.length, response: (m) => m.length };
 * console.log(sizes.request?.(new Uint8Array(3), 5)); // 3
 * ```
 */
export interface GrpcMethodDecoders {
  readonly request?: (message: Uint8Array, offset: number) => unknown;
  readonly response?: (message: Uint8Array, offset: number) => unknown;
}

/**
 * Where an item of a capture comes from: a connection, and (for HTTP) its request.
 *
 * @example
 * ```ts
 * import type { CaptureOrigin } from "watchwire/capture";
 *
 * const origin: CaptureOrigin = { connection: 1, stream: 3, method: "GET", path: "/api/v1/pods?watch=1" };
 * console.log(`connection ${origin.connection}, stream ${origin.stream}: ${origin.method} ${origin.path}`); // connection 1, stream 3: GET /api/v1/pods?watch=1
 * ```
 */
export interface CaptureOrigin {
  /** The connection's number (from 1, in order of first sight). */
  readonly connection: number;
  /** HTTP/2: the stream id; HTTP/1.1: the response's index on its connection (from 0). */
  readonly stream: number;
  /** The request's method and path (target), when the capture holds them. */
  readonly method: string | undefined;
  readonly path: string | undefined;
}

/**
 * What {@linkcode decodeCapture} yields: for each connection, `connection` first, then (TLS) `tls`, its `response`s
 * each followed by its `event`s (or `etcd` events), a `gap` where bytes were lost and, if decoding goes on after it,
 * `resumed`, then any `problem` and its `close`; connections interleave as the capture does. `summary` comes last.
 *
 * @example
 * ```ts
 * import type { CaptureItem } from "watchwire/capture";
 *
 * function describe(item: CaptureItem): string {
 *   switch (item.kind) {
 *     case "event":
 *       return `${item.time.seconds}: connection ${item.connection} ${item.event.type}`;
 *     case "problem":
 *       return `problem: ${item.message}`;
 *     default:
 *       return item.kind;
 *   }
 * }
 * console.log(describe({ kind: "problem", connection: 2, message: "connection 2: TLS: no key" })); // problem: connection 2: TLS: no key
 * ```
 */
export type CaptureItem =
  /** A connection whose first bytes have been seen. */
  | {
    readonly kind: "connection";
    readonly connection: number;
    readonly client: string;
    readonly clientPort: number;
    readonly server: string;
    readonly serverPort: number;
    readonly transport: "tls" | "plain";
    readonly time: CaptureTime;
  }
  /** A TLS connection's handshake. */
  | {
    readonly kind: "tls";
    readonly connection: number;
    readonly version: string;
    readonly cipherSuite: string;
    readonly alpn: string | undefined;
    readonly serverName: string | undefined;
    readonly time: CaptureTime;
  }
  /** A response (and its request): HTTP/1.1 or HTTP/2. `watch`: whether its body is read as a watch. */
  | (CaptureOrigin & {
    readonly kind: "response";
    readonly http: "1.1" | "2";
    readonly status: number | undefined;
    readonly contentType: string | undefined;
    readonly watch: boolean;
    readonly time: CaptureTime;
  })
  /** A Kubernetes watch event (JSON, protobuf or CBOR; over HTTP or a WebSocket). */
  | (CaptureOrigin & { readonly kind: "event"; readonly event: WatchEvent<unknown>; readonly time: CaptureTime })
  /** A message of a gRPC call (its request's or its response's), decoded by `options.grpc`. */
  | (CaptureOrigin & {
    readonly kind: "grpc";
    readonly direction: "request" | "response";
    readonly message: unknown;
    readonly time: CaptureTime;
  })
  /** An etcd watch event (gRPC `etcdserverpb.Watch/Watch`). */
  | (CaptureOrigin & { readonly kind: "etcd"; readonly event: EtcdEvent; readonly time: CaptureTime })
  /**
   * Bytes lost from the capture: where they start in the direction's bytes (as captured: for TLS, the encrypted
   * bytes), and how many. It comes where the direction's decoding reached it (after what was decoded before it), or,
   * for a direction no decoding reached, after the connection's other items. A lost packet may show as adjacent gaps.
   */
  | {
    readonly kind: "gap";
    readonly connection: number;
    readonly direction: "client" | "server";
    readonly streamOffset: number;
    readonly length: number;
    readonly time: CaptureTime;
  }
  /**
   * Decoding went on after a gap. Without `stream`: the connection's bytes of `direction`, at the first TLS record
   * after the gap that decrypts (TLS), then at the first HTTP/2 frame or HTTP/1.1 chunk found; `skippedBytes` counts
   * the bytes not decoded, the gap's included (for TLS: the encrypted bytes up to that record, then the decrypted
   * bytes up to the frame or chunk). With `stream` (a watch, and its request's `path`): its events go on at the first
   * whole event after the gap (JSON: after the next newline; protobuf: at the next plausible frame); `skippedBytes`
   * counts the body's bytes dropped before it: the events in them, and the one the gap cut, are lost, and none is
   * decoded from bytes on both sides of a gap. A gap after which decoding does not go on is a `problem` saying so.
   */
  | {
    readonly kind: "resumed";
    readonly connection: number;
    readonly direction: "client" | "server";
    readonly stream: number | undefined;
    readonly path: string | undefined;
    readonly skippedBytes: number;
    readonly time: CaptureTime;
  }
  /**
   * A WebSocket message after a `101 Switching Protocols` that is not a watch event: the client's messages, and either
   * side's pings, pongs and close frame (`code` and `reason` for a close). Events of a watch over WebSocket come as
   * `event` items.
   */
  | (CaptureOrigin & {
    readonly kind: "websocket";
    readonly direction: "client" | "server";
    readonly message: "text" | "binary" | "ping" | "pong" | "close";
    readonly bytes: number;
    readonly code?: number;
    readonly reason?: string;
    readonly time: CaptureTime;
  })
  /** A connection that is neither HTTP/1.1 nor HTTP/2 (nor TLS carrying them): its bytes are skipped. */
  | { readonly kind: "unknown-protocol"; readonly connection: number }
  /** Something that stopped the decoding of a connection (or of one of its streams), for a person. */
  | { readonly kind: "problem"; readonly connection: number | undefined; readonly message: string }
  /** A connection's end. */
  | { readonly kind: "close"; readonly connection: number; readonly reason: string; readonly time: CaptureTime }
  /** The end of the capture: what was in it. */
  | (Extract<CaptureConnectionEvent, { kind: "summary" }> & {
    /** `resumed` items: how many times decoding went on after a gap. */
    readonly resumed: number;
    readonly responses: number;
    readonly events: number;
  });

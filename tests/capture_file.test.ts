/**
 * The capture-file reader (src/capture/file/): pcap and pcapng bytes, in any chunking, to packets and decryption
 * secrets. Real captures in fixtures/captures/ (file-*: made by tcpdump, dumpcap and editcap with
 * fixtures/captures/file-record.sh) must decode to what tshark read from them (their *.expected.json). Byte orders and
 * layouts no tool here writes (big-endian pcap, several sections, Simple and obsolete Packet Blocks, other timestamp
 * units, damage) are built by this test, from the real captures' packets where it says so.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import process from "node:process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { DecodeError } from "../src/errors.ts";
import type { CapturedPacket, CaptureRecord } from "../src/capture/records.ts";
import { CaptureFileDecoder, DEFAULT_MAX_RECORD_BYTES } from "../src/capture/file/capture_file_decoder.ts";
import { CaptureFileDecoderStream } from "../src/capture/file/capture_file_decoder_stream.ts";
import { TimestampUnits } from "../src/capture/file/timestamp_units.ts";
import { MAX_INTERFACES_PER_SECTION } from "../src/capture/file/pcapng_reader.ts";
import {
  assertSplitInvariant,
  bytewise,
  collectGarbage,
  concat,
  drain,
  endless,
  fromHex,
  splitAt,
  streamOf,
  within,
} from "./_util.ts";

const decode = (options: { maxRecordBytes?: number } = {}) => (source: ReadableStream<Uint8Array>) =>
  source.pipeThrough(new CaptureFileDecoderStream(options));

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** A record as plain, comparable JSON (its bytes in hex). */
function plain(record: CaptureRecord): Record<string, unknown> {
  return { ...record, data: hex(record.data) };
}
const plainAll = (records: CaptureRecord[]) => records.map(plain);
const packetsOf = (records: CaptureRecord[]) => records.filter((r): r is CapturedPacket => r.kind === "packet");

/** Decodes `chunks` with the decoder itself (no stream): the records, and the fault if any. */
function decodeChunks(chunks: Uint8Array[], options: { maxRecordBytes?: number } = {}) {
  const decoder = new CaptureFileDecoder(options);
  const records: CaptureRecord[] = [];
  try {
    for (const chunk of chunks) decoder.push(chunk, (r) => records.push(r));
    decoder.finish();
    return { records, error: undefined };
  } catch (error) {
    return { records, error };
  }
}

function assertFault(error: unknown, code: string, offset: number, message?: RegExp): void {
  assert.ok(error instanceof DecodeError, `expected a DecodeError, got ${error}`);
  assert.equal(error.code, code, error.message);
  assert.equal(error.offset, offset, error.message);
  if (message !== undefined) assert.match(error.message, message);
}

// ---- The real captures and what tshark read from them ----

const fixturePath = (name: string) => fileURLToPath(new URL(`../fixtures/captures/${name}`, import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(fixturePath(name)));

/** One frame as `tshark -r FILE -T json -x -j frame` printed it (see file-record.sh). */
interface TsharkFrame {
  time_epoch: string;
  len: number;
  cap_len: number;
  interface_id: number;
  raw: string;
}
const expectedFrames = (name: string): TsharkFrame[] =>
  JSON.parse(readFileSync(fixturePath(`${name}.expected.json`), "utf8"));

/** tshark's `frame.time_epoch` ("seconds.nanoseconds", 9 digits) as seconds and nanoseconds. */
function epoch(text: string): { seconds: number; nanoseconds: number } {
  const [s, ns] = text.split(".");
  assert.equal(ns.length, 9, text);
  return { seconds: Number(s), nanoseconds: Number(ns) };
}

/** Asserts that `packets` are, one for one, the frames tshark read. */
function assertTsharkFrames(packets: CapturedPacket[], frames: TsharkFrame[], what: string): void {
  assert.equal(packets.length, frames.length, `${what}: packet count`);
  packets.forEach((p, k) => {
    const f = frames[k];
    const at = `${what}, frame ${k + 1}`;
    assert.deepEqual({ seconds: p.seconds, nanoseconds: p.nanoseconds }, epoch(f.time_epoch), at);
    assert.equal(p.originalLength, f.len, at);
    assert.equal(p.data.length, f.cap_len, at);
    assert.equal(p.interfaceId, f.interface_id, at);
    assert.equal(hex(p.data), f.raw, at);
  });
}

const FIXTURES = [
  "file-http.pcap",
  "file-http-nano-snap.pcap",
  "file-http.pcapng",
  "file-http-micro.pcapng",
  "file-http-nano.pcapng",
  "file-http-two-interfaces.pcapng",
  "file-http-secrets.pcapng",
];

test("capture file: every real capture decodes to the frames tshark read (time, lengths, interface, bytes)", async () => {
  for (const name of FIXTURES) {
    const bytes = fixture(name);
    const { values, error } = await drain(decode()(streamOf([bytes])));
    assert.equal(error, undefined, name);
    const packets = packetsOf(values);
    assertTsharkFrames(packets, expectedFrames(name), name);
    // Link types: Ethernet on loopback; Linux cooked (113) on "any", interface 1 of the two-interface capture.
    for (const p of packets) assert.equal(p.linkType, p.interfaceId === 1 ? 113 : 1, name);
    // Each record is where its fileOffset says: the packet's bytes after its pcap record header or block head.
    const pcapng = name.endsWith(".pcapng");
    let last = -1;
    for (const r of values) {
      assert.ok(r.fileOffset > last, `${name}: offsets increase`);
      last = r.fileOffset;
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      if (pcapng) assert.equal(view.getUint32(r.fileOffset, true), r.kind === "packet" ? 6 : 10, name);
      const start = r.fileOffset + (!pcapng ? 16 : r.kind === "packet" ? 28 : 16);
      assert.deepEqual(r.data, bytes.subarray(start, start + r.data.length), name);
    }
  }
});

test("capture file: pcap timestamps in microseconds and nanoseconds, and snapshot-length cuts", () => {
  const micro = packetsOf(decodeChunks([fixture("file-http.pcap")]).records);
  assert.ok(micro.every((p) => p.nanoseconds % 1000 === 0), "microseconds: whole thousands of nanoseconds");
  const nano = packetsOf(decodeChunks([fixture("file-http-nano-snap.pcap")]).records);
  assert.ok(nano.some((p) => p.nanoseconds % 1000 !== 0), "nanoseconds kept");
  // tcpdump -s 80: the longer packets were cut, their original length kept.
  const cut = nano.filter((p) => p.data.length < p.originalLength);
  assert.ok(cut.length > 0);
  for (const p of cut) assert.equal(p.data.length, 80);
});

test("capture file: the Decryption Secrets Block editcap injected comes out as the key log it was given", () => {
  const { records, error } = decodeChunks([fixture("file-http-secrets.pcapng")]);
  assert.equal(error, undefined);
  const secrets = records.filter((r) => r.kind === "secrets");
  assert.equal(secrets.length, 1);
  assert.equal(records[0].kind, "secrets", "editcap writes it before the first packet");
  const [dsb] = secrets;
  assert.equal(dsb.kind === "secrets" && dsb.secretsType, 0x544c534b);
  assert.deepEqual(dsb.data, fixture("file-keylog.txt"));
  // The packets around it are those of the capture it was injected into.
  assert.deepEqual(
    packetsOf(records).map(plain).map(({ fileOffset: _, ...rest }) => rest),
    packetsOf(decodeChunks([fixture("file-http.pcapng")]).records).map(plain).map(({ fileOffset: _, ...rest }) => rest),
  );
});

test("capture file: any split of the real captures, down to single bytes, decodes the same", async () => {
  for (const name of FIXTURES) {
    const { values, error } = await assertSplitInvariant(fixture(name), decode(), { runs: 20, normalize: plainAll });
    assert.equal(error, undefined, name);
    assert.equal(packetsOf(values).length, expectedFrames(name).length, name);
  }
});

test("capture file: a record within one chunk is a view of it; one that spans chunks is a copy of exactly its size", () => {
  const bytes = fixture("file-http.pcap");
  const whole = decodeChunks([bytes]).records;
  for (const r of whole) assert.equal(r.data.buffer, bytes.buffer);
  // Cut inside the data of the third record, and inside the header of the fifth.
  const third = whole[2].fileOffset;
  const fifth = whole[4].fileOffset;
  const chunks = splitAt(bytes, [third + 16 + 5, fifth + 3]);
  const split = decodeChunks(chunks).records;
  assert.deepEqual(plainAll(split), plainAll(whole));
  split.forEach((r, k) => {
    if (k === 2) {
      assert.ok(!chunks.some((c) => c.buffer === r.data.buffer), "a copy");
      assert.equal(r.data.buffer.byteLength, r.data.length, "of exactly its size");
    } else {
      assert.ok(chunks.some((c) => c.buffer === r.data.buffer), `record ${k}: a view of its chunk`);
    }
  });
});

// ---- Bytes built by this test ----

type Field = number | Uint8Array | { u16: number } | { u64: bigint };

/** Fields one after another: a number is an unsigned 32-bit integer; in the byte order `little`. */
function pack(little: boolean, ...fields: Field[]): Uint8Array {
  const parts = fields.map((f) => {
    if (f instanceof Uint8Array) return f;
    const out = new Uint8Array(typeof f === "number" ? 4 : "u16" in f ? 2 : 8);
    const view = new DataView(out.buffer);
    if (typeof f === "number") view.setUint32(0, f, little);
    else if ("u16" in f) view.setUint16(0, f.u16, little);
    else view.setBigUint64(0, BigInt.asUintN(64, f.u64), little);
    return out;
  });
  return concat(parts);
}
const pad4 = (bytes: Uint8Array) => concat([bytes, new Uint8Array((4 - (bytes.length % 4)) % 4)]);

/** A pcap file header; `linkTypeField` is the whole 32-bit field (link type and the FCS bits above it). */
function pcapHeader(little: boolean, nanoseconds: boolean, snapLength: number, linkTypeField: number): Uint8Array {
  return pack(little, nanoseconds ? 0xa1b23c4d : 0xa1b2c3d4, { u16: 2 }, { u16: 4 }, 0, 0, snapLength, linkTypeField);
}
function pcapRecord(
  little: boolean,
  seconds: number,
  fraction: number,
  data: Uint8Array,
  originalLength = data.length,
) {
  return pack(little, seconds, fraction, data.length, originalLength, data);
}

const SHB = 0x0a0d0d0a;
const IDB = 1;
const PB = 2;
const SPB = 3;
const NRB = 4;
const ISB = 5;
const EPB = 6;
const DSB = 0xa;

/** A pcapng block: type, total length, the body padded to 4 bytes, total length again (`trailing` to lie there). */
function block(little: boolean, type: number, body: Uint8Array, trailing?: number): Uint8Array {
  const padded = pad4(body);
  const length = 12 + padded.length;
  return pack(little, type, length, padded, trailing ?? length);
}
function option(little: boolean, code: number, value: Uint8Array): Uint8Array {
  return pack(little, { u16: code }, { u16: value.length }, pad4(value));
}
const endOfOptions = (little: boolean) => pack(little, { u16: 0 }, { u16: 0 });
const shb = (little: boolean, major = 1) =>
  block(little, SHB, pack(little, 0x1a2b3c4d, { u16: major }, { u16: 0 }, { u64: -1n }));
function idb(little: boolean, linkType: number, snapLength: number, options: Uint8Array[] = []): Uint8Array {
  const opts = options.length === 0 ? new Uint8Array(0) : concat([...options, endOfOptions(little)]);
  return block(little, IDB, pack(little, { u16: linkType }, { u16: 0 }, snapLength, opts));
}
function epb(little: boolean, iface: number, ticks: bigint, data: Uint8Array, originalLength = data.length) {
  const t = BigInt.asUintN(64, ticks);
  return block(
    little,
    EPB,
    pack(little, iface, Number(t >> 32n), Number(t & 0xffffffffn), data.length, originalLength, data),
  );
}
function packetBlock(little: boolean, iface: number, ticks: bigint, data: Uint8Array, originalLength = data.length) {
  const t = BigInt.asUintN(64, ticks);
  const body = pack(little, { u16: iface }, { u16: 0 }, Number(t >> 32n), Number(t & 0xffffffffn), data.length);
  return block(little, PB, concat([body, pack(little, originalLength, data)]));
}
const spb = (little: boolean, originalLength: number, data: Uint8Array) =>
  block(little, SPB, pack(little, originalLength, data));
const dsb = (little: boolean, type: number, data: Uint8Array) =>
  block(little, DSB, pack(little, type, data.length, data));
/** A Name Resolution Block with one IPv4 record (skipped). */
const nrb = (little: boolean) =>
  block(
    little,
    NRB,
    concat([
      pack(little, { u16: 1 }, { u16: 9 }),
      pad4(Uint8Array.of(127, 0, 0, 1, 0x6c, 0x6f, 0x63, 0x61, 0)),
      pack(little, 0),
    ]),
  );
/** An Interface Statistics Block with no statistics (skipped). */
const isb = (little: boolean, iface: number) => block(little, ISB, pack(little, iface, 0, 0, endOfOptions(little)));
const tsresol = (little: boolean, value: number) => option(little, 9, Uint8Array.of(value));
const tsoffset = (little: boolean, seconds: bigint) => option(little, 14, pack(little, { u64: seconds }));

/** The packets tshark read from a real capture: time, original length and bytes, to build other files from. */
function realPackets(name: string) {
  return expectedFrames(name).map((f) => ({
    ...epoch(f.time_epoch),
    originalLength: f.len,
    data: fromHex(f.raw),
    interfaceId: f.interface_id,
  }));
}
const nsTicks = (p: { seconds: number; nanoseconds: number }) =>
  BigInt(p.seconds) * 1_000_000_000n + BigInt(p.nanoseconds);

// tshark 4.0.17 reads these big-endian files to the same frames as the little-endian ones tcpdump wrote (checked when
// the test was written).
test("capture file: big-endian pcap (built by this test from the real captures' packets), µs and ns", async () => {
  for (const [name, nanoseconds] of [["file-http.pcap", false], ["file-http-nano-snap.pcap", true]] as const) {
    const packets = realPackets(name);
    const records = packets.map((p) =>
      pcapRecord(false, p.seconds, nanoseconds ? p.nanoseconds : p.nanoseconds / 1000, p.data, p.originalLength)
    );
    // The FCS bits above the link type (here: "FCS present", 4 bytes) must not change it.
    const bytes = concat([
      pcapHeader(false, nanoseconds, nanoseconds ? 80 : 262144, 0x1000_0000 | (2 << 29) | 1),
      ...records,
    ]);
    const { values, error } = await assertSplitInvariant(bytes, decode(), { runs: 10, normalize: plainAll });
    assert.equal(error, undefined);
    assertTsharkFrames(packetsOf(values), expectedFrames(name), `big-endian ${name}`);
    for (const p of packetsOf(values)) assert.equal(p.linkType, 1);
    // The same records little-endian, as tcpdump wrote them: the same packets.
    const little = concat([
      pcapHeader(true, nanoseconds, 0, 1),
      ...packets.map((p) =>
        pcapRecord(true, p.seconds, nanoseconds ? p.nanoseconds : p.nanoseconds / 1000, p.data, p.originalLength)
      ),
    ]);
    assert.deepEqual(
      plainAll(decodeChunks([little]).records).map(({ fileOffset: _, ...r }) => r),
      plainAll(values).map(({ fileOffset: _, ...r }) => r),
    );
  }
});

test("capture file: pcap records longer than the snapshot length are delivered; fractions past a second carry", () => {
  const data = Uint8Array.from({ length: 50 }, (_, i) => i);
  const bytes = concat([
    pcapHeader(true, false, 10, 1),
    pcapRecord(true, 100, 2_500_000, data), // 2.5 s of microseconds: a writer's bug, carried into the seconds
    pcapRecord(true, 200, 999_999, data.subarray(0, 0), 60),
  ]);
  const { records, error } = decodeChunks([bytes]);
  assert.equal(error, undefined);
  assert.deepEqual(plainAll(records), [
    {
      kind: "packet",
      seconds: 102,
      nanoseconds: 500_000_000,
      interfaceId: 0,
      linkType: 1,
      data: hex(data),
      originalLength: 50,
      fileOffset: 24,
    },
    {
      kind: "packet",
      seconds: 200,
      nanoseconds: 999_999_000,
      interfaceId: 0,
      linkType: 1,
      data: "",
      originalLength: 60,
      fileOffset: 90,
    },
  ]);
  // A file header and no records is a capture of nothing.
  assert.deepEqual(decodeChunks([pcapHeader(false, true, 65535, 1)]), { records: [], error: undefined });
});

/**
 * A pcapng file built by this test from the real captures' packets: a little-endian section (nanosecond interface)
 * and a big-endian one (a microsecond interface with no if_tsresol, and a 2^-20 s interface 1000 s behind with
 * if_tsoffset), with blocks to skip and a Decryption Secrets Block between them. tshark 4.0.17 reads this file to the
 * same frames (checked when the test was written).
 */
function multiSection() {
  const nano = realPackets("file-http-nano-snap.pcap");
  const micro = realPackets("file-http.pcap");
  const cooked = realPackets("file-http-two-interfaces.pcapng").filter((p) => p.interfaceId === 1);
  const keyLog = new TextEncoder().encode("CLIENT_RANDOM 00 11\n");
  // 2^-20 s units, 1000 s behind: the real nanosecond times truncated to such units, then back to nanoseconds.
  const units = (p: { nanoseconds: number }) => (BigInt(p.nanoseconds) << 20n) / 1_000_000_000n;
  const blocks: Uint8Array[] = [
    shb(true),
    idb(true, 1, 80, [option(true, 2, new TextEncoder().encode("lo")), tsresol(true, 9)]),
    ...nano.slice(0, 6).map((p) => epb(true, 0, nsTicks(p), p.data, p.originalLength)),
    nrb(true),
    ...nano.slice(6).map((p) => epb(true, 0, nsTicks(p), p.data, p.originalLength)),
    isb(true, 0),
    shb(false),
    idb(false, 1, 0),
    idb(false, 113, 262144, [tsresol(false, 0x80 | 20), tsoffset(false, 1000n)]),
    dsb(false, 0x544c534b, keyLog),
    ...micro.flatMap((p, k) => [
      epb(false, 0, BigInt(p.seconds) * 1_000_000n + BigInt(p.nanoseconds / 1000), p.data, p.originalLength),
      ...(k < cooked.length
        ? [
          epb(
            false,
            1,
            (BigInt(cooked[k].seconds - 1000) << 20n) + units(cooked[k]),
            cooked[k].data,
            cooked[k].originalLength,
          ),
        ]
        : []),
    ]),
    isb(false, 1),
  ];
  const expected = [
    ...nano.map((p) => ({ ...p, interfaceId: 0, linkType: 1 })),
    ...micro.flatMap((p, k) => [
      { ...p, interfaceId: 0, linkType: 1 },
      ...(k < cooked.length
        ? [{
          ...cooked[k],
          nanoseconds: Number((units(cooked[k]) * 1_000_000_000n) >> 20n),
          interfaceId: 1,
          linkType: 113,
        }]
        : []),
    ]),
  ];
  return { bytes: concat(blocks), expected, keyLog };
}

test("capture file: several sections, each with its byte order and its interfaces (built from real packets)", async () => {
  const { bytes, expected, keyLog } = multiSection();
  const { values, error } = await assertSplitInvariant(bytes, decode(), { runs: 15, normalize: plainAll });
  assert.equal(error, undefined);
  const secrets = values.filter((r) => r.kind === "secrets");
  assert.equal(secrets.length, 1);
  assert.deepEqual(secrets[0].data, keyLog);
  const packets = packetsOf(values);
  assert.deepEqual(
    packets.map((p) => ({
      seconds: p.seconds,
      nanoseconds: p.nanoseconds,
      interfaceId: p.interfaceId,
      linkType: p.linkType,
      originalLength: p.originalLength,
      data: hex(p.data),
    })),
    expected.map((p) => ({
      seconds: p.seconds,
      nanoseconds: p.nanoseconds,
      interfaceId: p.interfaceId,
      linkType: p.linkType,
      originalLength: p.originalLength,
      data: hex(p.data),
    })),
  );
  // The secrets come between the sections' packets, where their block is.
  assert.equal(values.findIndex((r) => r.kind === "secrets"), 12);
});

test("capture file: Simple Packet Blocks (interface 0, no time, cut to the snapshot length), obsolete Packet Blocks", () => {
  for (const little of [true, false]) {
    const data = Uint8Array.from({ length: 30 }, (_, i) => 200 - i);
    const bytes = concat([
      shb(little),
      idb(little, 276, 20),
      idb(little, 1, 0, [tsresol(little, 3)]), // milliseconds
      spb(little, 30, data.subarray(0, 20)), // cut to the snapshot length of interface 0
      spb(little, 7, data.subarray(0, 7)),
      packetBlock(little, 1, 1_700_000_000_123n, data),
      packetBlock(little, 0, 5n, data.subarray(0, 3), 99),
      epb(little, 0, 6n, data), // more than the snapshot length of its interface: some writers do
    ]);
    const { records, error } = decodeChunks(bytesOrBytewise(bytes, little));
    assert.equal(error, undefined);
    assert.deepEqual(
      plainAll(records).map(({ fileOffset: _, ...r }) => r),
      [
        {
          kind: "packet",
          seconds: 0,
          nanoseconds: 0,
          interfaceId: 0,
          linkType: 276,
          data: hex(data.subarray(0, 20)),
          originalLength: 30,
        },
        {
          kind: "packet",
          seconds: 0,
          nanoseconds: 0,
          interfaceId: 0,
          linkType: 276,
          data: hex(data.subarray(0, 7)),
          originalLength: 7,
        },
        {
          kind: "packet",
          seconds: 1_700_000_000,
          nanoseconds: 123_000_000,
          interfaceId: 1,
          linkType: 1,
          data: hex(data),
          originalLength: 30,
        },
        {
          kind: "packet",
          seconds: 0,
          nanoseconds: 5_000,
          interfaceId: 0,
          linkType: 276,
          data: hex(data.subarray(0, 3)),
          originalLength: 99,
        },
        {
          kind: "packet",
          seconds: 0,
          nanoseconds: 6_000,
          interfaceId: 0,
          linkType: 276,
          data: hex(data),
          originalLength: 30,
        },
      ],
    );
  }
});

/** Whole for one byte order, byte by byte for the other. */
const bytesOrBytewise = (bytes: Uint8Array, whole: boolean) => (whole ? [bytes] : bytewise(bytes));

test("capture file: other blocks are skipped by their length, and their trailing length is checked too", () => {
  const little = true;
  const custom = block(little, 0x40000bad, pack(little, 32473, new Uint8Array(13).fill(7)));
  const unknown = block(little, 0x12345678, new Uint8Array(0));
  const packet = epb(little, 0, 1n, Uint8Array.of(1, 2, 3));
  const bytes = concat([shb(little), nrb(little), idb(little, 1, 0), custom, packet, unknown, isb(little, 0), packet]);
  const { records, error } = decodeChunks([bytes]);
  assert.equal(error, undefined);
  assert.equal(records.length, 2);
  // A skipped block whose trailing length lies.
  const bad = block(little, 0x40000bad, new Uint8Array(8), 24);
  const at = shb(little).length + idb(little, 1, 0).length + packet.length;
  for (
    const chunks of [
      [concat([shb(little), idb(little, 1, 0), packet, bad])],
      bytewise(concat([shb(little), idb(little, 1, 0), packet, bad])),
    ]
  ) {
    const result = decodeChunks(chunks);
    assert.equal(result.records.length, 1);
    assertFault(
      result.error,
      "CAPTURE_INVALID",
      at,
      /block of type 0x40000bad's trailing length 24 differs from its leading length 20/,
    );
  }
});

test("capture file: pcapng timestamps: if_tsresol (powers of 10 and 2), if_tsoffset, exact to the nanosecond", () => {
  const cases: [Uint8Array[], bigint, number, number][] = [
    [[], 1_700_000_000_123_456n, 1_700_000_000, 123_456_000], // no if_tsresol: microseconds
    [[tsresol(true, 9)], 0xffff_ffff_ffff_ffffn, 18_446_744_073, 709_551_615], // the largest count, exactly
    [[tsresol(true, 9)], 1_795_890_397_898_762_417n, 1_795_890_397, 898_762_417],
    [[tsresol(true, 0)], 42n, 42, 0],
    [[tsresol(true, 12)], 1_234_567_891_234_567_891n, 1_234_567, 891_234_567], // picoseconds, truncated to ns
    [[tsresol(true, 0x80 | 10)], 1025n, 1, 976_562], // 1/1024 s: 976562.5 ns, truncated
    [[tsresol(true, 0x80 | 32)], (1_700_000_000n << 32n) | 0x8000_0000n, 1_700_000_000, 500_000_000],
    [[tsresol(true, 6), tsoffset(true, 1_600_000_000n)], 100_000_001n, 1_600_000_100, 1_000],
    [[tsoffset(true, -10n)], 15_000_000n, 5, 0],
  ];
  for (const [options, ticks, seconds, nanoseconds] of cases) {
    const { records, error } = decodeChunks([
      concat([shb(true), idb(true, 1, 0, options), epb(true, 0, ticks, new Uint8Array(0))]),
    ]);
    assert.equal(error, undefined);
    const [p] = packetsOf(records);
    assert.deepEqual({ seconds: p.seconds, nanoseconds: p.nanoseconds }, { seconds, nanoseconds }, `${ticks}`);
  }
});

test("capture file: timestamp units convert any 64-bit count exactly as BigInt arithmetic does", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 0xffff_ffff_ffff_ffffn }),
      fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0x80, max: 0x80 | 63 })),
      fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
      (ticks, resolution, offset) => {
        const units = new TimestampUnits(resolution, offset);
        units.convert(Number(ticks >> 32n), Number(ticks & 0xffff_ffffn));
        let seconds: bigint;
        let nanoseconds: bigint;
        if (resolution & 0x80) {
          const perSecond = 1n << BigInt(resolution & 0x7f);
          seconds = ticks / perSecond;
          nanoseconds = ((ticks % perSecond) * 1_000_000_000n) / perSecond;
        } else {
          const perSecond = 10n ** BigInt(resolution);
          seconds = ticks / perSecond;
          nanoseconds = ((ticks % perSecond) * 1_000_000_000n) / perSecond;
        }
        assert.equal(units.seconds, Number(seconds) + offset);
        assert.equal(units.nanoseconds, Number(nanoseconds));
        assert.ok(units.nanoseconds >= 0 && units.nanoseconds < 1e9);
      },
    ),
    { numRuns: 2000 },
  );
});

// ---- Damage ----

/** A small valid pcapng file built by this test, and its blocks. */
function smallPcapng(little = true) {
  const blocks = [
    shb(little),
    idb(little, 1, 0, [tsresol(little, 9)]),
    epb(little, 0, 1n, Uint8Array.of(1, 2, 3, 4, 5)),
    dsb(little, 0x544c534b, new TextEncoder().encode("key")),
    epb(little, 0, 2n, Uint8Array.of(6, 7)),
  ];
  return { blocks, bytes: concat(blocks) };
}

test("capture file: bad magic names the bytes it starts with", async () => {
  const cases: [string, Uint8Array, RegExp][] = [
    [
      "text",
      new TextEncoder().encode("GET / HTTP/1.1\r\n"),
      /not a pcap or pcapng file: starts with 47 45 54 20 \("GET "\)/,
    ],
    ["gzip", Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0), /starts with 1f 8b 08 00 at byte 0/],
    ["modified pcap", Uint8Array.of(0x34, 0xcd, 0xb2, 0xa1, 2, 0, 4, 0), /starts with 34 cd b2 a1/],
  ];
  for (const [what, bytes, message] of cases) {
    const { values, error } = await assertSplitInvariant(bytes, decode(), { runs: 5, normalize: plainAll });
    assert.deepEqual(values, [], what);
    assertFault(error, "CAPTURE_INVALID", 0, message);
  }
  // Too short to tell, or empty: truncated.
  for (const bytes of [new Uint8Array(0), Uint8Array.of(0xd4, 0xc3, 0xb2)]) {
    const { error } = await drain(decode()(streamOf(bytes.length === 0 ? [] : [bytes])));
    assertFault(error, "TRUNCATED", 0, new RegExp(`magic number \\(${bytes.length} of 4 bytes\\)`));
  }
});

test("capture file: pcapng faults give their code and block offset, after every record before them", async () => {
  const { blocks } = smallPcapng();
  const [section, iface, first] = blocks;
  const good = concat([section, iface, first]);
  const at = good.length;
  const withLength = (b: Uint8Array, length: number) => {
    const out = b.slice();
    new DataView(out.buffer).setUint32(4, length, true);
    return out;
  };
  const cases: [string, Uint8Array, string, RegExp][] = [
    [
      "length not a multiple of 4",
      withLength(epb(true, 0, 1n, Uint8Array.of(1)), 34),
      "CAPTURE_INVALID",
      /length 34 is not a multiple of 4/,
    ],
    [
      "length under 12",
      withLength(block(true, 0x99, new Uint8Array(0)), 8),
      "CAPTURE_INVALID",
      /length 8 is not at least 12/,
    ],
    [
      "trailing length mismatch",
      block(true, EPB, pack(true, 0, 0, 0, 1, 1, Uint8Array.of(9)), 40),
      "CAPTURE_INVALID",
      /Enhanced Packet Block's trailing length 40 differs from its leading length 36/,
    ],
    [
      "EPB captured length overruns its block",
      block(true, EPB, pack(true, 0, 0, 0, 9, 9, Uint8Array.of(1, 2, 3, 4))),
      "CAPTURE_INVALID",
      /captured length 9 overruns the block \(36 bytes\)/,
    ],
    [
      "EPB shorter than its fields",
      block(true, EPB, pack(true, 0, 0, 0)),
      "CAPTURE_INVALID",
      /Enhanced Packet Block of 24 bytes is shorter than its fixed fields \(32 bytes\)/,
    ],
    [
      "packet for an interface not described",
      epb(true, 1, 0n, Uint8Array.of(1)),
      "CAPTURE_INVALID",
      /names interface 1, but the section has described only interface 0/,
    ],
    [
      "DSB secrets overrun",
      block(true, DSB, pack(true, 0x544c534b, 50, new Uint8Array(8))),
      "CAPTURE_INVALID",
      /secrets length 50 overruns the block/,
    ],
    [
      "SPB packet overruns",
      spb(true, 40, Uint8Array.of(1, 2)),
      "CAPTURE_INVALID",
      /Simple Packet Block's packet of 40 bytes overruns the block \(20 bytes\)/,
    ],
    [
      "IDB option overruns",
      block(true, IDB, pack(true, { u16: 1 }, { u16: 0 }, 0, { u16: 2 }, { u16: 40 }, Uint8Array.of(1, 2, 3, 4))),
      "CAPTURE_INVALID",
      /option 2 of 40 bytes overruns the block/,
    ],
    [
      "if_tsresol of 2 bytes",
      idb(true, 1, 0, [option(true, 9, Uint8Array.of(6, 0))]),
      "CAPTURE_INVALID",
      /if_tsresol is 2 bytes long, not 1/,
    ],
    [
      "SHB with a bad byte-order magic",
      block(true, SHB, pack(true, 0x1a2b3c4e, { u16: 1 }, { u16: 0 }, { u64: -1n })),
      "CAPTURE_INVALID",
      /byte-order magic is 0x1a2b3c4e/,
    ],
    ["SHB of version 2", shb(true, 2), "CAPTURE_INVALID", /pcapng version 2.0 is not supported/],
    [
      "block over maxRecordBytes",
      epb(true, 0, 0n, new Uint8Array(2000)),
      "MESSAGE_TOO_LARGE",
      /Enhanced Packet Block of 2032 bytes is over maxRecordBytes \(1000 bytes\)/,
    ],
    [
      "truncated block",
      epb(true, 0, 0n, new Uint8Array(20)).subarray(0, 40),
      "TRUNCATED",
      /input ended inside the Enhanced Packet Block \(40 of 52 bytes\)/,
    ],
    [
      "truncated head",
      epb(true, 0, 0n, new Uint8Array(20)).subarray(0, 6),
      "TRUNCATED",
      /inside the head of the pcapng block \(6 of 8 bytes\)/,
    ],
    [
      "truncated EPB head",
      epb(true, 0, 0n, new Uint8Array(20)).subarray(0, 20),
      "TRUNCATED",
      /inside the head of the Enhanced Packet Block \(20 of 28 bytes\)/,
    ],
  ];
  for (const [what, tail, code, message] of cases) {
    const bytes = concat([good, tail]);
    const { values, error } = await assertSplitInvariant(bytes, decode({ maxRecordBytes: 1000 }), {
      runs: 8,
      normalize: plainAll,
    });
    assert.deepEqual(plainAll(values), plainAll(decodeChunks([good]).records), what);
    assert.equal(values.length, 1, what);
    assertFault(error, code, at, message);
  }
});

test("capture file: a fault in a later section is placed in the whole file; a new section forgets the old interfaces", () => {
  const { bytes } = smallPcapng(true);
  const second = concat([shb(false), epb(false, 0, 0n, Uint8Array.of(1))]);
  const { records, error } = decodeChunks([concat([bytes, second])]);
  assert.equal(packetsOf(records).length, 2);
  assertFault(error, "CAPTURE_INVALID", bytes.length + shb(false).length, /described none/);
});

test("capture file: pcap faults: version, too large, truncated, with the records before delivered", () => {
  const data = new Uint8Array(100).fill(3);
  const head = pcapHeader(true, false, 65535, 1);
  const one = pcapRecord(true, 1, 2, data);
  const v1 = pack(true, 0xa1b2c3d4, { u16: 1 }, { u16: 0 }, 0, 0, 65535, 1);
  assertFault(decodeChunks([v1]).error, "CAPTURE_INVALID", 0, /pcap version 1.0 is not supported/);
  // Exactly maxRecordBytes (header and data) is accepted; one more is not.
  const exactly = decodeChunks([concat([head, one, one])], { maxRecordBytes: 116 });
  assert.equal(exactly.error, undefined);
  assert.equal(exactly.records.length, 2);
  const over = decodeChunks([concat([head, one, pcapRecord(true, 1, 2, concat([data, Uint8Array.of(1)]))])], {
    maxRecordBytes: 116,
  });
  assert.equal(over.records.length, 1);
  assertFault(
    over.error,
    "MESSAGE_TOO_LARGE",
    24 + 116,
    /pcap record of 117 bytes \(101 captured\) is over maxRecordBytes \(116 bytes\)/,
  );
  // A header that is cut.
  assertFault(
    decodeChunks([head.subarray(0, 10)]).error,
    "TRUNCATED",
    0,
    /head of the pcap file header \(10 of 24 bytes\)/,
  );
  assertFault(
    decodeChunks([concat([head, one.subarray(0, 9)])]).error,
    "TRUNCATED",
    24,
    /head of the pcap record \(9 of 16 bytes\)/,
  );
  assert.throws(() => new CaptureFileDecoder({ maxRecordBytes: -1 }), RangeError);
  assert.throws(() => new CaptureFileDecoderStream({ maxRecordBytes: 0.5 }), RangeError);
  assert.equal(DEFAULT_MAX_RECORD_BYTES, 16 * 1024 * 1024);
});

test("capture file: a file cut at any byte gives the records before the cut, then TRUNCATED at the record cut", () => {
  for (const name of ["file-http.pcap", "file-http-secrets.pcapng", "file-http-two-interfaces.pcapng"]) {
    const bytes = fixture(name);
    const all = decodeChunks([bytes]).records;
    // The units of the file: records and every other block, by their starts (pcapng blocks read from the file).
    const starts: number[] = [];
    if (name.endsWith(".pcap")) {
      starts.push(0, ...all.map((r) => r.fileOffset));
    } else {
      const view = new DataView(bytes.buffer, bytes.byteOffset);
      for (let at = 0; at < bytes.length; at += view.getUint32(at + 4, true)) starts.push(at);
    }
    for (let cut = 0; cut <= bytes.length; cut++) {
      const { records, error } = decodeChunks([bytes.subarray(0, cut)]);
      // A record is delivered when the unit after it starts at or before the cut.
      const before = all.filter((r) => (starts[starts.indexOf(r.fileOffset) + 1] ?? bytes.length) <= cut);
      assert.deepEqual(plainAll(records), plainAll(before), `${name} cut at ${cut}`);
      if ((cut > 0 && starts.includes(cut)) || cut === bytes.length) {
        assert.equal(error, undefined, `${name} cut at ${cut}`);
      } else {
        const unit = cut === 0 ? 0 : Math.max(...starts.filter((s) => s < cut));
        assertFault(error, "TRUNCATED", unit);
      }
    }
  }
});

test("capture file: a length over maxRecordBytes fails as soon as it is read, without waiting or allocating", async () => {
  const { bytes: pcapng } = smallPcapng();
  const pcap = concat([pcapHeader(true, true, 65535, 1), pcapRecord(true, 1, 2, Uint8Array.of(1))]);
  const cases: [Uint8Array, Uint8Array, RegExp][] = [
    // A pcap record announcing 4 GiB - 1 captured bytes; a pcapng block of 4 GiB - 4 bytes; an SHB of as much.
    [pcap, pack(true, 1, 2, 0xffff_ffff, 0xffff_ffff), /pcap record of 4294967311 bytes/],
    [pcapng, pack(true, EPB, 0xffff_fffc), /Enhanced Packet Block of 4294967292 bytes/],
    [pcapng, pack(true, SHB, 0xffff_fffc, 0x1a2b3c4d), /Section Header Block of 4294967292 bytes/],
    [pcapng, pack(true, 0x0bad, 0xffff_fffc), /block of type 0x00000bad of 4294967292 bytes/],
  ];
  for (const [before, head, message] of cases) {
    for (const chunks of [[before, head], [...bytewise(before), ...bytewise(head)]]) {
      // The stream never ends: the error must come from the length alone.
      const { values, error } = await within(drain(decode()(endless(chunks))), 2000);
      assert.equal(values.length, before === pcap ? 1 : 3);
      assertFault(error, "MESSAGE_TOO_LARGE", before.length, message);
    }
    // The push that completes the length throws: nothing after it could have allocated the record.
    const decoder = new CaptureFileDecoder();
    decoder.push(before, () => {});
    assert.throws(
      () => decoder.push(head, () => {}),
      (e) => e instanceof DecodeError && e.code === "MESSAGE_TOO_LARGE",
    );
  }
});

test("capture file: random damage to a capture decodes the same in every chunking, and only ever fails with DecodeError", async () => {
  const { bytes: multi } = multiSection();
  const sources = [fixture("file-http.pcap"), fixture("file-http-secrets.pcapng"), multi.subarray(0, 3000)];
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...sources),
      fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { minLength: 1, maxLength: 4 }),
      fc.nat(),
      async (source, edits, cut) => {
        const bytes = source.slice(0, source.length - (cut % 64));
        for (const [at, value] of edits) bytes[at % bytes.length] = value;
        const { error } = await assertSplitInvariant(bytes, decode({ maxRecordBytes: 4096 }), {
          runs: 3,
          normalize: plainAll,
        });
        assert.ok(error === undefined || error instanceof DecodeError, String(error));
      },
    ),
    { numRuns: 40 },
  );
});

test("capture file: too many interfaces in one section is refused (their table would grow without bound)", () => {
  const little = true;
  const one = idb(little, 1, 0);
  const bytes = concat([shb(little), ...Array.from({ length: MAX_INTERFACES_PER_SECTION + 1 }, () => one)]);
  const { error } = decodeChunks([bytes]);
  assertFault(
    error,
    "CAPTURE_INVALID",
    shb(little).length + MAX_INTERFACES_PER_SECTION * one.length,
    /more than 65536 interfaces/,
  );
});

// ---- Bounded memory ----

test("capture file: an endless stream of valid records runs in bounded memory (no growth with the count)", async () => {
  for (const format of ["pcap", "pcapng"] as const) {
    const data = Uint8Array.from({ length: 90 }, (_, i) => i);
    const head = format === "pcap" ? pcapHeader(true, false, 65535, 1) : concat([shb(true), idb(true, 1, 0)]);
    const record = format === "pcap" ? pcapRecord(true, 1, 2, data) : epb(true, 0, 7n, data);
    // 700 records, cut into chunks at odd places: most records are views, some span two chunks (copies).
    const period = concat(Array.from({ length: 700 }, () => record));
    const chunks = splitAt(period, [10_007, 30_011, 50_021]);
    let pulled = 0;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(pulled === 0 ? head : chunks[(pulled - 1) % chunks.length]);
        pulled++;
      },
    }, { highWaterMark: 0 });
    const reader = source.pipeThrough(new CaptureFileDecoderStream()).getReader();
    const heap: number[] = [];
    let count = 0;
    let lastOffset = -1;
    for (let round = 0; round < 6; round++) {
      for (let k = 0; k < 40_000; k++) {
        const { value } = await reader.read();
        assert.ok(value !== undefined && value.kind === "packet" && value.data.length === 90);
        assert.ok(value.fileOffset > lastOffset);
        lastOffset = value.fileOffset;
        count++;
      }
      collectGarbage();
      heap.push(process.memoryUsage().heapUsed);
    }
    await reader.cancel();
    assert.equal(count, 240_000);
    // 240,000 records (over 25 MB of file) went through: held, they would take far more than this.
    const growth = heap[heap.length - 1] - heap[1];
    assert.ok(growth < 8 * 1024 * 1024, `${format}: heap grew by ${growth} bytes (${heap.join(", ")})`);
  }
});

test("capture file: a reader that does not read holds the input back", async () => {
  let pulled = 0;
  const record = pcapRecord(true, 1, 2, new Uint8Array(1000));
  const source = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(pulled++ === 0 ? pcapHeader(true, false, 65535, 1) : concat([record, record, record]));
    },
  }, { highWaterMark: 0 });
  const reader = source.pipeThrough(new CaptureFileDecoderStream()).getReader();
  await reader.read();
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(pulled < 10, `pulled ${pulled} chunks while nobody read`);
  await reader.cancel();
});
